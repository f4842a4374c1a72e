import Foundation
import LatchkeyJOSE
import Testing

/// Runs every case of Wycheproof's JOSE files through the same parsing and verification path the
/// server uses: `JWKSet` → `JWSKeySet` → `JWS(compact:)` → `verify(with:algorithms:)`.
///
/// Policy, applied in code below:
/// - A token in an algorithm Latchkey does not implement (RS384, PS512, ES521, HS384, ...) is
///   rejected. That is the expected result for `invalid` cases, which therefore run; `valid`
///   cases in such algorithms are skipped.
/// - Latchkey accepts no JWE (SECURITY.md S2). `invalid` JWE cases run and must be rejected;
///   `valid` ones, which expect a decryption, are skipped.
/// - ``overrides`` lists the few cases whose expected result we do not take from the file, with
///   the reason: `valid` cases Latchkey rejects on purpose, and upstream cases that contradict
///   another case. Each is asserted with its overriding result, so the list cannot go stale.
@Suite("Wycheproof JOSE vectors")
struct WycheproofJOSETests {
    struct Outcome {
        var executed = 0
        var skipped: [String: Int] = [:]
        var unexpected: [String] = []
        var total: Int
        var skippedCount: Int { skipped.values.reduce(0, +) }
    }

    /// Cases whose expected result is overridden: whether Latchkey accepts them, and why.
    static let overrides: [String: [Int: (accept: Bool, reason: String)]] = [
        "json_web_signature_test.json": [
            367: (true, "upstream error: byte-identical to the valid tcId 357 (its padding was lost from the file)"),
            370: (true, "upstream error: byte-identical to the valid tcId 357 (its padding was lost from the file)"),
            372: (false, "the header's base64url contains '?'; strict base64url (S2) refuses it rather than skipping it"),
            373: (false, "the payload's base64url contains '?'; strict base64url (S2) refuses it rather than skipping it"),
        ]
    ]

    static func run(_ name: String) throws -> Outcome {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil))
        let file = try JSONValue(parsing: Array(try Data(contentsOf: url)), maxDepth: 64)
        let total = Int(try #require(file["numberOfTests"]?.numberValue))
        var outcome = Outcome(total: total)
        let fileOverrides = overrides[name] ?? [:]

        for group in try #require(file["testGroups"]?.arrayValue) {
            let keyJSON = group["public"].flatMap { $0 == .bool(false) ? nil : $0 } ?? group["private"]
            let keys: JWSKeySet? = keyJSON.flatMap { json in
                do {
                    let set = json["keys"] != nil ? try JWKSet(json: json) : JWKSet(keys: [try JWK(json: json)])
                    return try JWSKeySet(jwks: set, allowSymmetric: true)
                } catch {
                    return nil
                }
            }
            for test in try #require(group["tests"]?.arrayValue) {
                let id = Int(test["tcId"]?.numberValue ?? -1)
                let label = "tcId \(id) (\(test["comment"]?.stringValue ?? ""))"
                let valid = test["result"]?.stringValue == "valid"
                let isJWE = test["jwe"] != nil
                let token = (test["jws"] ?? test["jwe"]).map { $0.stringValue ?? $0.serializedString } ?? ""

                if valid, isJWE {
                    outcome.skipped["valid JWE (Latchkey accepts no JWE)", default: 0] += 1
                    continue
                }
                if valid, let alg = headerAlgorithm(token), !JWSAlgorithm.supported.contains(alg) {
                    outcome.skipped["valid \(alg) (not implemented)", default: 0] += 1
                    continue
                }
                outcome.executed += 1
                let accepted = verifies(token, keys: keys)
                let expected = fileOverrides[id]?.accept ?? valid
                if accepted != expected {
                    outcome.unexpected.append("\(label): expected \(expected ? "accept" : "reject"), got \(accepted ? "accept" : "reject")")
                }
            }
        }
        return outcome
    }

    static func verifies(_ token: String, keys: JWSKeySet?) -> Bool {
        guard let keys else { return false }
        do {
            try JWS(compact: token).verify(with: keys, algorithms: JWSAlgorithm.supported)
            return true
        } catch {
            return false
        }
    }

    static func headerAlgorithm(_ token: String) -> JWSAlgorithm? {
        guard let header = token.split(separator: ".").first, let bytes = Base64URL.decode(header),
            let alg = (try? JSONValue(parsing: bytes))?["alg"]?.stringValue
        else { return nil }
        return JWSAlgorithm(rawValue: alg)
    }

    @Test("S1–S3: every Wycheproof JOSE case has its expected result", arguments: [
        "json_web_signature_test.json", "json_web_crypto_test.json", "json_web_key_test.json",
    ])
    func wycheproof(file: String) throws {
        let outcome = try Self.run(file)
        #expect(outcome.unexpected == [], "\(file): \(outcome.unexpected.count) unexpected results")
        #expect(outcome.executed + outcome.skippedCount == outcome.total)
        #expect(outcome.executed > outcome.skippedCount)
        print("\(file): \(outcome.executed) executed, \(outcome.skippedCount) skipped of \(outcome.total): \(outcome.skipped)")
    }
}
