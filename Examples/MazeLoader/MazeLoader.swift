import Foundation

/// A loader with a bug behind four independent 4-byte comparisons at different offsets: the
/// classic maze. Blind mutation would need all sixteen bytes right at once (one input in 2^128);
/// coverage guidance with comparison feedback gets past one comparison at a time.
///
/// Its target is built with `-sanitize=fuzzer` (Package.swift), so its edges and comparisons
/// reach corrupt-fuzz; BENCHMARKS.md ("Coverage guidance") measures it with coverage and without.
public enum MazeLoader {
    public enum LoadError: String, Error {
        case empty, corrupt
    }

    /// What a maze file holds.
    public struct Maze: Sendable, Equatable {
        public var length: Int
        /// Whether the file passed all four comparisons: the way to the bug.
        public var reachedExit: Bool
    }

    /// Reads a maze file, never trapping.
    public static func parse(_ data: Data) throws -> Maze {
        guard !data.isEmpty else { throw LoadError.empty }
        guard data.count >= 32 else { throw LoadError.corrupt }
        let bytes = [UInt8](data)
        func word(_ offset: Int) -> UInt32 {
            UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
        }
        var exit = false
        if word(0) == 0x455A_414D {  // "MAZE"
            if word(8) == 0x0BAD_F00D {
                if word(16) == 0x1357_9BDF {
                    if word(28) == 0x2468_ACE0 { exit = true }
                }
            }
        }
        return Maze(length: bytes.count, reachedExit: exit)
    }

    /// Reads a maze file as the buggy app does: past the four comparisons, it indexes a table
    /// with a count it never checked, and traps.
    public static func load(_ data: Data) throws -> Maze {
        let maze = try parse(data)
        if maze.reachedExit {
            let rooms = [UInt8](repeating: 0, count: 4)
            _ = rooms[Int(data[data.startIndex + 4]) + 4]  // the bug: always out of range
        }
        return maze
    }
}
