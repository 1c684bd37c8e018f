import CCorruptFuzzSpawn
import Foundation
import Testing

@testable import CorruptFuzzRunner

@Suite("CPU binding: a job and the processes it starts on one free core")
struct CPUBindingTests {
    #if os(Linux)
        @Test("a bound thread runs on its CPU, a process it starts inherits it, and the thread gets its CPUs back after")
        func boundThreadAndItsChildren() throws {
            let before = try #require(CPUBinding.currentThreadCPUs())
            let cpu = try #require(before.split(separator: ",").last.flatMap { Int32($0) })
            let inside = CPUBinding.bound(to: cpu) { () -> (thread: String?, child: String) in
                let child = Process()
                child.executableURL = URL(fileURLWithPath: "/bin/grep")
                child.arguments = ["Cpus_allowed_list", "/proc/self/status"]
                let output = Pipe()
                child.standardOutput = output
                try? child.run()
                child.waitUntilExit()
                let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                return (CPUBinding.currentThreadCPUs(), text)
            }
            #expect(inside.thread == "\(cpu)")
            #expect(inside.child.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("\t\(cpu)"), "\(inside.child)")
            #expect(CPUBinding.currentThreadCPUs() == before)
            // Not bound: as it is.
            #expect(CPUBinding.bound(to: nil) { CPUBinding.currentThreadCPUs() } == before)
        }

        @Test("claims give free CPUs this process may use, each to one job at a time")
        func claims() throws {
            let allowed = Set(try #require(CPUBinding.currentThreadCPUs()).split(separator: ",").compactMap { Int32($0) })
            let first = CPUBinding.claim(jobs: 64)
            let second = CPUBinding.claim(jobs: 64)
            defer { CPUBinding.release(second) }
            let mine = first.compactMap { $0 }, theirs = second.compactMap { $0 }
            #expect(Set(mine).count == mine.count && Set(theirs).count == theirs.count)
            #expect(Set(mine).isDisjoint(with: theirs), "\(mine) \(theirs)")
            #expect(Set(mine + theirs).isSubset(of: allowed), "\(mine + theirs) of \(allowed)")
            // More jobs than CPUs: the rest are not bound.
            #expect(first.count == 64 && first.suffix(64 - allowed.count).allSatisfy { $0 == nil })
            // Given back, they can be claimed again (unless another campaign took them meanwhile).
            CPUBinding.release(first)
            let again = CPUBinding.claim(jobs: 64)
            CPUBinding.release(again)
            #expect(Set(again.compactMap { $0 }).isSubset(of: allowed))
        }
    #endif
}
