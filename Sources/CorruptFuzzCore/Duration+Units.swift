extension Duration {
    /// The duration in seconds, as a Double.
    package var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// The duration in whole milliseconds (rounded down).
    package var milliseconds: Int64 { components.seconds &* 1000 &+ components.attoseconds / 1_000_000_000_000_000 }

    /// The duration in whole microseconds (rounded down).
    package var microseconds: Int64 { components.seconds &* 1_000_000 &+ components.attoseconds / 1_000_000_000_000 }
}

/// 64-bit FNV-1a, for hashes that are written down (file names in a regression store, a run's
/// input-sequence hash): the same on every machine and every run, unlike `Hasher`.
package struct FNV1a {
    package static let offset: UInt64 = 0xcbf2_9ce4_8422_2325
    package static let prime: UInt64 = 0x100_0000_01b3

    package private(set) var value: UInt64

    @inlinable package init(_ value: UInt64 = FNV1a.offset) { self.value = value }

    @inlinable @inline(__always) package static func add(_ byte: UInt8, to hash: UInt64) -> UInt64 { (hash ^ UInt64(byte)) &* prime }

    @inlinable package mutating func add<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        for byte in bytes { value = Self.add(byte, to: value) }
    }
}
