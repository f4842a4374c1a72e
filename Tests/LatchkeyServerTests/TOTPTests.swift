import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

@Suite("TOTP and recovery codes")
struct TOTPTests {
    static func bearer(_ token: TokenResponse) -> [String: String] { ["Authorization": "Bearer \(token.accessToken)"] }

    /// RFC 4648 §6 base32 without padding, as an authenticator app reads the secret.
    static func base32Decode(_ text: String) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var buffer = 0, bits = 0
        var output: [UInt8] = []
        for character in text {
            buffer = buffer << 5 | alphabet.firstIndex(of: character)!
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(buffer >> bits & 0xff))
            }
        }
        return output
    }

    /// A user with TOTP confirmed: the secret, the session, and the recovery codes.
    static func enrolled(_ server: TestServer, user existing: User? = nil) async throws -> (User, TokenResponse, [UInt8], [String]) {
        let user = if let existing { existing } else { try await server.createUser() }
        let token = try await server.startSession(for: user)
        let begin = try await server.request(.post, "/v1/totp", headers: bearer(token)).decode(WireTOTPEnrollment.self)
        let secret = base32Decode(begin.secret)
        let code = TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now))
        let confirm = try await server.request(.post, "/v1/totp/confirm", json: ["code": .string(code)], headers: bearer(token))
        #expect(confirm.status == 200, "\(confirm.text)")
        let codes = try confirm.decode(WireRecoveryCodes.self).recoveryCodes
        return (user, token, secret, codes)
    }

    /// RFC 6238 Appendix B, the SHA-1 rows: seed "12345678901234567890", 8 digits.
    @Test("S19: RFC 6238 test vectors (SHA-1)", arguments: [
        (59.0, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"), (1_234_567_890, "89005924"),
        (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
    ])
    func s19RFC6238(time: Double, code: String) {
        let secret = Array("12345678901234567890".utf8)
        let step = TOTP.step(at: Date(timeIntervalSince1970: time))
        #expect(TOTP.code(secret: secret, step: step, digits: 8) == code)
        #expect(TOTP.code(secret: secret, step: step) == String(code.suffix(6)), "six digits are the last six")
    }

    @Test("S19: a step either side is accepted, two steps are not, and no step is accepted twice")
    func s19Window() {
        let secret = SecureRandom.bytes(count: 20)
        let now = Date(timeIntervalSince1970: 1_800_000_015)
        let current = TOTP.step(at: now)
        for offset: Int64 in [-1, 0, 1] {
            #expect(TOTP.matchingStep(of: TOTP.code(secret: secret, step: current + offset), secret: secret, now: now, after: nil) == current + offset)
        }
        for offset: Int64 in [-2, 2] {
            #expect(TOTP.matchingStep(of: TOTP.code(secret: secret, step: current + offset), secret: secret, now: now, after: nil) == nil)
        }
        let code = TOTP.code(secret: secret, step: current)
        #expect(TOTP.matchingStep(of: code, secret: secret, now: now, after: current) == nil, "the same step again")
        #expect(TOTP.matchingStep(of: TOTP.code(secret: secret, step: current - 1), secret: secret, now: now, after: current) == nil, "an older step")
    }

    @Test("S7, S19: set-up gives a sealed secret and an otpauth URI; confirmation gives ten hashed recovery codes")
    func s19Enrolment() async throws {
        try await TestServer.with { server in
            let user = try await server.createUser()
            let token = try await server.startSession(for: user)
            let begin = try await server.request(.post, "/v1/totp", headers: Self.bearer(token))
            #expect(begin.status == 200)
            #expect(begin.headers["Cache-Control"] == "no-store")
            let body = try begin.decode(WireTOTPEnrollment.self)
            let secretText = body.secret
            let secret = Self.base32Decode(secretText)
            #expect(secret.count == 20)
            #expect(body.otpauthURI == "otpauth://totp/Latchkey:ada@example.com?secret=\(secretText)&issuer=Latchkey&algorithm=SHA1&digits=6&period=30")
            let row = try #require(try await server.database.read { try $0.queryOne("SELECT * FROM totp_factors WHERE user_id = ?", [.text(user.id)]) })
            let sealed = try row.blob("secret")
            #expect(sealed != secret && sealed.count > secret.count)
            #expect(try server.application.masterKey.unseal(sealed, context: "totp_factors/\(row.string("id"))") == secret)
            #expect(row.optionalDate("confirmed_at") == nil)

            let wrong = try await server.request(.post, "/v1/totp/confirm", json: ["code": "000000"], headers: Self.bearer(token))
            #expect(wrong.status == 400)
            #expect(try wrong.wireError.grantFailure == .invalidCode)
            let code = TOTP.code(secret: secret, step: TOTP.step(at: server.clock.now))
            let confirm = try await server.request(.post, "/v1/totp/confirm", json: ["code": .string(code)], headers: Self.bearer(token))
            #expect(confirm.status == 200)
            let codes = try confirm.decode(WireRecoveryCodes.self).recoveryCodes
            #expect(codes.count == 10 && Set(codes).count == 10)
            #expect(codes.allSatisfy { $0.filter { $0 != "-" }.count == 32 }, "160 bits each")
            let hashes = try await server.database.read { try $0.query("SELECT code_hash FROM recovery_codes WHERE user_id = ?", [.text(user.id)]) }
                .map { try $0.blob("code_hash") }
            #expect(Set(hashes) == Set(codes.map(RecoveryCodes.hash)))
            #expect(try await server.auditEvents(user.id).contains("totp.added"))
            let me = try await server.request(.get, "/v1/me", headers: Self.bearer(token)).decode(WireAccount.self)
            #expect(me.factors == [WireFactor(type: .totp), WireFactor(type: .recoveryCode)])
            let again = try await server.request(.post, "/v1/totp", headers: Self.bearer(token))
            #expect(again.status == 409)
        }
    }

    @Test("S18, S19: removing TOTP needs a recent second factor and deletes the recovery codes")
    func s18Remove() async throws {
        try await TestServer.with { server in
            let (user, token, _, _) = try await Self.enrolled(server)
            server.clock.advance(by: 301)
            let refused = try await server.request(.delete, "/v1/totp", headers: Self.bearer(token))
            #expect(refused.status == 403)
            #expect(try refused.wireError.error == .insufficientAuthentication)
            server.clock.advance(by: -300)
            let removed = try await server.request(.delete, "/v1/totp", headers: Self.bearer(token))
            #expect(removed.status == 204)
            let left = try await server.database.read { connection in
                (try connection.query("SELECT id FROM totp_factors", []).count, try connection.query("SELECT code_hash FROM recovery_codes", []).count)
            }
            #expect(left == (0, 0))
            #expect(try await server.auditEvents(user.id).contains("totp.removed"))
            #expect(try await server.request(.delete, "/v1/totp", headers: Self.bearer(token)).status == 404)
        }
    }
}
