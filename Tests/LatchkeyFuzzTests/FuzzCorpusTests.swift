import Foundation
import LatchkeyFuzzChecks
import Testing

/// Replays every checked-in fuzz input through its target's check, without libFuzzer.
///
/// Fuzz/Corpus holds the seeds `make fuzz` starts from; Fuzz/Regressions holds every input a
/// fuzzer found that crashed or broke a property, kept after the fix. Both are read from the
/// source tree, so a new file there is tested without touching this suite.
@Suite("Fuzz corpus and regressions")
struct FuzzCorpusTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    static func inputs(_ kind: String, of target: FuzzTarget) throws -> [(name: String, bytes: [UInt8])] {
        let folder = fuzzDirectory.appendingPathComponent(kind).appendingPathComponent(target.name)
        guard FileManager.default.fileExists(atPath: folder.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            .filter { !$0.hasPrefix(".") }
            .map { ($0, Array(try Data(contentsOf: folder.appendingPathComponent($0)))) }
    }

    @Test("S24: every seed and every regression input passes its target's check", arguments: FuzzTarget.all.map(\.name))
    func replay(targetName: String) throws {
        let target = try #require(FuzzTarget.all.first { $0.name == targetName })
        let seeds = try Self.inputs("Corpus", of: target)
        var outcomes: [FuzzTarget.Outcome] = []
        for (name, bytes) in try seeds + Self.inputs("Regressions", of: target) {
            do {
                outcomes.append(try target.check(bytes))
            } catch {
                Issue.record("\(target.name)/\(name): \(error)")
            }
        }
        // Seeds the code accepts reach the properties; near-valid ones reach the refusals.
        #expect(outcomes.filter { $0 == .accepted }.count >= 2, "Fuzz/Corpus/\(target.name) needs valid seeds")
        #expect(outcomes.contains(.refused), "Fuzz/Corpus/\(target.name) needs near-valid seeds")
    }

    @Test("every target has a libFuzzer entry point")
    func entryPoints() throws {
        let files = try FileManager.default.contentsOfDirectory(
            atPath: Self.fuzzDirectory.appendingPathComponent("Targets").path)
        #expect(Set(files) == Set(FuzzTarget.all.map { $0.name + ".swift" }))
    }
}
