import Foundation
import Testing

/// One Wycheproof vector file (schema `*_schema_v1.json`): a list of groups of test cases.
struct WycheproofFile<Group: Decodable>: Decodable {
    var algorithm: String
    var numberOfTests: Int
    var testGroups: [Group]

    static func load(_ name: String) throws -> WycheproofFile {
        try JSONDecoder().decode(WycheproofFile.self, from: Fixtures.data(name))
    }
}

/// What a case expects.
enum WycheproofResult: String, Decodable {
    /// Must be accepted.
    case valid
    /// Must be rejected.
    case invalid
    /// Either is defensible; each suite states which it expects and why.
    case acceptable
}

/// The fields every test case has.
protocol WycheproofCase: Decodable {
    var tcId: Int { get }
    var comment: String { get }
    var flags: [String] { get }
    var result: WycheproofResult { get }
}

/// What the code under test did with one case.
enum WycheproofOutcome: Equatable {
    case accepted
    case rejected
    /// Not run, with the reason (for example an IV length the API refuses by design).
    case skipped(String)
}

/// Runs every case of a file, checks each outcome against the file's verdict, and checks that
/// executed + skipped covers the whole file.
///
/// - Parameters:
///   - file: The fixture's file name.
///   - cases: The cases of one group.
///   - acceptable: For `acceptable` cases, the outcome this suite requires (its written policy).
///   - run: Runs one case.
func runWycheproof<Group: Decodable, Case: WycheproofCase>(
    _ file: String, group: Group.Type, cases: (Group) -> [Case],
    acceptable: (Case) -> WycheproofOutcome = { _ in .rejected },
    sourceLocation: SourceLocation = #_sourceLocation,
    run: (Group, Case) throws -> WycheproofOutcome
) throws -> (executed: Int, skipped: Int) {
    let vectors = try WycheproofFile<Group>.load(file)
    var executed = 0
    var skipped = 0
    for group in vectors.testGroups {
        for testCase in cases(group) {
            let outcome = try run(group, testCase)
            if case .skipped = outcome {
                skipped += 1
                continue
            }
            executed += 1
            let expected: WycheproofOutcome = switch testCase.result {
            case .valid: .accepted
            case .invalid: .rejected
            case .acceptable: acceptable(testCase)
            }
            #expect(
                outcome == expected,
                "\(file) tcId \(testCase.tcId) (\(testCase.comment); flags \(testCase.flags)): expected \(expected), got \(outcome)",
                sourceLocation: sourceLocation)
        }
    }
    #expect(
        executed + skipped == vectors.numberOfTests,
        "\(file): executed \(executed) + skipped \(skipped) ≠ numberOfTests \(vectors.numberOfTests)",
        sourceLocation: sourceLocation)
    return (executed, skipped)
}
