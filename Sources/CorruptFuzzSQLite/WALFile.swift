/// A SQLite write-ahead log read as the file format describes it (section 4 of "Database File
/// Format"): a 32-byte header (magic, format version, page size, checkpoint sequence, two salts,
/// a checksum) and frames of a 24-byte header (page number, database size after commit or 0,
/// the salts, a cumulative checksum) plus one page.
///
/// SQLite reads frames from the first until one fails: its salts differ from the header's, its
/// page number is 0, or its checksum (which chains from the header through every frame) does
/// not match. Everything from there on is ignored without an error, committed transactions
/// included: that is how a torn write of the last transaction is rolled back, and also why a
/// flipped bit in an early frame silently drops every later commit.
public struct WALFile: Sendable, Hashable {
    public static let headerSize = 32
    public static let frameHeaderSize = 24
    /// The format version SQLite writes and accepts (3.7.0).
    public static let formatVersion: UInt32 = 3_007_000

    public var bytes: [UInt8]
    /// The main database's page size, for reading frames when the log header's is broken.
    public var databasePageSize: Int?

    public init(_ bytes: [UInt8], databasePageSize: Int? = nil) {
        self.bytes = bytes
        self.databasePageSize = databasePageSize
    }

    // MARK: - Fields

    public var magic: UInt32 { word(0) }
    public var version: UInt32 { word(4) }
    public var pageSize: Int { Int(word(8)) }
    public var salts: (UInt32, UInt32) { (word(16), word(20)) }
    /// Whether the checksums are computed on big-endian words (magic 0x377f0683).
    public var bigEndianChecksums: Bool { magic & 1 == 1 }
    public var hasValidMagic: Bool { magic & 0xFFFF_FFFE == 0x377F_0682 }
    public var hasValidPageSize: Bool { pageSize >= 512 && pageSize <= 65536 && pageSize & (pageSize - 1) == 0 }

    /// Complete frames in the file.
    public var frameCount: Int {
        guard bytes.count > Self.headerSize, framePageSize > 0 else { return 0 }
        return (bytes.count - Self.headerSize) / (Self.frameHeaderSize + framePageSize)
    }

    /// The page size frames are read with: the header's, or the database's when the header's is broken.
    var framePageSize: Int { hasValidPageSize ? pageSize : databasePageSize ?? 0 }

    public func frameOffset(_ index: Int) -> Int { Self.headerSize + index * (Self.frameHeaderSize + framePageSize) }
    public func pageNumber(ofFrame index: Int) -> UInt32 { word(frameOffset(index)) }
    /// The database size in pages after the commit this frame ends, or 0 when it ends none.
    public func commitSize(ofFrame index: Int) -> UInt32 { word(frameOffset(index) + 4) }
    public func salts(ofFrame index: Int) -> (UInt32, UInt32) { (word(frameOffset(index) + 8), word(frameOffset(index) + 12)) }

