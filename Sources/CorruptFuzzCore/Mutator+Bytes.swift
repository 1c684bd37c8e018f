// MARK: - Byte-level mutators

extension Mutator {
    /// The byte-level mutators a file fuzzer stacks in its havoc stage.
    public static let byteLevel: [Mutator] = [
        .bitFlip, .byteFlip, .randomByte, .arithmetic, .interestingInteger,
        .insertBytes, .deleteRange, .duplicateRange, .copyRange, .truncate, .splice,
    ]

    /// Flips one bit.
    public static let bitFlip = Mutator(
        name: "bit-flip",
        step: { bytes, rng, _ in
            guard !bytes.isEmpty else { return nil }
            let at = rng.below(bytes.count), bit = rng.below(8)
            bytes[at] ^= UInt8(1) << bit
            return .bitFlip(at: at, bit: bit)
        })

    /// Inverts 1, 2 or 4 consecutive bytes.
    public static let byteFlip = Mutator(
        name: "byte-flip",
        step: { bytes, rng, _ in
            guard !bytes.isEmpty else { return nil }
            let width = min([1, 2, 4][rng.below(3)], bytes.count)
            let at = rng.below(bytes.count - width + 1)
            for i in at..<(at + width) { bytes[i] ^= 0xFF }
            return .byteFlip(width: width, at: at)
        })

    /// Sets one byte to a random value.
    public static let randomByte = Mutator(
        name: "random-byte",
        step: { bytes, rng, _ in
            guard !bytes.isEmpty else { return nil }
            let at = rng.below(bytes.count)
            bytes[at] ^= UInt8(1 + rng.below(255))
            return .randomByte(at: at)
        })

    /// Adds or subtracts a small number to an integer of width 1, 2 or 4, in either byte order.
    public static let arithmetic = Mutator(
        name: "arithmetic",
        step: { bytes, rng, _ in
            let width = [1, 2, 4, 8][rng.below(4)]
            guard bytes.count >= width else { return nil }
            let at = rng.below(bytes.count - width + 1)
            let bigEndian = rng.oneIn(2)
            let delta = UInt64(1 + rng.below(35))
            let value = IntegerField.read(bytes, at: at, width: width, bigEndian: bigEndian)
            let add = rng.oneIn(2)
            IntegerField.write(&bytes, at: at, width: width, bigEndian: bigEndian, value: add ? value &+ delta : value &- delta)
            return .arithmetic(width: width, bigEndian: bigEndian, add: add, delta: Int(delta), at: at)
        })

    /// Overwrites an integer of width 1, 2, 4 or 8, in either byte order, with a boundary value:
    /// 0, 1, -1, the signed minimum and maximum, powers of two, or a length ± 1.
    public static let interestingInteger = Mutator(
        name: "interesting-int",
        step: { bytes, rng, _ in
            let width = [1, 2, 4, 8][rng.below(4)]
            guard bytes.count >= width else { return nil }
            let at = rng.below(bytes.count - width + 1)
            let bigEndian = rng.oneIn(2)
            let label = IntegerField.Interesting(index: rng.below(IntegerField.Interesting.count))
            IntegerField.write(&bytes, at: at, width: width, bigEndian: bigEndian, value: label.value(width: width, length: bytes.count, offset: at))
            return .interestingInteger(width: width, bigEndian: bigEndian, label: label, at: at)
        })

    /// Inserts 1 to 32 bytes (random, or one repeated byte) at a random position.
    public static let insertBytes = Mutator(
        name: "insert",
        step: { bytes, rng, context in
            let count = 1 + rng.below(32)
            guard bytes.count + count <= context.maxLength else { return nil }
            let at = rng.below(bytes.count + 1)
            let repeated = rng.oneIn(2)
            let fill = UInt8(truncatingIfNeeded: rng.next())
            // Room made in place, then filled: no array of the new bytes.
            bytes.insert(contentsOf: repeatElement(fill, count: count), at: at)
            if !repeated {
                bytes.withUnsafeMutableBufferPointer { buffer in
                    for index in at..<(at + count) { buffer[index] = UInt8(truncatingIfNeeded: rng.next()) }
                }
            }
            return .insert(count: count, at: at)
        })

    /// Deletes a range of up to a quarter of the input (at least one byte).
    public static let deleteRange = Mutator(
        name: "delete",
        step: { bytes, rng, _ in
            guard bytes.count >= 2 else { return nil }
            let count = 1 + rng.below(max(1, bytes.count / 4))
            let at = rng.below(bytes.count - count + 1)
            bytes.removeSubrange(at..<(at + count))
            return .delete(count: count, at: at)
        })

    /// Duplicates a range in place, so a field or a record appears twice.
    public static let duplicateRange = Mutator(
        name: "duplicate",
        step: { bytes, rng, context in
            guard !bytes.isEmpty else { return nil }
            let count = 1 + rng.below(min(bytes.count, 64))
            guard bytes.count + count <= context.maxLength else { return nil }
            let at = rng.below(bytes.count - count + 1)
            // Room after the range, then the range copied into it (inserting a slice of the
            // array itself copied the whole array first).
            bytes.insert(contentsOf: repeatElement(0, count: count), at: at + count)
            bytes.withUnsafeMutableBytes { buffer in
                guard let base = buffer.baseAddress else { return }
                (base + at + count).copyMemory(from: base + at, byteCount: count)
            }
            return .duplicate(count: count, at: at)
        })

