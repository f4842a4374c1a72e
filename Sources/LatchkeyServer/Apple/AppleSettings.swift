import FoundationEssentials
import LatchkeyCrypto
import Synchronization

/// The `apple` settings, checked and loaded: the `.p8` key parsed, the URLs parsed.
///
/// In development mode without a team id, Latchkey plays both sides: a sandbox team with a key
/// generated into the data directory, and every Apple URL pointing at the sandbox this server
/// mounts (known once the port is bound; see ``useSandbox(at:)``).
final class AppleSettings: Sendable {
    struct Endpoints: Sendable {
        var keys: URL
        var token: URL
        var revoke: URL
        /// Where web sign-in sends the browser (`apple.authorize_url`).
        var authorize: URL
    }

    /// The team's client-secret key; `nil` when no code exchange is configured.
    struct TeamKey: Sendable {
        var teamID: String
        var keyID: String
        var privateKey: P256.Signing.PrivateKey
    }

    let issuer: String
    let clientIDs: Set<String>
    /// The Services ID of web sign-in (`apple.web_client_id`); `nil` when web sign-in is off.
    /// Identity tokens of the web flow must name it as `aud`, whether or not `client_ids` does.
    let webClientID: String?
    /// Every client id of the team this server knows: `client_ids` and the Services ID. Apple's
    /// notifications may name any of them.
    var allClientIDs: Set<String> { clientIDs.union([webClientID].compactMap { $0 }) }
    let nonceRequired: Bool
    let teamKey: TeamKey?
    /// Whether this server answers for Apple itself (development mode without a team).
    let usesSandbox: Bool
    private let endpoints: Mutex<Endpoints>

    /// The team id and key id of the development sandbox's generated key.
    static let sandboxTeamID = "SANDBOX000"
    static let sandboxKeyID = "SANDBOXKEY"

    init(_ configuration: Configuration) throws(ConfigurationError) {
        let apple = configuration.apple
        issuer = apple.issuer
        clientIDs = Set(apple.clientIDs)
        webClientID = apple.webClientID.isEmpty ? nil : apple.webClientID
        nonceRequired = apple.nonce == "required"
        usesSandbox = configuration.dev && apple.teamID.isEmpty
        if usesSandbox {
            let path = URL(filePath: configuration.masterKeyFile).deletingLastPathComponent().appending(path: "apple-sandbox.p8").path(percentEncoded: false)
            teamKey = TeamKey(teamID: Self.sandboxTeamID, keyID: Self.sandboxKeyID, privateKey: try Self.sandboxKey(path: path))
        } else if !apple.teamID.isEmpty {
            let key: P256.Signing.PrivateKey
            do {
                key = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: apple.privateKeyFile, encoding: .utf8))
            } catch {
                throw ConfigurationError(problems: ["apple.private_key_file: \(apple.privateKeyFile) is not a P-256 private key in PEM (.p8)"])
            }
            teamKey = TeamKey(teamID: apple.teamID, keyID: apple.keyID, privateKey: key)
        } else {
            teamKey = nil
        }
        // Validated by ConfigurationLoader; the fallback is never used.
        func url(_ text: String) -> URL { URL(string: text) ?? URL(string: "https://appleid.apple.com")! }
        endpoints = Mutex(
            Endpoints(keys: url(apple.keysURL), token: url(apple.tokenURL), revoke: url(apple.revokeURL), authorize: url(apple.authorizeURL)))
    }

    var current: Endpoints { endpoints.withLock { $0 } }

    /// Points every Apple URL at the sandbox mounted under `publicURL`.
    func useSandbox(at publicURL: String) {
        let base = publicURL + "/sandbox/apple/auth"
        endpoints.withLock {
            $0 = Endpoints(
                keys: URL(string: base + "/keys")!, token: URL(string: base + "/token")!, revoke: URL(string: base + "/revoke")!,
                authorize: URL(string: base + "/authorize")!)
        }
    }

    /// Reads the sandbox team's key, creating it (mode 0600) on first start.
    private static func sandboxKey(path: String) throws(ConfigurationError) -> P256.Signing.PrivateKey {
        do {
            if let pem = try? String(contentsOfFile: path, encoding: .utf8) {
                return try P256.Signing.PrivateKey(pemRepresentation: pem)
            }
            let key = P256.Signing.PrivateKey()
            guard FileManager.default.createFile(atPath: path, contents: Data(key.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown)
            }
            return key
        } catch {
            throw ConfigurationError(problems: ["master_key_file: the sandbox Apple key \(path) next to it cannot be read or created"])
        }
    }
}
