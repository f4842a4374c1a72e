import Foundation
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyTestSupport
import Testing

/// Runs every case of Wycheproof's JOSE files through the same parsing and verification path the
/// server uses: `JWKSet` → `JWSKeySet` → `JWS(compact:)` → `verify(with:algorithms:)`.
///
/// Policy, applied in code below:
/// - A token in an algorithm Latchkey does not implement (RS384, PS512, ES521, HS384, ...) is
///   rejected. That is the expected result for `invalid` cases, which therefore run; `valid`
///   cases in such algorithms are skipped.
/// - Latchkey accepts no JWE (docs/security.md S2). `invalid` JWE cases run and must be rejected;
///   `valid` ones, which expect a decryption, are skipped.
/// - ``overrides`` lists the few cases whose expected result is not the file's, with the reason:
///   `valid` cases Latchkey rejects on purpose, and upstream cases that contradict another case.
@Suite("Wycheproof JOSE vectors")
struct WycheproofJOSETests {
    struct Group: Decodable {
        var `public`: AnyJSON?
        var `private`: AnyJSON?
        var tests: [Case]
    }

    struct Case: WycheproofCase {
        var tcId: Int
        var comment: String
        var result: WycheproofResult
        var jws: AnyJSON?
        var jwe: AnyJSON?
        private var flagList: [String]?
        var flags: [String] { flagList ?? [] }

        enum CodingKeys: String, CodingKey {
            case tcId, comment, result, jws, jwe
            case flagList = "flags"
        }
    }

    /// Cases whose required outcome is not the file's verdict, and why.
    static let overrides: [String: [Int: (outcome: WycheproofOutcome, reason: String)]] = [
        "json_web_signature_test.json": [
            367: (.accepted, "upstream error: byte-identical to the valid tcId 357 (its padding was lost from the file)"),
            370: (.accepted, "upstream error: byte-identical to the valid tcId 357 (its padding was lost from the file)"),
            372: (.rejected, "the header's base64url contains '?': strict base64url (S2) refuses it rather than skip it"),
            373: (.rejected, "the payload's base64url contains '?': strict base64url (S2) refuses it rather than skip it"),
        ]
    ]

    /// The group's keys as the server would load them; `nil` when the set is refused.
    static func keySet(_ group: Group) -> JWSKeySet? {
        guard let json = (group.public ?? group.private)?.value else { return nil }
        do {
            let set = json["keys"] != nil ? try JWKSet(json: json) : JWKSet(keys: [try JWK(json: json)])
            return try JWSKeySet(jwks: set, allowSymmetric: true)
        } catch {
            return nil
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
        let overrides = Self.overrides[file] ?? [:]
        let counts = try runWycheproof(
            file, group: Group.self, cases: \.tests, override: { overrides[$0.tcId]?.outcome }
        ) { group, test in
            // A JSON-serialized JWS arrives as an object; it is handed over as its JSON text.
            let token = (test.jws ?? test.jwe).map { $0.value.stringValue ?? $0.value.serializedString } ?? ""
            if test.result == .valid, test.jwe != nil { return .skipped("valid JWE (Latchkey accepts no JWE)") }
            if test.result == .valid, let alg = Self.headerAlgorithm(token), !JWSAlgorithm.supported.contains(alg) {
                return .skipped("valid \(alg) (not implemented)")
            }
            guard let keys = Self.keySet(group) else { return .rejected }
            do {
                try JWS(compact: token).verify(with: keys, algorithms: JWSAlgorithm.supported)
                return .accepted
            } catch {
                return .rejected
            }
        }
        #expect(counts.executed > counts.skipped)
    }
}
