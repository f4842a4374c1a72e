public import LatchkeyJSON

/// One account as `GET /v1/admin/users` lists it: the user, when they last signed in, how they
/// sign in and their second factors.
public struct WireAdminUser: WireEncodable, Hashable {
    public var user: WireUser
    /// The normalised username of a password account.
    public var username: String?
    /// When the account's newest session began; `nil` if it never signed in.
    public var lastSignInAt: WireTimestamp?
    /// When the account was disabled; `nil` when it is not.
    public var disabledAt: WireTimestamp?
    /// `password`, `passkey`, and each upstream provider (`apple`, …).
    public var methods: [String]
    /// `device_key`, `totp`, `recovery_code`, `passkey`.
    public var factors: [String]

    public init(
        user: WireUser, username: String?, lastSignInAt: WireTimestamp?, disabledAt: WireTimestamp? = nil, methods: [String], factors: [String]
    ) {
        self.user = user
        self.username = username
        self.lastSignInAt = lastSignInAt
        self.disabledAt = disabledAt
        self.methods = methods
        self.factors = factors
    }

    public var json: JSONValue {
        [
            "user": user.json, "username": .optional(username), "last_sign_in_at": .optional(lastSignInAt?.rfc3339),
            "disabled_at": .optional(disabledAt?.rfc3339), "methods": .array(methods.map(JSONValue.string)),
            "factors": .array(factors.map(JSONValue.string)),
        ]
    }
}

/// The answer of `POST /v1/admin/users/{id}/disable` and `/enable`: whether the account is
/// disabled now, and whether this call changed it.
public struct WireAdminAccountState: WireEncodable, Hashable {
    public var userID: String
    public var disabled: Bool
    public var changed: Bool

    public init(userID: String, disabled: Bool, changed: Bool) {
        self.userID = userID
        self.disabled = disabled
        self.changed = changed
    }

    public var json: JSONValue { ["user_id": .string(userID), "disabled": .bool(disabled), "changed": .bool(changed)] }
}

/// The body of `GET /v1/admin/users`: a page, newest first, and the cursor of the next one.
public struct WireAdminUserList: WireEncodable, Hashable {
    public var users: [WireAdminUser]
    /// Send it back as `cursor` for the next page; `nil` on the last.
    public var nextCursor: String?

    public init(users: [WireAdminUser], nextCursor: String?) {
        self.users = users
        self.nextCursor = nextCursor
    }

    public var json: JSONValue { ["users": .array(users.map(\.json)), "next_cursor": .optional(nextCursor)] }
}

/// A passkey or a device key as the admin API lists it.
public struct WireAdminCredential: WireEncodable, Hashable {
    public var id: String
    /// The passkey's name or the device key's label.
    public var name: String
    public var createdAt: WireTimestamp
    public var lastUsedAt: WireTimestamp?

    public init(id: String, name: String, createdAt: WireTimestamp, lastUsedAt: WireTimestamp?) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }

    public var json: JSONValue {
        ["id": .string(id), "name": .string(name), "created_at": .string(createdAt.rfc3339), "last_used_at": .optional(lastUsedAt?.rfc3339)]
    }
}

/// One audit entry (docs/reference.md, "Audit events"); `details.actor` names the admin who acted.
public struct WireAuditEntry: WireEncodable, Hashable {
    public var time: WireTimestamp
    public var userID: String?
    public var event: String
    public var outcome: String
    public var ip: String?
    public var requestID: String?
    public var details: [String: String]

    public init(
        time: WireTimestamp, userID: String?, event: String, outcome: String, ip: String?, requestID: String?, details: [String: String]
    ) {
        self.time = time
        self.userID = userID
        self.event = event
        self.outcome = outcome
        self.ip = ip
        self.requestID = requestID
        self.details = details
    }

    public var json: JSONValue {
        [
            "time": .string(time.rfc3339), "user_id": .optional(userID), "event": .string(event), "outcome": .string(outcome),
            "ip": .optional(ip), "request_id": .optional(requestID), "details": .object(details.mapValues(JSONValue.string)),
        ]
    }
}

/// The body of `GET /v1/admin/audit`: a page, newest first, and the cursor of the next one.
public struct WireAuditPage: WireEncodable, Hashable {
    public var entries: [WireAuditEntry]
    public var nextCursor: String?

    public init(entries: [WireAuditEntry], nextCursor: String?) {
        self.entries = entries
        self.nextCursor = nextCursor
    }

    public var json: JSONValue { ["entries": .array(entries.map(\.json)), "next_cursor": .optional(nextCursor)] }
}

/// An account's TOTP factor: when it was set up, and confirmed (`nil` while unconfirmed).
public struct WireAdminTOTP: WireEncodable, Hashable {
    public var createdAt: WireTimestamp
    public var confirmedAt: WireTimestamp?

    public init(createdAt: WireTimestamp, confirmedAt: WireTimestamp?) {
        self.createdAt = createdAt
        self.confirmedAt = confirmedAt
    }

    public var json: JSONValue { ["created_at": .string(createdAt.rfc3339), "confirmed_at": .optional(confirmedAt?.rfc3339)] }
}

