import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON

/// One WebAuthn ceremony: the options a client was given, answered once, success or not.
///
/// A ceremony is not stored when its options are given: it travels sealed (AES-GCM under the
/// master key) inside the `flow_id`, so asking for options writes nothing, however many are
/// asked for and by whom. Only an answer writes: the flow is spent by a row in
/// `passkey_ceremonies` (``PasskeyCeremonyRepository/spend(_:at:on:)``), kept until the flow
/// would have expired.
struct PasskeyCeremony: Sendable, Hashable {
    /// What the answer does.
    enum Kind: String, Sendable {
        /// A passkey for a signed-in account.
        case registration
        /// A new account with a passkey ("create with a passkey").
        case signup
        /// A sign-in: discoverable (AutoFill) or for a named account.
        case signIn = "sign-in"
        /// A passkey as the second factor after a password.
        case secondFactor = "second-factor"
    }

    /// Random; names the spent flow.
    var id: String
    var kind: Kind
    /// At least 32 random bytes, as the options sent them.
    var challenge: [UInt8]
    /// The account it is for: a registration's, a second factor's, a named sign-in's.
    var userID: String?
    /// The user handle the options named: the account's (registration) or a new one (sign-up).
    var userHandle: [UInt8]?
    /// A sign-up's username, or the name a sign-in asked for.
    var username: String?
    var givenName: String?
    var familyName: String?
    /// iOS 18's automatic passkey upgrade: a registration without user presence.
    var conditional: Bool
    var createdAt: Date
    var expiresAt: Date

    /// The longest `flow_id` a client may send back: a sign-up's names and address included.
    static let maxFlowIDLength = 2048

    static let sealingContext = "passkey_ceremony"

    /// The `flow_id` that carries this ceremony: `pkf_` and the sealed ceremony, base64url.
    func flowID(sealedWith masterKey: MasterKey) throws -> String {
        var members: [String: JSONValue] = [
            "id": .string(id), "kind": .string(kind.rawValue), "challenge": .string(Base64URL.encode(challenge)),
            "conditional": .bool(conditional), "created_at": .number(createdAt.timeIntervalSince1970.rounded(.down)),
            "expires_at": .number(expiresAt.timeIntervalSince1970.rounded(.down)),
        ]
        if let userID { members["user_id"] = .string(userID) }
        if let userHandle { members["user_handle"] = .string(Base64URL.encode(userHandle)) }
        if let username { members["username"] = .string(username) }
        if let givenName { members["given_name"] = .string(givenName) }
        if let familyName { members["family_name"] = .string(familyName) }
        return "pkf_" + Base64URL.encode(try masterKey.seal(JSONValue.object(members).serialized, context: Self.sealingContext))
    }
}

extension PasskeyCeremony {

    /// Opens a `flow_id` this server (or another sharing its master key) sealed.
    ///
    /// - Returns: nil for anything else: malformed, forged, or sealed under another key.
    init?(flowID: String, masterKey: MasterKey) {
        guard flowID.utf8.count <= Self.maxFlowIDLength, flowID.hasPrefix("pkf_"), let sealed = Base64URL.decode(String(flowID.dropFirst(4))),
            let plain = try? masterKey.unseal(sealed, context: Self.sealingContext), let json = try? JSONValue(parsing: plain),
            let id = json["id"]?.stringValue, let kind = json["kind"]?.stringValue.flatMap(Kind.init(rawValue:)),
            let challenge = json["challenge"]?.stringValue.flatMap({ Base64URL.decode($0) }), let conditional = json["conditional"]?.boolValue,
            let created = json["created_at"]?.numberValue, let expires = json["expires_at"]?.numberValue
        else { return nil }
        self.init(
            id: id, kind: kind, challenge: challenge, userID: json["user_id"]?.stringValue,
            userHandle: json["user_handle"]?.stringValue.flatMap { Base64URL.decode($0) }, username: json["username"]?.stringValue,
            givenName: json["given_name"]?.stringValue, familyName: json["family_name"]?.stringValue, conditional: conditional,
            createdAt: Date(timeIntervalSince1970: created), expiresAt: Date(timeIntervalSince1970: expires))
    }
}
