package import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE
package import LatchkeyStore

/// What an operator registers a client with (`latchkey clients add`).
package struct ClientRegistration: Sendable {
    /// The name users see on the consent page.
    package var name: String
    /// Where authorization responses may go; checked by the S20 rules (``RedirectURI``).
    package var redirectURIs: [String]
    /// Where RP-initiated logout may send the browser; the same rules.
    package var postLogoutRedirectURIs: [String]
    /// Whether the client gets a secret.
    package var confidential: Bool
    /// Whether the client is one of ours and skips consent.
    package var firstParty: Bool
    /// The grants it may use; `nil` for the defaults (``ClientService/defaultGrantTypes(confidential:)``).
    package var grantTypes: Set<OAuthClient.GrantType>?
    /// The scopes it may be granted; `nil` for ``ClientService/defaultScopes``.
    package var scopes: Set<String>?
    /// `RS256` or `ES256`.
    package var idTokenAlgorithm: String
    /// The client's public keys (a JWK Set, JSON) when it authenticates with `private_key_jwt`
    /// instead of a secret: it is confidential then, and gets no secret.
    package var jwks: String?
    /// Whether it gets only DPoP-bound tokens.
    package var requiresDPoP = false

    package init(
        name: String, redirectURIs: [String], postLogoutRedirectURIs: [String] = [], confidential: Bool = false, firstParty: Bool = false,
        grantTypes: Set<OAuthClient.GrantType>? = nil, scopes: Set<String>? = nil, idTokenAlgorithm: String = "RS256", jwks: String? = nil
    ) {
        self.jwks = jwks
        self.name = name
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.confidential = confidential
        self.firstParty = firstParty
        self.grantTypes = grantTypes
        self.scopes = scopes
        self.idTokenAlgorithm = idTokenAlgorithm
    }
}