    /// Copies a range over another place in the same input.
    public static let copyRange = Mutator(
        name: "copy",
        step: { bytes, rng, _ in
            guard bytes.count >= 2 else { return nil }
            let count = 1 + rng.below(min(bytes.count / 2, 64))
            let from = rng.below(bytes.count - count + 1)
            let to = rng.below(bytes.count - count + 1)
            // In place; the ranges may overlap (copyMemory moves as memmove does).
            bytes.withUnsafeMutableBytes { buffer in
                guard let base = buffer.baseAddress else { return }
                (base + to).copyMemory(from: base + from, byteCount: count)
            }
            return .copy(count: count, from: from, to: to)
        })

    /// Cuts the input at a random length, as a write that was interrupted does.
    public static let truncate = Mutator(
        name: "truncate",
        step: { bytes, rng, _ in
            guard !bytes.isEmpty else { return nil }
            let length = rng.below(bytes.count)
            bytes.removeSubrange(length...)
            return .truncate(length: length)
        })

    /// Joins a prefix of the input with a suffix of another corpus file.
    public static let splice = Mutator(
        name: "splice",
        step: { bytes, rng, context in
            guard let partner = context.partner, !partner.isEmpty, !bytes.isEmpty, partner != bytes else { return nil }
            let cut = rng.below(bytes.count)
            let from = rng.below(partner.count)
            let tail = partner[from...].prefix(max(0, context.maxLength - cut))
            bytes.replaceSubrange(cut..., with: tail)
            return .splice(cut: cut, from: from)
        })
}

// MARK: - Integer fields

/// Reads and writes unsigned integers of width 1, 2, 4 or 8 in either byte order.
public enum IntegerField {
    @inlinable
    public static func read(_ bytes: [UInt8], at offset: Int, width: Int, bigEndian: Bool) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<width {
            let byte = UInt64(bytes[offset + (bigEndian ? i : width - 1 - i)])
            value = value << 8 | byte
        }
        return value
    }

    @inlinable
    public static func write(_ bytes: inout [UInt8], at offset: Int, width: Int, bigEndian: Bool, value: UInt64) {
        for i in 0..<width {
            let byte = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))
            bytes[offset + (bigEndian ? width - 1 - i : i)] = byte
        }
    }

    /// Boundary values for a field of `width` bytes at `offset` in an input of `length` bytes.
    public static func interestingValues(width: Int, length: Int, offset: Int) -> [(String, UInt64)] {
        (0..<Interesting.count).map { index in
            let label = Interesting(index: index)
            return (label.name, label.value(width: width, length: length, offset: offset))
        }
    }

    /// One of the boundary values, by its place in the list: 0, 1, -1, the signed minimum and
    /// maximum, powers of two, a length ± 1 and the bytes left ± 1. The havoc stage draws one
    /// for every `interesting-int` mutation, so nothing is built until it is named.
    public struct Interesting: Sendable, Hashable {
        public let index: Int
        public static let count = fixedNames.count + 6

        private static let fixedNames = [
            "0", "1", "-1", "min", "max", "min+1", "max-1", "umax-1", "16", "32", "64", "100", "127", "128",
            "255", "256", "512", "1000", "1024", "4096", "32767", "32768", "65535", "65536",
        ]
        private static let relativeNames = ["len-1", "len", "len+1", "rest-1", "rest", "rest+1"]
        private static let fixedValues: [UInt64] = [
            16, 32, 64, 100, 127, 128, 255, 256, 512, 1000, 1024, 4096, 32767, 32768, 65535, 65536,
        ]

        public init(index: Int) { self.index = index }

        /// `min+1`, `len-1`.
        public var name: String {
            index < Self.fixedNames.count ? Self.fixedNames[index] : Self.relativeNames[index - Self.fixedNames.count]
        }

        /// The value for a field of `width` bytes at `offset` in an input of `length` bytes.
        public func value(width: Int, length: Int, offset: Int) -> UInt64 {
            let bits = UInt64(width * 8)
            let mask: UInt64 = bits == 64 ? .max : (1 << bits) - 1
            let signedMin: UInt64 = 1 << (bits - 1)
            let value: UInt64
            switch index {
            case 0: value = 0
            case 1: value = 1
            case 2: value = mask
            case 3: value = signedMin
            case 4: value = signedMin - 1
            case 5: value = signedMin + 1
            case 6: value = signedMin - 2
            case 7: value = mask - 1
            case 8..<Self.fixedNames.count: value = Self.fixedValues[index - 8]
            default:
                let relative = index - Self.fixedNames.count
                let base = relative < 3 ? UInt64(length) : UInt64(length - offset - width)
                switch relative % 3 {
                case 0: value = base &- 1
                case 1: value = base
                default: value = base &+ 1
                }
            }
            return value & mask
        }
    }
}
