import Foundation
import LatchkeyWire

/// App Attest for the SDK's own calls: with it configured, the client attests a key once and
/// sends an app check token in `X-Latchkey-App-Check` with every sign-up, sign-in and token
/// request, as a server with `app_attest.enforce` asks.
public struct AppAttestSetup: Sendable {
    /// The App Attest keys: ``DeviceCheckAppAttestKeys`` on a device.
    public var keys: any AppAttestKeys
    /// Where the attested key's id is kept between launches.
    public var keyIDStore: any AppAttestKeyIDStore

    /// App Attest with `keys`, the key id kept in `keyIDStore` (by default in `UserDefaults`: it is
    /// no secret).
    public init(keys: some AppAttestKeys, keyIDStore: some AppAttestKeyIDStore = UserDefaultsAppAttestKeyIDStore()) {
        self.keys = keys
        self.keyIDStore = keyIDStore
    }
}

/// Keeps the id of the attested App Attest key: a key is attested once, and the server refuses a
/// second attestation of it.
public protocol AppAttestKeyIDStore: Sendable {
    /// The kept key id, or `nil` when there is none.
    func load() -> String?
    /// Keeps `keyID`; `nil` forgets it (the server no longer knows the key).
    func save(_ keyID: String?)
}

/// The key id under one `UserDefaults` key of the standard defaults.
public struct UserDefaultsAppAttestKeyIDStore: AppAttestKeyIDStore {
    /// The defaults key.
    public var key: String

    public init(key: String = "latchkey.app-attest-key-id") {
        self.key = key
    }

    public func load() -> String? { UserDefaults.standard.string(forKey: key) }

    public func save(_ keyID: String?) { UserDefaults.standard.set(keyID, forKey: key) }
}

/// The app check tokens of one client: one kept until shortly before it expires, a new one
/// earned by an assertion (attesting a key first when none is kept, or when the server no longer
/// knows the kept one), one at a time.
actor AppCheckTokens {
    /// How long before its expiry a token is replaced, so it does not expire on the way.
    static let leeway: TimeInterval = 30

    private let setup: AppAttestSetup
    /// The server's App Attest endpoints, called without an app check token.
    private let api: ServerAPI
    private var current: AppCheckToken?
    private var inFlight: Task<AppCheckToken, any Error>?

    init(_ setup: AppAttestSetup, api: ServerAPI) {
        self.setup = setup
        self.api = api
    }

    /// A token that lives at least ``leeway`` more.
    ///
    /// - Throws: ``LatchkeyError``: the server's refusal of the attestation or the assertion;
    ///   what the keys throw (DeviceCheck's `DCError`) as it is.
    func token() async throws -> String {
        if let current, current.expiresAt.timeIntervalSinceNow > Self.leeway { return current.token }
        do {
            if let inFlight { return try await inFlight.value.token }
            let task = Task { try await self.earn() }
            inFlight = task
            defer { inFlight = nil }
            let token = try await task.value
            current = token
            return token.token
        } catch let failure as ServerAPI.Failure {
            throw failure.error
        }
    }

    /// Forgets `token`, which the server refused: the next call earns a new one.
    func discard(_ token: String) {
        if current?.token == token { current = nil }
    }

    private func earn() async throws -> AppCheckToken {
        if let keyID = setup.keyIDStore.load() {
            do {
                return try await api.appCheckToken(keyID: keyID, using: setup.keys)
            } catch let failure as ServerAPI.Failure where failure.body?.reason == "unknown_key" {
                setup.keyIDStore.save(nil)
            }
        }
        let keyID = try await api.attestAppKey(using: setup.keys)
        setup.keyIDStore.save(keyID)
        return try await api.appCheckToken(keyID: keyID, using: setup.keys)
    }
}

extension ServerAPI {
    /// Makes an App Attest key and has the server verify Apple's attestation of it.
    func attestAppKey(using keys: some AppAttestKeys) async throws -> String {
        let keyID = try await keys.generateKey()
        let challenge = try await appAttestChallenge()
        let attestation = try await keys.attestKey(keyID, clientDataHash: challenge.hash)
        _ = try await call(
            "POST", "/v1/app-attest/keys",
            body: WireAppAttestKeyRequest(keyID: keyID, attestation: Base64URL.encode(attestation), challenge: challenge.text),
            as: WireAppAttestKey.self)
        return keyID
    }

    /// An app check token earned by an assertion of the attested key `keyID`.
    func appCheckToken(keyID: String, using keys: some AppAttestKeys) async throws -> AppCheckToken {
        let challenge = try await appAttestChallenge()
        let assertion = try await keys.generateAssertion(keyID, clientDataHash: challenge.hash)
        let answer = try await call(
            "POST", "/v1/app-attest/assertions",
            body: WireAppAttestAssertionRequest(keyID: keyID, assertion: Base64URL.encode(assertion), challenge: challenge.text),
            as: WireAppCheckToken.self)
        return AppCheckToken(token: answer.appCheckToken, expiresAt: Date().addingTimeInterval(TimeInterval(answer.expiresIn)))
    }

    /// A fresh challenge as the server sent it, and SHA-256 of its bytes: each call passes it as
    /// the `clientDataHash`.
    private func appAttestChallenge() async throws -> (text: String, hash: Data) {
        let answer = try await call("POST", "/v1/app-attest/challenge", as: WireAppAttestChallenge.self)
        guard let bytes = Base64URL.decode(answer.challenge) else {
            throw LatchkeyError(.invalidResponse, "/v1/app-attest/challenge answered a challenge that is not base64url")
        }
        return (answer.challenge, Data(SHA256.hash(Array(bytes))))
    }
}
