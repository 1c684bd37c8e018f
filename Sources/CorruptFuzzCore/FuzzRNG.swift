/// A small, fast, seedable random number generator (xoshiro256**), seeded through SplitMix64.
///
/// Every random choice corrupt-fuzz makes goes through this type, so a campaign is a pure
/// function of its seed and its corpus. `Int.random(in:)` and `shuffled()` without a
/// generator are never used.
public struct FuzzRNG: RandomNumberGenerator, Sendable, Hashable {
    // Visible to inlined code: `next()` is inlined where it is called (a dozen calls an input,
    // each a function call from another module otherwise).
    @usableFromInline var s0: UInt64
    @usableFromInline var s1: UInt64
    @usableFromInline var s2: UInt64
    @usableFromInline var s3: UInt64

    /// Creates a generator whose whole sequence is determined by `seed`.
    public init(seed: UInt64) {
        var sm = seed
        func splitMix() -> UInt64 {
            sm &+= 0x9E37_79B9_7F4A_7C15
            var z = sm
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix()
        s1 = splitMix()
        s2 = splitMix()
        s3 = splitMix()
    }

    @inlinable
    public mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = (s3 << 45) | (s3 >> 19)
        return result
    }

    /// Returns a uniform integer in `0..<bound`; `bound` must be positive.
    ///
    /// The high word of a random word times `bound` (Lemire's multiply-shift): the first draw
    /// of the standard library's `next(upperBound:)`, without the second draw it makes when the
    /// low word falls under `2^64 mod bound`, a chance of at most `bound / 2^64` (for the bounds
    /// a campaign draws, under one in 10^12). Each input draws a dozen; the rejection test cost
    /// more than the draw.
    @inlinable
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0, "bound must be positive")
        return Int(truncatingIfNeeded: next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// Returns an integer in `range` whose magnitude is uniform: a bit width is drawn first,
    /// then a value of that width, so 300...70_000 gives as many values under 1,000 as over
    /// 10,000 (a uniform draw would give over 10,000 six times in seven). For sizes: large
    /// inputs stay possible but cost what they find. `range` must not be negative.
    public mutating func logUniform(_ range: ClosedRange<Int>) -> Int {
        precondition(range.lowerBound >= 0, "range must not be negative")
        let lowWidth = Int.bitWidth - range.lowerBound.leadingZeroBitCount
        let highWidth = Int.bitWidth - range.upperBound.leadingZeroBitCount
        let width = lowWidth + below(highWidth - lowWidth + 1)
        let low = Swift.max(range.lowerBound, width == 0 ? 0 : 1 << (width - 1))
        let high = Swift.min(range.upperBound, width == 0 ? 0 : (1 << width) - 1)
        return low + below(high - low + 1)
    }

    /// Returns true with probability `1 / n`.
    @inlinable
    public mutating func oneIn(_ n: Int) -> Bool { below(n) == 0 }

    /// Derives an independent generator, e.g. one per seed file or per worker.
    public mutating func split() -> FuzzRNG { FuzzRNG(seed: next()) }
}