    func word(_ offset: Int) -> UInt32 {
        guard offset + 4 <= bytes.count else { return 0 }
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    mutating func setWord(_ offset: Int, _ value: UInt32) {
        guard offset + 4 <= bytes.count else { return }
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(index))) }
    }

    // MARK: - Checksums

    /// The checksum of `range` continued from `start`, as the format defines it: over pairs of
    /// 32-bit words x0, x1 (in the log's byte order), s0 += x0 + s1, s1 += x1 + s0.
    func checksum(_ range: Range<Int>, from start: (UInt32, UInt32)) -> (UInt32, UInt32) {
        var (s0, s1) = start
        var offset = range.lowerBound
        let big = bigEndianChecksums
        while offset + 8 <= range.upperBound {
            let a = word(offset)
            let b = word(offset + 4)
            let x0 = big ? a : a.byteSwapped
            let x1 = big ? b : b.byteSwapped
            s0 = s0 &+ x0 &+ s1
            s1 = s1 &+ x1 &+ s0
            offset += 8
        }
        return (s0, s1)
    }

    /// Whether the header's stored checksum matches its first 24 bytes.
    public var headerChecksumMatches: Bool {
        guard bytes.count >= Self.headerSize else { return false }
        let sum = checksum(0..<24, from: (0, 0))
        return sum == (word(24), word(28))
    }

    /// The checksum frame `index` should store, continuing from `previous`.
    func frameChecksum(_ index: Int, from previous: (UInt32, UInt32)) -> (UInt32, UInt32) {
        let offset = frameOffset(index)
        let afterHeader = checksum(offset..<(offset + 8), from: previous)
        return checksum((offset + Self.frameHeaderSize)..<(offset + Self.frameHeaderSize + framePageSize), from: afterHeader)
    }

    /// Rewrites the header's checksum, and from frame `first` on every frame's salts (to the
    /// header's) and checksums, so the log is consistent again after a deliberate change.
    public mutating func reseal(fromFrame first: Int = 0) {
        guard bytes.count >= Self.headerSize else { return }
        let headerSum = checksum(0..<24, from: (0, 0))
        setWord(24, headerSum.0)
        setWord(28, headerSum.1)
        var running = headerSum
        for index in 0..<frameCount {
            let offset = frameOffset(index)
            if index >= first {
                setWord(offset + 8, word(16))
                setWord(offset + 12, word(20))
                let sum = frameChecksum(index, from: running)
                setWord(offset + 16, sum.0)
                setWord(offset + 20, sum.1)
            }
            running = (word(offset + 16), word(offset + 20))
        }
    }

    /// Sets both salts and reseals the whole log (generation uses it to replace SQLite's random
    /// salts with ones drawn from the seed).
    public mutating func setSalts(_ salt1: UInt32, _ salt2: UInt32) {
        setWord(16, salt1)
        setWord(20, salt2)
        reseal()
    }

    // MARK: - What SQLite reads

    /// How SQLite's recovery reads this log, and what it leaves out.
    public struct Reading: Sendable, Hashable {
        /// Frames SQLite uses: up to and including the last commit frame before the first
        /// frame that fails.
        public var usedFrames: Int
        /// Commit frames SQLite uses.
        public var usedCommits: Int
        /// The first frame that fails, with why; nil when all complete frames pass.
        public var firstFailure: (frame: Int, why: String)?
        /// Commit frames after the failure that carry the log's salts (or, when the header
        /// itself is ignored, the first frame's salts): transactions that were written after
        /// the failing frame and that SQLite drops without a word.
        public var droppedCommits: [Int]
        /// Why SQLite refuses the log with an error instead (a format version it does not know).
        public var refusal: String?

        public static func == (a: Self, b: Self) -> Bool {
            a.usedFrames == b.usedFrames && a.usedCommits == b.usedCommits && a.firstFailure?.frame == b.firstFailure?.frame
                && a.firstFailure?.why == b.firstFailure?.why && a.droppedCommits == b.droppedCommits && a.refusal == b.refusal
        }
        public func hash(into hasher: inout Hasher) {
            hasher.combine(usedFrames)
            hasher.combine(droppedCommits)
        }
    }

    /// Reads the log as SQLite's recovery (`walIndexRecover`) does.
    public func reading() -> Reading {
        var result = Reading(usedFrames: 0, usedCommits: 0, firstFailure: nil, droppedCommits: [], refusal: nil)
        guard bytes.count > Self.headerSize else { return result }
        let frames = frameCount
        let headerProblem: String? =
            if !hasValidMagic { "the log's magic number is wrong" } else if !hasValidPageSize {
                "the log's page size \(pageSize) is not a power of two from 512 to 65536"
            } else if !headerChecksumMatches {
                "the log header's checksum does not match"
            } else { nil }
        if let headerProblem {
            result.firstFailure = (0, headerProblem)
            // The header is ignored, so no salts are trusted: frames that agree with the first
            // frame's salts and chain their checksums from the header were written with it.
            let first = frames > 0 ? salts(ofFrame: 0) : (0, 0)
            let own = (0..<frames).first { commitSize(ofFrame: $0) != 0 } ?? frames
            result.droppedCommits = ((own + 1)..<max(own + 1, frames)).filter { salts(ofFrame: $0) == first && commitSize(ofFrame: $0) != 0 }
            return result
        }
        if version != Self.formatVersion {
            result.refusal = "the log's format version \(version) is not \(Self.formatVersion)"
            return result
        }
        var running = (word(24), word(28))
        var failure: Int?
        for index in 0..<frames {
            let offset = frameOffset(index)
            let why: String?
            if salts(ofFrame: index) != salts {
                why = "its salts are not the log header's"
            } else if pageNumber(ofFrame: index) == 0 {
                why = "its page number is 0"
            } else if frameChecksum(index, from: running) != (word(offset + 16), word(offset + 20)) {
                why = "its checksum does not match"
            } else {
                why = nil
            }
            if let why {
                result.firstFailure = (index, why)
                failure = index
                break
            }
            running = (word(offset + 16), word(offset + 20))
            if commitSize(ofFrame: index) != 0 {
                result.usedFrames = index + 1
                result.usedCommits += 1
            }
        }
        guard let failure else { return result }
        let header = salts
        // The failing frame's own transaction ends at the first commit frame from it on; that
        // transaction may be a torn write (the one being written when the machine stopped),
        // which SQLite rightly rolls back. Commits after it were written later: those are lost.
        let own = (failure..<frames).first { commitSize(ofFrame: $0) != 0 } ?? frames
        var written = ((own + 1)..<max(own + 1, frames)).filter { salts(ofFrame: $0) == header && commitSize(ofFrame: $0) != 0 }
        if written.isEmpty, failure == 0, frames > 0, salts(ofFrame: 0) != header {
            // No frame carries the header's salts: the frames belong to another header. After a
            // checkpoint SQLite restarts the log with salt-1 one higher, and old frames stay
            // behind until overwritten; any other difference means this header replaced theirs.
            let first = salts(ofFrame: 0)
            if header.0 != first.0 &+ 1 {
                written = ((own + 1)..<max(own + 1, frames)).filter { salts(ofFrame: $0) == first && commitSize(ofFrame: $0) != 0 }
            }
        }
        result.droppedCommits = written
        return result
    }

    /// The newest copy of page `number` that SQLite reads from this log (nil when it reads
    /// the main file's): with a `-wal` file present, SQLite opens the log before it reads
    /// page 1, so a committed copy of page 1 in the log replaces the main file's header whole.
    public func latestCopy(ofPage number: Int) -> [UInt8]? {
        let used = reading().usedFrames
        guard let frame = (0..<used).last(where: { Int(pageNumber(ofFrame: $0)) == number }) else { return nil }
        let start = frameOffset(frame) + Self.frameHeaderSize
        return Array(bytes[start..<min(bytes.count, start + framePageSize)])
    }

    /// What SQLite silently leaves out of this log, as a sentence, or nil when it drops no
    /// committed transaction the file shows was written.
    public var silentLossProblem: String? {
        let read = reading()
        if let refusal = read.refusal { return refusal + "; SQLite refuses to open the database" }
        guard let failure = read.firstFailure, !read.droppedCommits.isEmpty else { return nil }
        return
            "wal frame \(failure.frame): \(failure.why); SQLite stops reading the log there and silently drops the committed transactions after it (commit frames \(read.droppedCommits.map(String.init).joined(separator: ", "))) [rule: the log drops committed transactions]"
    }
}
