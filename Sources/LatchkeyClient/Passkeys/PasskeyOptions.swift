public import Foundation
public import LatchkeyJSON

/// The server's `PublicKeyCredentialCreationOptionsJSON` (WebAuthn Level 3 §5.4), read: what an
/// authenticator needs to create a passkey.
public struct PasskeyCreationOptions: Sendable, Hashable {
    /// The options as the server sent them.
    public var json: JSONValue
    /// `rp.id`: the domain the passkey is bound to.
    public var relyingPartyID: String
    /// `rp.name`.
    public var relyingPartyName: String
    /// The random challenge the attestation covers.
    public var challenge: Data
    /// `user.id`: the account's user handle, which every assertion gives back.
    public var userID: Data
    /// `user.name`: what the passkey manager lists the passkey under.
    public var userName: String
    /// `user.displayName`.
    public var userDisplayName: String
    /// The COSE algorithms the server accepts, in its order of preference (`-7` is ES256).
    public var algorithms: [Int]
    /// `excludeCredentials`: the account's passkeys; an authenticator holding one of them must not
    /// make another.
    public var excludedCredentialIDs: [Data]
    /// `authenticatorSelection.userVerification`: `required`, `preferred` or `discouraged`.
    public var userVerification: String

    /// Reads `json`.
    ///
    /// - Throws: ``LatchkeyError/Code/invalidResponse`` when a required member is missing or is
    ///   not base64url.
    public init(json: JSONValue) throws {
        let reader = OptionsReader(json: json, what: "the passkey creation options")
        self.json = json
        relyingPartyID = try reader.string(json["rp"]?["id"], "rp.id")
        relyingPartyName = json["rp"]?["name"]?.stringValue ?? relyingPartyID
        challenge = try reader.bytes(json["challenge"], "challenge")
        userID = try reader.bytes(json["user"]?["id"], "user.id")
        userName = try reader.string(json["user"]?["name"], "user.name")
        userDisplayName = json["user"]?["displayName"]?.stringValue ?? userName
        algorithms = (json["pubKeyCredParams"]?.arrayValue ?? []).compactMap { $0["alg"]?.numberValue.map { Int($0) } }
        excludedCredentialIDs = try reader.descriptors(json["excludeCredentials"], "excludeCredentials")
        userVerification = json["authenticatorSelection"]?["userVerification"]?.stringValue ?? "preferred"
    }
}

/// The server's `PublicKeyCredentialRequestOptionsJSON` (WebAuthn Level 3 §5.5), read: what an
/// authenticator needs to sign in with a passkey.
public struct PasskeyAssertionOptions: Sendable, Hashable {
    /// The options as the server sent them.
    public var json: JSONValue
    /// `rpId`: the domain of the passkeys that may answer.
    public var relyingPartyID: String
    /// The random challenge the assertion signs.
    public var challenge: Data
    /// `allowCredentials`: the passkeys that may answer; empty for any of the relying party's
    /// (discoverable credentials: AutoFill, sign-in without a username).
    public var allowedCredentialIDs: [Data]
    /// `userVerification`: `required`, `preferred` or `discouraged`.
    public var userVerification: String

    /// Reads `json`.
    ///
    /// - Throws: ``LatchkeyError/Code/invalidResponse`` when a required member is missing or is
    ///   not base64url.
    public init(json: JSONValue) throws {
        let reader = OptionsReader(json: json, what: "the passkey request options")
        self.json = json
        relyingPartyID = try reader.string(json["rpId"], "rpId")
        challenge = try reader.bytes(json["challenge"], "challenge")
        allowedCredentialIDs = try reader.descriptors(json["allowCredentials"], "allowCredentials")
        userVerification = json["userVerification"]?.stringValue ?? "preferred"
    }
}

/// Reads the members of an options object, naming the first bad one.
private struct OptionsReader {
    let json: JSONValue
    let what: String

    func fail(_ member: String) -> LatchkeyError {
        LatchkeyError(.invalidResponse, "\(what) lack \(member), or it is not what WebAuthn describes")
    }

    func string(_ value: JSONValue?, _ member: String) throws -> String {
        guard let text = value?.stringValue, !text.isEmpty else { throw fail(member) }
        return text
    }

    func bytes(_ value: JSONValue?, _ member: String) throws -> Data {
        guard let text = value?.stringValue, let bytes = Base64URL.decode(text) else { throw fail(member) }
        return bytes
    }

    /// `[{type: "public-key", id}]`; an absent list is empty.
    func descriptors(_ value: JSONValue?, _ member: String) throws -> [Data] {
        guard let value, value != .null else { return [] }
        guard let list = value.arrayValue else { throw fail(member) }
        return try list.map { try bytes($0["id"], member + "[].id") }
    }
}
