import CorruptFuzzCore
import Foundation

/// What libFuzzer (and the libFuzzer bridge) said about the inputs it saved: for each
/// artifact file (`crash-…`, `leak-…`, `timeout-…`, `oom-…`), the finding's kind, signature
/// and the log lines that led to it.
///
/// libFuzzer prints its report, then `Test unit written to ./crash-<sha1>`; the bridge prints
/// `==corrupt-fuzz== finding: KIND` and `==corrupt-fuzz== signature: …` before it aborts, so
/// the lines since the previous artifact tell what each one is.
public struct LibFuzzerLog: Sendable {
    /// One saved input, as the log describes it.
    public struct Artifact: Sendable, Hashable {
        /// The file name libFuzzer gave it (`crash-da39a3ee…`).
        public var name: String
        public var kind: FindingKind
        public var signature: String
        public var detail: String
        /// The target named by the bridge, if it printed one.
        public var target: String?
        /// The log lines from the previous artifact to this one (at most 200).
        public var report: String
    }

    /// The artifacts in the order they were written, by file name.
    public var artifacts: [String: Artifact] = [:]
    /// What the bridge reported, by the SHA-1 of the input (the name libFuzzer gives it).
    public var bridgeReports: [String: Artifact] = [:]

    /// What the log says about the saved input `name` whose content is `bytes`: its own lines,
    /// else the bridge's report of the same content, else what its name says.
    public func artifact(named name: String, bytes: [UInt8]) -> Artifact {
        if let known = artifacts[name], known.target != nil || bridgeReports[SHA1.hex(bytes)] == nil { return known }
        if var reported = bridgeReports[SHA1.hex(bytes)] {
            reported.name = name
            return reported
        }
        return artifacts[name] ?? Self.describe(name: name)
    }

    /// Reads a libFuzzer log (or several, concatenated: the fuzzer's output and the bridge's
    /// findings log).
    public init(parsing log: String) {
        var block: [Substring] = []
        var pending: [Substring] = []
        for line in log.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(LibFuzzerBridgeMarker.text + " ") {
                pending.append(line)
                if line.hasPrefix(LibFuzzerBridgeMarker.text + " input: ") {
                    let sha = String(line.dropFirst((LibFuzzerBridgeMarker.text + " input: ").count))
                    let report = Self.describe(name: "", block: pending)
                    if report.target != nil { bridgeReports[sha] = report }
                    pending = []
                }
            }
            if let range = line.range(of: "Test unit written to ") {
                let path = line[range.upperBound...].trimmingCharacters(in: .whitespaces)
                let name = String(path.split(separator: "/").last ?? Substring(path))
                artifacts[name] = Self.describe(name: name, block: block)
                block = []
            } else {
                block.append(line)
                if block.count > 200 { block.removeFirst(block.count - 200) }
            }
        }
    }

    /// An artifact found without a log: what its name says.
    public static func describe(name: String) -> Artifact { describe(name: name, block: []) }

    /// The kind a libFuzzer artifact's name gives: `crash-` and `leak-` are crashes,
    /// `timeout-` a hang, `oom-` a memory blow-up; nil for other files (`slow-unit-`).
    public static func kind(ofArtifact name: String) -> FindingKind? {
        if name.hasPrefix("crash-") || name.hasPrefix("leak-") { return .crash }
        if name.hasPrefix("timeout-") { return .hang }
        if name.hasPrefix("oom-") { return .oom }
        return nil
    }

    private static func describe(name: String, block: [Substring]) -> Artifact {
        let report = block.joined(separator: "\n")
        var bridge: [String: String] = [:]
        for line in block where line.hasPrefix(LibFuzzerBridgeMarker.text + " ") {
            let rest = line.dropFirst(LibFuzzerBridgeMarker.text.count + 1)
            guard let colon = rest.range(of: ": ") else { continue }
            bridge[String(rest[..<colon.lowerBound])] = String(rest[colon.upperBound...])
        }
        if let word = bridge["finding"], let kind = FindingKind(rawValue: word), let signature = bridge["signature"] {
            return Artifact(
                name: name, kind: kind, signature: signature, detail: bridge["detail"] ?? signature, target: bridge["target"], report: report)
        }
        let kind = kind(ofArtifact: name) ?? .crash
        switch kind {
        case .hang:
            // The signatures of corrupt-fuzz's own campaigns, so the same bug is one finding.
            return Artifact(name: name, kind: .hang, signature: "no exit within the timeout", detail: "libFuzzer: timeout", target: nil, report: report)
        case .oom:
            return Artifact(
                name: name, kind: .oom, signature: "over the memory limit", detail: "libFuzzer: out-of-memory", target: nil, report: report)
        default:
            let signature = crashSignature(block, leak: name.hasPrefix("leak-"))
            return Artifact(name: name, kind: .crash, signature: signature, detail: "libFuzzer: \(signature)", target: nil, report: report)
        }
    }

    /// A crash's signature from its report: Swift's runtime message (numbers as `#`), else the
    /// sanitizer's error line, else libFuzzer's.
    static func crashSignature(_ block: [Substring], leak: Bool) -> String {
        if leak { return "memory leak (LeakSanitizer)" }
        if let fatal = block.first(where: { $0.contains("Fatal error: ") }), let range = fatal.range(of: "Fatal error: ") {
            return "Fatal error: " + Normalize.message(String(fatal[range.upperBound...]))
        }
        for marker in ["ERROR: AddressSanitizer: ", "ERROR: UndefinedBehaviorSanitizer: ", "ERROR: MemorySanitizer: ", "ERROR: libFuzzer: "] {
            if let line = block.first(where: { $0.contains(marker) }), let range = line.range(of: marker) {
                let what = line[range.upperBound...].split(separator: " ").prefix(3).joined(separator: " ")
                return marker.dropFirst("ERROR: ".count).dropLast(2) + ": " + Normalize.message(what)
            }
        }
        return "deadly signal"
    }
}

/// The marker the libFuzzer bridge starts its lines with (`CorruptFuzzLibFuzzer` prints it).
public enum LibFuzzerBridgeMarker {
    public static let text = "==corrupt-fuzz=="
}

extension LibFuzzerLog.Artifact {
    /// What the loader did, as far as libFuzzer's report tells: a crash, hang or memory blow-up
    /// as such, a rejection for the kinds about rejections, else an acceptance (every kind an
    /// oracle finds in an accepted file, so a new kind needs nothing here).
    public var outcome: Outcome {
        switch kind {
        case .hang: .hung(milliseconds: 0)
        case .oom: .outOfMemory(peakKilobytes: 0, message: detail)
        case .crash: .crashed(signal: SIGABRT, frames: [], message: signature)
        case .falseRejection, .wrongReason: .rejected(reason: nil, exitCode: 1, message: detail)
        default: .accepted(digest: "")
        }
    }
}
