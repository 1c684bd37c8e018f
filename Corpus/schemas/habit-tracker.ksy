# The demo's habit-tracker file (a fitness app's user data), in Kaitai Struct YAML.
# Keys starting with "-" are corrupt-fuzz extensions (see Docs/Formats.md, "Binary formats from a schema").
meta:
  id: habit_tracker
  file-extension: habits
  endian: le
seq:
  - id: magic
    contents: HBTS
  - id: version
    type: u2
    valid: {min: 1}
    -version: {current: 1}
  - id: num_habits
    type: u4
    valid: {max: 10000}
  - id: habits
    type: habit
    repeat: expr
    repeat-expr: num_habits
  - id: crc32
    type: u4
    -checksum: {algorithm: crc32, from: magic}
types:
  habit:
    seq:
      - id: name_len
        type: u2
        valid: {min: 1, max: 256}
      - id: name
        type: str
        size: name_len
        encoding: UTF-8
      - id: num_dates
        type: u4
        valid: {max: 100000}
      - id: dates
        doc: day numbers since 1970-01-01
        type: s4
        repeat: expr
        repeat-expr: num_dates
        valid: {min: 0, max: 73048}
        -order: strictly-increasing