/// The body of `GET /v1/admin/users/{id}`: the account whole.
public struct WireAdminUserDetail: WireEncodable, Hashable {
    public var account: WireAdminUser
    /// `admin` or `support` when the account holds a role of the admin API.
    public var role: String?
    public var identities: [WireIdentity]
    public var passkeys: [WireAdminCredential]
    public var deviceKeys: [WireAdminCredential]
    /// When TOTP was set up and confirmed; `nil` without TOTP.
    public var totp: WireAdminTOTP?
    /// Its live sessions, newest first (`current` is always false).
    public var sessions: [WireSessionInfo]
    public var grants: [WireGrant]
    /// Its newest audit entries, at most 50.
    public var audit: [WireAuditEntry]

    public init(
        account: WireAdminUser, role: String?, identities: [WireIdentity], passkeys: [WireAdminCredential], deviceKeys: [WireAdminCredential],
        totp: WireAdminTOTP?, sessions: [WireSessionInfo], grants: [WireGrant], audit: [WireAuditEntry]
    ) {
        self.account = account
        self.role = role
        self.identities = identities
        self.passkeys = passkeys
        self.deviceKeys = deviceKeys
        self.totp = totp
        self.sessions = sessions
        self.grants = grants
        self.audit = audit
    }

    public var json: JSONValue {
        [
            "account": account.json, "role": .optional(role), "identities": .array(identities.map(\.json)),
            "passkeys": .array(passkeys.map(\.json)), "device_keys": .array(deviceKeys.map(\.json)),
            "totp": totp?.json ?? .null,
            "sessions": .array(sessions.map(\.json)), "grants": .array(grants.map(\.json)), "audit": .array(audit.map(\.json)),
        ]
    }
}

/// The optional body of `POST /v1/admin/users/{id}/sessions/revoke`: one session, or all.
public struct WireAdminSessionRevokeRequest: WireCodable, Hashable {
    /// The session to end; `nil` ends every live session of the account.
    public var sessionID: String?

    public init(sessionID: String? = nil) {
        self.sessionID = sessionID
    }

    public var json: JSONValue { sessionID.map { ["session_id": .string($0)] } ?? [:] }

    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(sessionID: try WireObject(json).optionalString("session_id"))
    }
}

/// The answer of `POST /v1/admin/users/{id}/sessions/revoke`: the sessions it ended.
public struct WireAdminSessionRevokeResponse: WireEncodable, Hashable {
    public var revoked: [String]

    public init(revoked: [String]) {
        self.revoked = revoked
    }

    public var json: JSONValue { ["revoked": .array(revoked.map(JSONValue.string))] }
}

/// An OAuth client as `GET /v1/admin/clients` lists it (never its secret).
public struct WireAdminClient: WireEncodable, Hashable {
    public var clientID: String
    public var name: String
    public var confidential: Bool
    public var firstParty: Bool
    public var redirectURIs: [String]
    public var postLogoutRedirectURIs: [String]
    public var grantTypes: [String]
    public var scopes: [String]
    public var idTokenAlgorithm: String
    public var requireDPoP: Bool
    public var createdAt: WireTimestamp

    public init(
        clientID: String, name: String, confidential: Bool, firstParty: Bool, redirectURIs: [String], postLogoutRedirectURIs: [String],
        grantTypes: [String], scopes: [String], idTokenAlgorithm: String, requireDPoP: Bool, createdAt: WireTimestamp
    ) {
        self.clientID = clientID
        self.name = name
        self.confidential = confidential
        self.firstParty = firstParty
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.grantTypes = grantTypes
        self.scopes = scopes
        self.idTokenAlgorithm = idTokenAlgorithm
        self.requireDPoP = requireDPoP
        self.createdAt = createdAt
    }

    public var json: JSONValue {
        [
            "client_id": .string(clientID), "name": .string(name), "confidential": .bool(confidential), "first_party": .bool(firstParty),
            "redirect_uris": .array(redirectURIs.map(JSONValue.string)),
            "post_logout_redirect_uris": .array(postLogoutRedirectURIs.map(JSONValue.string)),
            "grant_types": .array(grantTypes.map(JSONValue.string)), "scopes": .array(scopes.map(JSONValue.string)),
            "id_token_algorithm": .string(idTokenAlgorithm), "require_dpop": .bool(requireDPoP), "created_at": .string(createdAt.rfc3339),
        ]
    }
}

/// The body of `POST /v1/admin/clients`: what `latchkey clients add` takes.
public struct WireAdminClientRegistration: WireCodable, Hashable {
    public var name: String
    public var redirectURIs: [String]
    public var postLogoutRedirectURIs: [String]
    /// `authorization_code`, `client_credentials`, `device_code`; the defaults when absent.
    public var grantTypes: [String]?
    /// The defaults (`openid profile email offline_access`) when absent.
    public var scopes: [String]?
    public var confidential: Bool
    public var firstParty: Bool
    public var requireDPoP: Bool

