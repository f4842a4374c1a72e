import Foundation
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyTestSupport
import Testing

/// The Python with PyJWT that `make test` prepared.
let interopPython = ProcessInfo.processInfo.environment["LATCHKEY_PYTHON"]

/// Latchkey's tokens against an independent implementation: PyJWT over Python's `cryptography`
/// (installed into `.build/venv` by `make test`, which sets `LATCHKEY_PYTHON`).
@Suite("Interop with PyJWT", .enabled(if: interopPython != nil, "needs LATCHKEY_PYTHON (make test sets it)"))
struct InteropTests {
    static let issuer = "https://latchkey.test"
    static let audience = "com.example.app"

    static func runPython(_ arguments: [String]) throws -> Subprocess.Result {
        try Subprocess.run(URL(fileURLWithPath: try #require(interopPython)), [try fixtures.url("interop.py").path] + arguments)
    }

    static func signer(_ algorithm: JWSAlgorithm) throws -> JWSSigner {
        algorithm == .es256 ? .es256(P256.Signing.PrivateKey(), keyID: "latchkey-es") : .rs256(try RSA.Signing.PrivateKey(), keyID: "latchkey-rs")
    }

    @Test("PyJWT verifies tokens Latchkey signed, and refuses a wrong audience", arguments: [JWSAlgorithm.es256, .rs256])
    func pythonVerifiesLatchkey(algorithm: JWSAlgorithm) throws {
        let signer = try Self.signer(algorithm)
        var claims = JWTClaims()
        claims.issuer = Self.issuer
        claims.audience = [Self.audience]
        claims.subject = "from-latchkey"
        claims.issuedAt = Date()
        claims.expiresAt = Date().addingTimeInterval(300)
        let token = try signer.sign(claims)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-interop-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(JWKSet(keys: [try signer.publicJWK]).json.serialized).write(to: file)

        let accepted = try Self.runPython(["verify", file.path, token, Self.issuer, Self.audience])
        #expect(accepted.status == 0, "PyJWT said: \(accepted.output)")
        #expect(try JSONValue(parsing: accepted.output)["sub"] == "from-latchkey")

        let refused = try Self.runPython(["verify", file.path, token, Self.issuer, "other-audience"])
        #expect(refused.status == 1)
        #expect(refused.output.contains("InvalidAudience"))
    }

    @Test("Latchkey verifies tokens PyJWT signed, with the JWK Set Python published", arguments: [JWSAlgorithm.es256, .rs256])
    func latchkeyVerifiesPython(algorithm: JWSAlgorithm) throws {
        let result = try Self.runPython(["sign", algorithm.rawValue, Self.issuer, Self.audience])
        #expect(result.status == 0, "python said: \(result.output)")
        let json = try JSONValue(parsing: result.output)
        let keys = try JWSKeySet(jwks: try JWKSet(json: try #require(json["jwks"])))
        let token = try #require(json["token"]?.stringValue)
        let policy = JWTValidationPolicy(issuer: Self.issuer, audiences: [Self.audience], algorithms: [algorithm])
        let verified = try JWTVerifier(keys: keys, policy: policy).verify(token)
        #expect(verified.claims.subject == "from-python")
        #expect(verified.keyID == "python-\(algorithm.rawValue)")

        let wrongAudience = JWTValidationPolicy(issuer: Self.issuer, audiences: ["other"], algorithms: [algorithm])
        #expect(throws: JOSEError(.wrongAudience, "")) { try JWTVerifier(keys: keys, policy: wrongAudience).verify(token) }
    }
}
