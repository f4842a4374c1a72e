import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyClient
import LatchkeyCrypto
import Synchronization

/// The real transport, with switches a test flips: fail every request as if offline, or answer
/// `/v1/token` with a 503 as an overloaded server does. Counts the refreshes it carried.
final class SwitchableTransport: HTTPTransport {
    private struct State {
        var offline = false
        var tokenStatus: Int?
        var loseNextTokenAnswer = false
        var refreshes = 0
    }

    private let state = Mutex(State())
    private let real = URLSessionTransport()

    var offline: Bool {
        get { state.withLock { $0.offline } }
        set { state.withLock { $0.offline = newValue } }
    }

    /// When set, `/v1/token` answers this status with an `unavailable` body, never reaching the server.
    var tokenStatus: Int? {
        get { state.withLock { $0.tokenStatus } }
        set { state.withLock { $0.tokenStatus = newValue } }
    }

    /// When set, the next `/v1/token` reaches the server but its answer is lost on the way back
    /// (the app is suspended, the connection drops): the server rotated, the client never heard.
    var loseNextTokenAnswer: Bool {
        get { state.withLock { $0.loseNextTokenAnswer } }
        set { state.withLock { $0.loseNextTokenAnswer = newValue } }
    }

    /// Refreshes sent to the server.
    var refreshes: Int { state.withLock { $0.refreshes } }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (offline, tokenStatus) = state.withLock { ($0.offline, $0.tokenStatus) }
        if offline { throw URLError(.notConnectedToInternet) }
        if request.url?.path == "/v1/token" {
            if let tokenStatus {
                let body = Data(#"{"error":"unavailable","error_description":"try later"}"#.utf8)
                return (body, HTTPURLResponse(url: request.url!, statusCode: tokenStatus, httpVersion: "HTTP/1.1", headerFields: ["Retry-After": "1"])!)
            }
            let lose = state.withLock { state in
                state.refreshes += 1
                defer { state.loseNextTokenAnswer = false }
                return state.loseNextTokenAnswer
            }
            if lose {
                _ = try await real.send(request)
                throw URLError(.networkConnectionLost)
            }
        }
        return try await real.send(request)
    }
}

/// A store that throws `keychainLocked` while `locked`, as the Keychain does before first unlock
/// or during prewarming (`errSecInteractionNotAllowed`).
final class LockableStore: CredentialStore {
    private let inner = InMemoryCredentialStore()
    private let flag = Mutex(false)

    var locked: Bool {
        get { flag.withLock { $0 } }
        set { flag.withLock { $0 = newValue } }
    }

    private func check() throws {
        if locked { throw LatchkeyError(.keychainLocked, "the Keychain is locked") }
    }

    func load() throws -> StoredSession? {
        try check()
        return try inner.load()
    }

    func save(_ session: StoredSession) throws {
        try check()
        try inner.save(session)
    }

    func delete() throws {
        try check()
        try inner.delete()
    }
}

/// Apple's answer, chosen by the test; `nil` means Apple cannot be reached.
struct FixedAppleState: AppleCredentialStateSource {
    var answer: AppleCredentialState?
    func state(forUserID: String) async throws -> AppleCredentialState {
        guard let answer else { throw URLError(.notConnectedToInternet) }
        return answer
    }
}

/// RFC 6238 codes, as an authenticator app computes them from the enrolment's secret.
enum Authenticator {
    static func base32Decode(_ text: String) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var buffer = 0, bits = 0
        var output: [UInt8] = []
        for character in text.uppercased() where character != "=" {
            guard let index = alphabet.firstIndex(of: character) else { continue }
            buffer = (buffer << 5 | index) & 0xffff
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(buffer >> bits & 0xff))
            }
        }
        return output
    }

    /// The six-digit code for `date` (30-second steps, HMAC-SHA1), `offset` steps away.
    static func code(secret: String, at date: Date = Date(), offset: Int64 = 0) -> String {
        let step = UInt64(Int64(date.timeIntervalSince1970) / 30 + offset)
        let counter = (0..<8).map { UInt8(truncatingIfNeeded: step >> UInt64(56 - 8 * $0)) }
        let mac = HMAC.sha1AuthenticationCode(for: counter, key: base32Decode(secret))
        let offset = Int(mac[19] & 0x0f)
        let value = (UInt32(mac[offset] & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])) % 1_000_000
        let text = String(value)
        return String(repeating: "0", count: 6 - text.count) + text
    }
}

/// A transport without a server: answers each request with what `answer` returns for it, and
/// keeps every request it was sent, so a test can check bodies and that nothing was sent at all.
final class ScriptedTransport: HTTPTransport {
    private let sent = Mutex<[URLRequest]>([])
    private let answer: @Sendable (URLRequest) -> (status: Int, body: String)

    init(_ answer: @escaping @Sendable (URLRequest) -> (status: Int, body: String)) {
        self.answer = answer
    }

    /// Every request sent so far, in order.
    var requests: [URLRequest] { sent.withLock { $0 } }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        sent.withLock { $0.append(request) }
        let (status, body) = answer(request)
        let response = HTTPURLResponse(
            url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "application/json"])!
        return (Data(body.utf8), response)
    }
}
