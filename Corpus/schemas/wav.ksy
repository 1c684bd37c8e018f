# RIFF/WAVE audio, PCM header and chunk stream, written from the public RIFF and WAVE
# specifications (Microsoft/IBM "Multimedia Programming Interface and Data Specifications 1.0").
# Keys starting with "-" are corrupt-fuzz extensions.
meta:
  id: wav
  file-extension: wav
  endian: le
seq:
  - id: riff
    contents: RIFF
  - id: riff_size
    doc: size of everything after this field
    type: u4
  - id: body
    type: wave_body
    size: riff_size
types:
  wave_body:
    seq:
      - id: wave
        contents: WAVE
      - id: chunks
        type: chunk
        repeat: eos
  chunk:
    seq:
      - id: tag
        doc: four-character code, read big-endian ('fmt ' = 0x666d7420, 'data' = 0x64617461)
        type: u4be
      - id: len
        type: u4
      - id: body
        size: len
        type:
          switch-on: tag
          cases:
            0x666d7420: fmt_body
      - id: pad
        doc: chunks are aligned to 2 bytes
        size: len % 2
  fmt_body:
    seq:
      - id: format_tag
        doc: 1 = PCM, 3 = IEEE float
        type: u2
        valid:
          any-of: [1, 3]
      - id: channels
        type: u2
        valid: {min: 1, max: 8}
      - id: sample_rate
        type: u4
        valid: {min: 1, max: 384000}
      - id: byte_rate
        type: u4
      - id: block_align
        type: u2
        valid: {min: 1}
      - id: bits_per_sample
        type: u2
        valid:
          any-of: [8, 16, 24, 32]
          expr: block_align == channels * ((_ + 7) / 8) and byte_rate == sample_rate * block_align
