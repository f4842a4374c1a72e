import Foundation
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyTestSupport
import Testing

/// `latchkey jwt verify --jwks FILE` with a key set that also lists keys we cannot use (S30).
@Suite("latchkey jwt verify: key sets with unusable keys")
struct JWTVerifyKeySetTests {
    /// Writes a JWK Set listing the fixture's key between the unusable members; returns its path.
    static func mixedKeySet(_ fixture: CLITests.Fixture) throws -> String {
        let members = UnusableJWKs.all.map(\.json)
        let document = UnusableJWKs.document([members[0], try fixture.signer.publicJWK.json.serializedString] + members.dropFirst())
        let path = fixture.directory.appendingPathComponent("mixed.json").path
        try Data(document.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("S30: jwt verify warns about each unusable key, verifies with the good one, and fails a token naming a skipped key with the reason")
    func s30MixedKeySetFile() throws {
        let fixture = try CLITests.Fixture()
        defer { fixture.remove() }
        let path = try Self.mixedKeySet(fixture)

        let good = try CLITests.run(["jwt", "verify", "--jwks", path, "--iss", "https://latchkey.test", try fixture.token()])
        #expect(good.status == 0, "\(good.error)")
        #expect(try JSONValue(parsing: good.output)["sub"] == "user-7")
        for (_, keyID, reason) in UnusableJWKs.all {
            #expect(good.error.contains("latchkey: warning: skipped key kid \(keyID): \(reason): "), "\(good.error)")
        }

        for (_, keyID, reason) in UnusableJWKs.all {
            var claims = JWTClaims()
            claims.subject = "user-7"
            claims.expiresAt = Date().addingTimeInterval(300)
            let token = try JWSSigner.es256(P256.Signing.PrivateKey(), keyID: keyID).sign(claims)
            let refused = try CLITests.run(["jwt", "verify", "--jwks", path, token])
            #expect(refused.status == 1, "\(keyID)")
            #expect(refused.output.isEmpty)
            #expect(
                refused.error.contains("verification failed: invalid_key: the key set lists this kid, but its key was skipped as unusable (\(reason): "),
                "\(refused.error)")
        }
    }

    @Test("S30: a file that is not a JWK Set at all is still refused as a whole", arguments: ["not json", #"{"key":[]}"#, #"{"keys":{}}"#])
    func s30NotAKeySet(document: String) throws {
        let fixture = try CLITests.Fixture()
        defer { fixture.remove() }
        let path = fixture.directory.appendingPathComponent("bad.json").path
        try Data(document.utf8).write(to: URL(fileURLWithPath: path))
        let result = try CLITests.run(["jwt", "verify", "--jwks", path, try fixture.token()])
        #expect(result.status == 1)
        #expect(result.output.isEmpty)
        #expect(result.error.contains("latchkey: cannot use the key set: malformed"), "\(result.error)")
    }
}
