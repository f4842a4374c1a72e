import Foundation
@testable import LatchkeyClient
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

@Suite("SDK core without a server: SHA-256, nonce, state machines, file store")
struct PortableCoreTests {
    @Test("SHA-256 matches FIPS 180-4's examples", arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func sha256Vectors(message: String, digest: String) {
        #expect(SHA256.hex(SHA256.hash(Array(message.utf8))) == digest)
    }

    @Test("SHA-256 agrees with OpenSSL on every length across the padding boundaries, and on a million a's")
    func sha256AgreesWithOpenSSL() {
        for length in 0...200 {
            let message = SecureRandom.bytes(count: length)
            #expect(SHA256.hash(message) == HashFunction.sha256.hash(message), "length \(length)")
        }
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256.hex(SHA256.hash(million)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("Nonce.make: 32 unreserved characters, a different one each time, and sha256 is its hex SHA-256")
    func nonce() {
        let first = Nonce.make(), second = Nonce.make()
        #expect(first.raw != second.raw)
        for nonce in [first, second] {
            #expect(nonce.raw.count == 32)
            #expect(nonce.raw.allSatisfy { Nonce.alphabet.contains($0) })
            #expect(nonce.sha256 == HashFunction.sha256.hexDigest(Array(nonce.raw.utf8)))
        }
    }

    static func stored(_ refreshToken: String, expiresIn seconds: TimeInterval = 900, now: Date = Date(timeIntervalSince1970: 1_800_000_000)) -> StoredSession {
        let user = Account.User(id: "u", email: nil, emailVerified: false, isPrivateEmail: false, givenName: nil, familyName: nil, createdAt: now)
        return StoredSession(session: Session(accessToken: "at-" + refreshToken, refreshToken: refreshToken, expiresAt: now.addingTimeInterval(seconds), sessionID: "s", user: user))
    }

    @Test("tokenStep: a token with minTTL to live is used; one closer to expiry, or minTTL beyond its life, is refreshed")
    func tokenStep() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let session = Self.stored("r1", expiresIn: 900, now: now)
        #expect(SessionMachine.tokenStep(session, now: now, minTTL: .seconds(60)) == .use("at-r1"))
        #expect(SessionMachine.tokenStep(session, now: now.addingTimeInterval(841), minTTL: .seconds(60)) == .refresh(due: "r1"))
        #expect(SessionMachine.tokenStep(session, now: now, minTTL: .seconds(3600)) == .refresh(due: "r1"))
        #expect(SessionMachine.tokenStep(nil, now: now, minTTL: .seconds(60)) == .notSignedIn)
    }

    @Test("lockedStep: present the due token only while the store still holds it; adopt a sibling's rotation")
    func lockedStep() {
        let due = Self.stored("r1"), rotated = Self.stored("r2")
        #expect(SessionMachine.lockedStep(due: "r1", stored: due) == .present("r1"))
        #expect(SessionMachine.lockedStep(due: "r1", stored: rotated) == .adopt(rotated))
        #expect(SessionMachine.lockedStep(due: "r1", stored: nil) == .signedOut)
    }

    @Test("Only definite invalid_grant reasons end a session", arguments: [
        (400, "invalid_grant", "expired", SessionMachine.FailureVerdict.signOut(.expired)),
        (400, "invalid_grant", "revoked", .signOut(.sessionRevoked)),
        (400, "invalid_grant", "unknown", .signOut(.sessionRevoked)),
        (400, "invalid_grant", "consent_revoked", .signOut(.consentRevoked)),
        (400, "invalid_grant", "account_deleted", .signOut(.accountDeleted)),
        (400, "invalid_grant", "transferred", .signOut(.transferred)),
        (400, "invalid_grant", "reused", .reusedUnlessSiblingRotated),
        (400, "invalid_grant", "a_reason_added_later", .keep),
        (400, "invalid_grant", nil, .keep),
        (400, "invalid_request", "revoked", .keep),
        (503, "unavailable", nil, .keep),
        (500, "server_error", nil, .keep),
        (429, "rate_limited", nil, .keep),
    ] as [(Int, String, String?, SessionMachine.FailureVerdict)])
    func verdicts(status: Int, code: String, reason: String?, verdict: SessionMachine.FailureVerdict) {
        #expect(SessionMachine.verdict(status: status, serverCode: code, reason: reason) == verdict)
    }

    @Test("reused: the session ends unless the store holds a token a sibling rotated to")
    func reusedVerdict() {
        #expect(SessionMachine.reusedVerdict(presented: "r1", stored: Self.stored("r1")) == .tokenReused)
        #expect(SessionMachine.reusedVerdict(presented: "r1", stored: nil) == .tokenReused)
        #expect(SessionMachine.reusedVerdict(presented: "r1", stored: Self.stored("r2")) == nil)
    }

    @Test("Launch check: Apple's state decides first, then the server; no answer keeps the session")
    func launchCheck() {
        #expect(LaunchCheck.appleStep(nil) == .checkServer)
        #expect(LaunchCheck.appleStep(.success(.authorized)) == .checkServer)
        #expect(LaunchCheck.appleStep(.success(.revoked)) == .signOut(.credentialRevoked))
        #expect(LaunchCheck.appleStep(.success(.notFound)) == .signOut(.credentialNotFound))
        #expect(LaunchCheck.appleStep(.success(.transferred)) == .signOut(.transferred))
        #expect(LaunchCheck.appleStep(.failure(URLError(.notConnectedToInternet))) == .offline)
        let session = Self.stored("r1").session
        #expect(LaunchCheck.outcome(server: .success(session), stored: session) == .signedIn(session))
        #expect(LaunchCheck.outcome(server: .failure(LatchkeyError(.network, "")), stored: session) == .offline(session))
        #expect(
            LaunchCheck.outcome(server: .failure(LatchkeyError(.sessionEnded, "", signOutReason: .consentRevoked)), stored: session)
                == .signedOut(.consentRevoked))
    }

    @Test("LatchkeyError: codes compare by name, an unknown server code arrives intact, messages carry no tokens")
    func errors() {
        #expect(LatchkeyError.Code.rateLimited(retryAfter: .seconds(5)) == .rateLimited(retryAfter: nil))
        #expect(LatchkeyError.Code.server(code: "teapot") != .server(code: "conflict"))
        #expect(LatchkeyError(.server(code: "teapot"), "x").serverCode == "teapot")
        let session = Self.stored("secret-refresh").session
        #expect(!session.description.contains("secret-refresh"))
        #expect(!session.description.contains("at-secret"))
    }

    @Test("FileCredentialStore: mode 0600, atomic replace with no temporary left behind, absent means nil")
    func fileStore() throws {
        let directory = try TemporaryDirectory("sdk-store")
        defer { directory.remove() }
        let store = FileCredentialStore(url: directory.url.appendingPathComponent("session.json"))
        #expect(try store.load() == nil)
        try store.delete()
        try store.save(Self.stored("r1"))
        try store.save(Self.stored("r2"))
        #expect(try store.load() == Self.stored("r2"))
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.file("session.json"))
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["session.json"])
        try store.delete()
        #expect(try store.load() == nil)
        try "{".write(toFile: directory.file("session.json"), atomically: true, encoding: .utf8)
        #expect(throws: LatchkeyError(.storage, "")) { try store.load() }
    }
}

extension PortableCoreTests {
    @Test("PersonName from PersonNameComponents: the given and family names, empty parts absent")
    func personName() {
        var components = PersonNameComponents()
        components.givenName = "Ada"
        components.familyName = ""
        #expect(PersonName(components) == PersonName(givenName: "Ada", familyName: nil))
    }
}
