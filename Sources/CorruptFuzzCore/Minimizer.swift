/// Shrinks an input while a predicate keeps holding, by delta debugging over bytes (ddmin).
///
/// The predicate is "this input still shows the same finding kind and signature". Each call
/// runs the loader, so the minimizer caches answers and stops after a budget of calls.
public struct Minimizer: Sendable {
    /// The most predicate calls one minimization may make.
    public var maxTests: Int

    public init(maxTests: Int = 400) {
        self.maxTests = maxTests
    }

    /// The result of a minimization.
    public struct Result: Sendable {
        public var bytes: [UInt8]
        /// How many times the predicate ran.
        public var tests: Int
        /// Whether the budget ran out before a 1-minimal input was reached.
        public var exhausted: Bool
    }

    /// Returns the smallest input it finds for which `stillFails` holds.
    /// - Parameters:
    ///   - input: An input for which `stillFails` holds.
    ///   - stillFails: Runs the loader and tells whether the finding is still there, or
    ///     returns nil to stop early (a deadline passed, the user pressed Ctrl-C).
    ///   - structure: Structurally smaller variants of an input (see
    ///     ``StructureAwareMutator/shrinkCandidates(of:)``), tried greedily before bytes are cut.
    public func minimize(
        _ input: [UInt8], structure: (([UInt8]) -> [[UInt8]])? = nil, while stillFails: ([UInt8]) -> Bool?
    ) -> Result {
        var tests = 0
        var seen: Set<[UInt8]> = [input]
        func check(_ candidate: [UInt8]) -> Bool? {
            guard tests < maxTests else { return nil }
            guard seen.insert(candidate).inserted else { return false }
            tests += 1
            return stillFails(candidate)
        }

        var current = input
        // Structure first: removing a whole record keeps the rest of the file consistent,
        // where cutting bytes would break a length or a checksum and lose the finding.
        if let structure {
            var shrunk = true
            while shrunk {
                shrunk = false
                for candidate in structure(current) where candidate.count < current.count {
                    switch check(candidate) {
                    case true?:
                        current = candidate
                        shrunk = true
                    case false?:
                        continue
                    case nil:
                        return Result(bytes: current, tests: tests, exhausted: true)
                    }
                    break
                }
            }
        }
        // Cheap first pass: cut the tail in halving steps, since truncations are common findings.
        var cut = current.count / 2
        while cut > 0, !current.isEmpty {
            // After a successful cut, what is left may be shorter than the next cut.
            cut = min(cut, current.count)
            let candidate = Array(current.prefix(current.count - cut))
            switch check(candidate) {
            case true?: current = candidate
            case false?: cut /= 2
            case nil: return Result(bytes: current, tests: tests, exhausted: true)
            }
        }

        // ddmin: try removing each of n chunks; on success restart coarser, else refine.
        var n = 2
        while current.count >= 2 {
            let chunk = (current.count + n - 1) / n
            var reduced = false
            var start = 0
            while start < current.count {
                let end = min(start + chunk, current.count)
                var candidate = current
                candidate.removeSubrange(start..<end)
                switch check(candidate) {
                case true?:
                    current = candidate
                    n = max(n - 1, 2)
                    reduced = true
                case false?:
                    start = end
                case nil:
                    return Result(bytes: current, tests: tests, exhausted: true)
                }
                if reduced { break }
            }
            if !reduced {
                if n >= current.count { break }
                n = min(n * 2, current.count)
            }
        }
        if current.count == 1 {
            switch check([]) {
            case true?: current = []
            case false?: break
            case nil: return Result(bytes: current, tests: tests, exhausted: true)
            }
        }
        return Result(bytes: current, tests: tests, exhausted: false)
    }
}
