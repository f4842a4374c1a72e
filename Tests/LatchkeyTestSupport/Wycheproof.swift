import Foundation
package import Testing

/// One Wycheproof vector file (schema `*_schema_v1.json`): a list of groups of test cases.
package struct WycheproofFile<Group: Decodable>: Decodable {
    package var algorithm: String?
    package var numberOfTests: Int
    package var testGroups: [Group]
}

/// What a case expects.
package enum WycheproofResult: String, Decodable, Sendable {
    /// Must be accepted.
    case valid
    /// Must be rejected.
    case invalid
    /// Either is defensible; each suite states which it expects and why.
    case acceptable
}

/// The fields every test case has.
package protocol WycheproofCase: Decodable {
    var tcId: Int { get }
    var comment: String { get }
    var flags: [String] { get }
    var result: WycheproofResult { get }
}

/// A case of the signature files (`ecdsa_*`, `rsa_signature_*`): a message, a signature and
/// the verdict, all hex.
package struct WycheproofSignatureCase: WycheproofCase {
    package var tcId: Int
    package var comment: String
    package var flags: [String]
    package var msg: String
    package var sig: String
    package var result: WycheproofResult
}

/// What the code under test did with one case.
package enum WycheproofOutcome: Equatable, Sendable {
    case accepted
    case rejected
    /// Not run, with the reason (for example an IV length the API refuses by design).
    case skipped(String)
}

/// Runs every case of a file, checks each outcome against the file's verdict, checks that
/// executed + skipped covers the whole file, and prints the counts with the reasons for skips.
///
/// - Parameters:
///   - file: The vector file's name in ``Vectors``.
///   - cases: The cases of one group.
///   - acceptable: For `acceptable` cases, the outcome this suite requires (its written policy).
///   - override: The outcome required instead of the file's verdict, for the few cases a suite
///     documents as deliberate deviations or upstream errors; `nil` for every other case.
///   - run: Runs one case.
/// - Returns: How many cases ran and how many were skipped.
@discardableResult
package func runWycheproof<Group: Decodable, Case: WycheproofCase>(
    _ file: String, group: Group.Type, cases: (Group) -> [Case],
    acceptable: (Case) -> WycheproofOutcome = { _ in .rejected },
    override: (Case) -> WycheproofOutcome? = { _ in nil },
    sourceLocation: SourceLocation = #_sourceLocation,
    run: (Group, Case) throws -> WycheproofOutcome
) throws -> (executed: Int, skipped: Int) {
    let vectors = try JSONDecoder().decode(WycheproofFile<Group>.self, from: Vectors.data(named: file))
    var executed = 0
    var skipReasons = [String: Int]()
    for group in vectors.testGroups {
        for testCase in cases(group) {
            let outcome = try run(group, testCase)
            if case .skipped(let reason) = outcome {
                skipReasons[reason, default: 0] += 1
                continue
            }
            executed += 1
            let expected: WycheproofOutcome = override(testCase) ?? {
                switch testCase.result {
                case .valid: .accepted
                case .invalid: .rejected
                case .acceptable: acceptable(testCase)
                }
            }()
            #expect(
                outcome == expected,
                "\(file) tcId \(testCase.tcId) (\(testCase.comment); flags \(testCase.flags)): expected \(expected), got \(outcome)",
                sourceLocation: sourceLocation)
        }
    }
    let skipped = skipReasons.values.reduce(0, +)
    #expect(
        executed + skipped == vectors.numberOfTests,
        "\(file): executed \(executed) + skipped \(skipped) ≠ numberOfTests \(vectors.numberOfTests)",
        sourceLocation: sourceLocation)
    let reasons = skipReasons.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: "; ")
    print("wycheproof \(file): \(executed) executed + \(skipped) skipped = \(vectors.numberOfTests)" + (reasons.isEmpty ? "" : " (skipped: \(reasons))"))
    return (executed, skipped)
}