/// Registered OAuth clients: registration with the S20 redirect-URI rules, removal, secret
/// rotation and client authentication at the token endpoint. Every change is written with its
/// audit entry in one transaction (S27, S28).
///
/// Client ids are 128 random bits and secrets 256, both base64url; only a secret's SHA-256 is
/// stored (S7), and the secret itself is returned once, by ``register(_:)`` or ``rotateSecret(id:)``.
package struct ClientService: Sendable {
    /// The scopes a client may be granted unless registered with others.
    package static let defaultScopes: Set<String> = ["openid", "profile", "email", "offline_access"]
    /// The ID-token algorithms a client may ask for.
    package static let idTokenAlgorithms: Set<String> = ["RS256", "ES256"]
    /// The longest client name.
    static let maximumNameLength = 200

    /// The grants a client may use unless registered with others: the authorization code and
    /// refresh tokens, and for a confidential client also `client_credentials`.
    package static func defaultGrantTypes(confidential: Bool) -> Set<OAuthClient.GrantType> {
        confidential ? [.authorizationCode, .refreshToken, .clientCredentials] : [.authorizationCode, .refreshToken]
    }

    let database: any SQLDatabase
    let clock: @Sendable () -> Date
    let repository = ClientRepository()
    let assertions = ClientAssertionRepository()
    let audit: AuditLog
    /// The clients the endpoints read, emptied on every announced change (``followChanges()``).
    let cache = ClientCache()

    package init(database: any SQLDatabase, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.clock = clock
        self.audit = AuditLog(database: database)
    }

    /// Registers a client.
    ///
    /// - Returns: The client and, for a confidential one, its secret: shown this once, stored
    ///   only as a hash.
    /// - Throws: `invalid_request` naming what is wrong (a redirect URI's broken rule, an
    ///   unknown algorithm, a bad scope); nothing is written then.
    /// - Parameter context: Who asked, for the audit entry: the CLI, or an admin of the admin API.
    package func register(_ registration: ClientRegistration, context: RequestContext = RequestContext()) async throws -> (
        client: OAuthClient, secret: String?
    ) {
        try await register(registration, id: Self.newClientID(), context: context)
    }

    /// The client `latchkey serve --dev` registers on its first start, so an app, `latchkey demo`
    /// or a person can walk the hosted pages (and "Continue with Sandbox") with no set-up: a
    /// first-party public client with a native app's redirect URI and a loopback one.
    package static let development = (
        id: "cl_development",
        registration: ClientRegistration(
            name: "Development App", redirectURIs: ["com.example.app:/oauth/callback", "http://127.0.0.1/callback"], firstParty: true)
    )

    /// Registers ``development`` unless a client has its id (an earlier start, or an operator
    /// who removed and re-added it differently).
    package func registerDevelopmentClient() async throws {
        guard try await client(id: Self.development.id) == nil else { return }
        _ = try await register(Self.development.registration, id: Self.development.id, context: RequestContext())
    }

    /// The admin console's client (`/admin`): first-party and public (PKCE), the scopes
    /// `openid admin`, one redirect URI `<public URL>/admin/callback`.
    static let consoleID = "cl_console"

    /// The console's client: registered on the console's first request when no client has its
    /// id, its redirect URI moved to `redirectURI` when the server's public URL changed.
    func consoleClient(redirectURI: String) async throws -> OAuthClient {
        if let client = try await client(id: Self.consoleID) {
            guard client.redirectURIs != [redirectURI] else { return client }
            return try await update(id: Self.consoleID, ClientChange(name: nil, redirectURIs: [redirectURI], postLogoutRedirectURIs: nil, scopes: nil))
        }
        let registration = ClientRegistration(name: "Latchkey console", redirectURIs: [redirectURI], firstParty: true, scopes: ["openid", "admin"])
        do {
            return try await register(registration, id: Self.consoleID, context: RequestContext()).client
        } catch {
            // Another request registered it first.
            guard let client = try await client(id: Self.consoleID) else { throw error }
            return client
        }
    }

    private func register(_ registration: ClientRegistration, id: String, context: RequestContext) async throws -> (
        client: OAuthClient, secret: String?
    ) {
        var registration = registration
        // Keys are credentials too: a client with them is confidential.
        if registration.jwks != nil { registration.confidential = true }
        // Whole seconds, as the row keeps it, so the client returned is the one read back later.
        let now = Date(timeIntervalSince1970: clock().timeIntervalSince1970.rounded(.down))
        let client = try Self.client(for: registration, id: id, at: now)
        if let jwks = registration.jwks { try ClientAssertion.checkRegistered(jwks) }
        let jwks = registration.jwks
        let secret = registration.confidential && jwks == nil ? Identifiers.secret() : nil
        var details = [
            "client_id": client.id, "name": client.name, "confidential": String(client.isConfidential),
            "first_party": String(client.isFirstParty),
        ]
        if client.requiresDPoP { details["require_dpop"] = "true" }
        try await changing { [details] connection in
            try self.repository.insert(client, secretHash: secret?.sha256, jwks: jwks, on: connection)
            try self.audit.record(context.entry(.clientRegistered, .success, userID: nil, now: client.createdAt, details: details), on: connection)
        }
        return (client, secret)
    }

    /// The client with this id, or `nil`.
    package func client(id: String) async throws -> OAuthClient? {
        try await stored(id: id)?.client
    }

    /// The client with this id and its credentials, from the cache when it is there.
    private func stored(id: String) async throws -> ClientRepository.StoredClient? {
        try await cache.stored(id: id) { try await database.read { try self.repository.stored(id: id, on: $0) } }
    }

    /// Every client, oldest first.
    package func list() async throws -> [OAuthClient] {
        try await database.read { try self.repository.list(on: $0) }
    }

    /// Removes a client; its sessions, codes and consents go with it.
    ///
    /// - Returns: Whether there was such a client.
    package func remove(id: String, context: RequestContext = RequestContext()) async throws -> Bool {
        let now = clock()
        return try await changing { connection in
            guard try self.repository.delete(id: id, on: connection) else { return false }
            try self.audit.record(context.entry(.clientRemoved, .success, userID: nil, now: now, details: ["client_id": id]), on: connection)
            return true
        }
    }

    /// What `PATCH /v1/admin/clients/{id}` may change; `nil` keeps a member.
    package struct ClientChange: Sendable, Hashable {
        package var name: String?
        package var redirectURIs: [String]?
        package var postLogoutRedirectURIs: [String]?
        package var scopes: Set<String>?

        package init(name: String? = nil, redirectURIs: [String]? = nil, postLogoutRedirectURIs: [String]? = nil, scopes: Set<String>? = nil) {
            self.name = name
            self.redirectURIs = redirectURIs
            self.postLogoutRedirectURIs = postLogoutRedirectURIs
            self.scopes = scopes
        }
    }

    /// Changes a client's name, redirect URIs or scopes under the rules of registration (S20),
    /// audited `client.updated` with the fields changed, in the same transaction.
    ///
    /// - Returns: The client as it is now.
    /// - Throws: `not_found` for an unknown client; `invalid_request` as registering does.
    package func update(id: String, _ change: ClientChange, context: RequestContext = RequestContext()) async throws -> OAuthClient {
        let now = clock()
        return try await changing { connection in
            guard let current = try self.repository.find(id: id, on: connection) else { throw AuthError.notFound("no client \(id)") }
            var registration = ClientRegistration(
                name: change.name ?? current.name, redirectURIs: change.redirectURIs ?? current.redirectURIs,
                postLogoutRedirectURIs: change.postLogoutRedirectURIs ?? current.postLogoutRedirectURIs, confidential: current.isConfidential,
                firstParty: current.isFirstParty, grantTypes: current.grantTypes, scopes: change.scopes ?? current.scopes,
                idTokenAlgorithm: current.idTokenAlgorithm)
            registration.requiresDPoP = current.requiresDPoP
            let updated = try Self.client(for: registration, id: id, at: current.createdAt)
            guard try self.repository.update(updated, on: connection) else { throw AuthError.notFound("no client \(id)") }
            let fields = [
                ("name", change.name), ("redirect_uris", change.redirectURIs.map { _ in "" }),
                ("post_logout_redirect_uris", change.postLogoutRedirectURIs.map { _ in "" }), ("scopes", change.scopes.map { _ in "" }),
            ].filter { $0.1 != nil }.map(\.0)
            try self.audit.record(
                context.entry(.clientUpdated, .success, userID: nil, now: now, details: ["client_id": id, "fields": fields.joined(separator: ",")]),
                on: connection)
            return updated
        }
    }

    /// Gives a confidential client a new secret; the old one stops working at once.
    ///
    /// - Returns: The new secret, shown this once.
    /// - Throws: `not_found` for an unknown client; `invalid_request` for a public one, which
    ///   has no secret to rotate.
    package func rotateSecret(id: String, context: RequestContext = RequestContext()) async throws -> String {
        let now = clock()
        let secret = Identifiers.secret()
        try await changing { connection in
            guard let client = try self.repository.find(id: id, on: connection) else { throw AuthError.notFound("no client \(id)") }
            guard client.isConfidential, try self.repository.replaceSecret(id: id, hash: secret.sha256, at: now, on: connection) else {
                throw AuthError.invalidRequest("client \(id) has no secret to rotate: it is public or authenticates with private_key_jwt")
            }
            try self.audit.record(context.entry(.clientSecretRotated, .success, userID: nil, now: now, details: ["client_id": id]), on: connection)
        }
        return secret
    }

    /// Client authentication at the token endpoint: a confidential client must send its secret
    /// (its SHA-256 compared in constant time with the stored one), a public client must send none.
    ///
    /// - Parameters:
    ///   - id: The `client_id` the request named.
    ///   - secret: The `client_secret` it sent, if any.
    /// - Returns: The authenticated client.
    /// - Throws: `invalid_client` for an unknown client, a wrong or missing secret, or a secret
    ///   sent by a public client; the message never says which of an id and a secret was wrong.
    package func authenticate(id: String, secret: String?) async throws -> OAuthClient {
        let failed = AuthError(.invalidClient, "client authentication failed")
        guard let stored = try await stored(id: id) else { throw failed }
        guard stored.jwks == nil else {
            throw AuthError(.invalidClient, "client authentication failed: this client authenticates with private_key_jwt")
        }
        switch (stored.secretHash, secret) {
        case (nil, nil):
            return stored.client
        case (nil, .some):
            throw AuthError(.invalidClient, "client authentication failed: a public client sends no client_secret")
        case (.some, nil):
            throw AuthError(.invalidClient, "client authentication failed: this client must send its client_secret")
        case (.some(let hash), .some(let secret)):
            guard ConstantTime.equals(secret.sha256, hash) else { throw failed }
            return stored.client
        }
    }

    /// `private_key_jwt` client authentication (RFC 7523 §2.2, OpenID Connect Core §9): an
    /// assertion signed by one of the client's registered keys, `iss` and `sub` its client id,
    /// `aud` one of `audiences`, alive at most five minutes, its `jti` never seen before.
    ///
    /// - Parameters:
    ///   - assertion: The `client_assertion`.
    ///   - clientID: The `client_id` the request named, if it named one.
    ///   - audiences: What `aud` may be: the issuer and the endpoint's URL.
    /// - Throws: `invalid_client`, saying which check failed but never anything of the key.
    package func authenticate(assertion: String, clientID: String?, audiences: Set<String>) async throws -> OAuthClient {
        let now = clock()
        let subject = try ClientAssertion.subject(of: assertion)
        guard clientID == nil || clientID == subject else {
            throw AuthError(.invalidClient, "client authentication failed: client_id differs from the assertion's sub")
        }
        guard let stored = try await stored(id: subject), let jwks = stored.jwks else {
            throw AuthError(.invalidClient, "client authentication failed: no client with this id authenticates with private_key_jwt")
        }
        let checked = try ClientAssertion.verify(assertion, clientID: subject, jwks: jwks, audiences: audiences, now: now)
        let fresh = try await database.write { connection in
            try self.assertions.remember(clientID: subject, jti: checked.jti, until: checked.rememberUntil, on: connection)
        }
        guard fresh else { throw AuthError(.invalidClient, "client authentication failed: the assertion was already used") }
        return stored.client
    }

    // MARK: Changes

    /// Empties this process's cache whenever any process announces a change to a client, until
    /// the subscription is cancelled.
    package func followChanges() -> SQLChangeSubscription {
        database.subscribe(to: ClientRepository.changeChannel) { [cache] in cache.invalidate() }
    }

    /// A write that changes clients (the repository announces it in the transaction), after
    /// which this process's cache is emptied at once, whatever the write did.
    private func changing<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        defer { cache.invalidate() }
        return try await database.write(body)
    }

    // MARK: Checks

    /// A fresh client id: `cl_` and 128 random bits, base64url. The prefix keeps an id from
    /// starting with `-` on a command line.
    static func newClientID() -> String {
        "cl_" + Base64URL.encode(SecureRandom.bytes(count: 16))
    }

    /// The client a registration describes, checked.
    ///
    /// - Throws: `invalid_request` naming what is wrong.
    static func client(for registration: ClientRegistration, id: String, at now: Date) throws(AuthError) -> OAuthClient {
        let trimmed = registration.name.drop(while: \.isWhitespace)
        let name = String(trimmed.prefix(trimmed.count - trimmed.reversed().prefix(while: \.isWhitespace).count))
        guard !name.isEmpty else { throw .invalidRequest("a client needs a name") }
        guard name.count <= maximumNameLength else { throw .invalidRequest("the name is longer than \(maximumNameLength) characters") }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidRequest("the name must not hold control characters")
        }
        let grantTypes = registration.grantTypes ?? defaultGrantTypes(confidential: registration.confidential)
        guard !grantTypes.isEmpty else { throw .invalidRequest("a client needs at least one grant type") }
        if grantTypes.contains(.clientCredentials), !registration.confidential {
            throw .invalidRequest("client_credentials is for confidential clients only")
        }
        let redirectURIs = unique(registration.redirectURIs)
        if grantTypes.contains(.authorizationCode), redirectURIs.isEmpty {
            throw .invalidRequest("a client of the authorization code grant needs at least one redirect URI")
        }
        for uri in redirectURIs { try RedirectURI.validate(uri, confidential: registration.confidential) }
        let postLogoutRedirectURIs = unique(registration.postLogoutRedirectURIs)
        for uri in postLogoutRedirectURIs {
            do {
                try RedirectURI.validate(uri, confidential: registration.confidential)
            } catch {
                throw .invalidRequest("post-logout " + error.message)
            }
        }
        let scopes = registration.scopes ?? defaultScopes
        for scope in scopes where !isScopeToken(scope) {
            throw .invalidRequest("scope \(scope.debugDescription) is not a scope token (RFC 6749 §3.3: printable ASCII but space, \" and \\)")
        }
        guard idTokenAlgorithms.contains(registration.idTokenAlgorithm) else {
            throw .invalidRequest("the ID-token algorithm must be RS256 or ES256, not \(registration.idTokenAlgorithm)")
        }
        var client = OAuthClient(
            id: id, name: name, isConfidential: registration.confidential, isFirstParty: registration.firstParty, redirectURIs: redirectURIs,
            postLogoutRedirectURIs: postLogoutRedirectURIs, grantTypes: grantTypes, scopes: scopes,
            idTokenAlgorithm: registration.idTokenAlgorithm, createdAt: now)
        client.requiresDPoP = registration.requiresDPoP
        return client
    }

    /// The grants a registration names (`clients add --grant`, `POST /v1/admin/clients`), with
    /// `refresh_token` beside a grant that signs a user in; `nil` (the defaults) when it names none.
    ///
    /// - Parameter field: How the refusal names the field.
    /// - Throws: `invalid_request` for a name other than `authorization_code`,
    ///   `client_credentials` and `device_code`.
    package static func grantTypes(_ names: [String], field: String) throws(AuthError) -> Set<OAuthClient.GrantType>? {
        guard !names.isEmpty else { return nil }
        var grants = Set<OAuthClient.GrantType>()
        for name in names {
            let grant = name == "device_code" ? .deviceCode : OAuthClient.GrantType(rawValue: name)
            guard let grant, grant != .refreshToken else {
                throw AuthError.invalidRequest("\(field) must be authorization_code, client_credentials or device_code, not \(name.debugDescription)")
            }
            grants.insert(grant)
        }
        if grants.contains(.authorizationCode) || grants.contains(.deviceCode) { grants.insert(.refreshToken) }
        return grants
    }

    /// RFC 6749 §3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`.
    static func isScopeToken(_ scope: String) -> Bool {
        !scope.isEmpty && scope.utf8.count <= 128
            && scope.unicodeScalars.allSatisfy { $0.value == 0x21 || (0x23...0x5B).contains($0.value) || (0x5D...0x7E).contains($0.value) }
    }

    /// The list without repeats, in its order.
    private static func unique(_ list: [String]) -> [String] {
        var seen = Set<String>()
        return list.filter { seen.insert($0).inserted }
    }
}