    public init(
        name: String, redirectURIs: [String], postLogoutRedirectURIs: [String] = [], grantTypes: [String]? = nil, scopes: [String]? = nil,
        confidential: Bool = false, firstParty: Bool = false, requireDPoP: Bool = false
    ) {
        self.name = name
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.grantTypes = grantTypes
        self.scopes = scopes
        self.confidential = confidential
        self.firstParty = firstParty
        self.requireDPoP = requireDPoP
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "name": .string(name), "redirect_uris": .array(redirectURIs.map(JSONValue.string)),
            "post_logout_redirect_uris": .array(postLogoutRedirectURIs.map(JSONValue.string)), "confidential": .bool(confidential),
            "first_party": .bool(firstParty), "require_dpop": .bool(requireDPoP),
        ]
        if let grantTypes { members["grant_types"] = .array(grantTypes.map(JSONValue.string)) }
        if let scopes { members["scopes"] = .array(scopes.map(JSONValue.string)) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            name: try object.string("name"), redirectURIs: try object.optionalStrings("redirect_uris") ?? [],
            postLogoutRedirectURIs: try object.optionalStrings("post_logout_redirect_uris") ?? [], grantTypes: try object.optionalStrings("grant_types"),
            scopes: try object.optionalStrings("scopes"), confidential: try object.optionalBool("confidential") ?? false,
            firstParty: try object.optionalBool("first_party") ?? false, requireDPoP: try object.optionalBool("require_dpop") ?? false)
    }
}

/// A client's credentials, as registering it or rotating its secret answers: the secret is shown
/// this once.
public struct WireAdminClientCredentials: WireEncodable, Hashable {
    public var clientID: String
    public var clientSecret: String?

    public init(clientID: String, clientSecret: String?) {
        self.clientID = clientID
        self.clientSecret = clientSecret
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["client_id": .string(clientID)]
        if let clientSecret { members["client_secret"] = .string(clientSecret) }
        return .object(members)
    }
}

/// A signing key as `GET /v1/admin/keys` lists it.
public struct WireAdminSigningKey: WireEncodable, Hashable {
    public var kid: String
    public var algorithm: String
    /// `pending`, `active`, `retired` or `expired`.
    public var state: String
    public var createdAt: WireTimestamp
    public var activatesAt: WireTimestamp
    public var retiresAt: WireTimestamp?
    /// When it leaves the JWKS.
    public var expiresAt: WireTimestamp?

    public init(
        kid: String, algorithm: String, state: String, createdAt: WireTimestamp, activatesAt: WireTimestamp, retiresAt: WireTimestamp?,
        expiresAt: WireTimestamp?
    ) {
        self.kid = kid
        self.algorithm = algorithm
        self.state = state
        self.createdAt = createdAt
        self.activatesAt = activatesAt
        self.retiresAt = retiresAt
        self.expiresAt = expiresAt
    }

    public var json: JSONValue {
        [
            "kid": .string(kid), "algorithm": .string(algorithm), "state": .string(state), "created_at": .string(createdAt.rfc3339),
            "activates_at": .string(activatesAt.rfc3339), "retires_at": .optional(retiresAt?.rfc3339), "expires_at": .optional(expiresAt?.rfc3339),
        ]
    }
}

/// The optional body of `POST /v1/admin/keys/rotate`: what `latchkey keys rotate` takes.
public struct WireAdminKeyRotation: WireCodable, Hashable {
    /// `ES256` or `RS256`; both when absent.
    public var algorithm: String?
    /// Seconds before the new key signs, at least 330; 900 when absent.
    public var activateIn: Int?

    public init(algorithm: String? = nil, activateIn: Int? = nil) {
        self.algorithm = algorithm
        self.activateIn = activateIn
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [:]
        if let algorithm { members["algorithm"] = .string(algorithm) }
        if let activateIn { members["activate_in"] = .integer(activateIn) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(algorithm: try object.optionalString("algorithm"), activateIn: try object.optionalInt("activate_in"))
    }
}

/// The body of `PATCH /v1/admin/clients/{id}`: the members to change; an absent one stays.
public struct WireAdminClientChange: WireCodable, Hashable {
    public var name: String?
    public var redirectURIs: [String]?
    public var postLogoutRedirectURIs: [String]?
    public var scopes: [String]?

    public init(name: String? = nil, redirectURIs: [String]? = nil, postLogoutRedirectURIs: [String]? = nil, scopes: [String]? = nil) {
        self.name = name
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.scopes = scopes
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [:]
        if let name { members["name"] = .string(name) }
        if let redirectURIs { members["redirect_uris"] = .array(redirectURIs.map(JSONValue.string)) }
        if let postLogoutRedirectURIs { members["post_logout_redirect_uris"] = .array(postLogoutRedirectURIs.map(JSONValue.string)) }
        if let scopes { members["scopes"] = .array(scopes.map(JSONValue.string)) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            name: try object.optionalString("name"), redirectURIs: try object.optionalStrings("redirect_uris"),
            postLogoutRedirectURIs: try object.optionalStrings("post_logout_redirect_uris"), scopes: try object.optionalStrings("scopes"))
    }
}
