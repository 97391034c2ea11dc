import Foundation
import OrbitFuzzTargets
import Testing

/// Replays the corpus libFuzzer kept (fuzz/corpus/TARGET/, grown by scripts/fuzz.sh) through
/// each parser's property: every input that once reached new code stays a regression test.
@Suite("The kept fuzzing corpus, replayed")
struct FuzzCorpusTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "fuzz/corpus")

    @Test("the kept corpus keeps every property", arguments: FuzzTarget.allCases)
    func theKeptCorpusKeepsEveryProperty(target: FuzzTarget) throws {
        let directory = Self.root.appending(path: target.rawValue)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(!files.isEmpty, "no corpus in \(directory.path)")
        for file in files {
            let input = try Data(contentsOf: directory.appending(path: file))
            #expect(target.check(Array(input)) == nil, "\(target.rawValue)/\(file)")
        }
    }

}
