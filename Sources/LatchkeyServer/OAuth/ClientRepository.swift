import FoundationEssentials
import LatchkeyJSON
import LatchkeyStore

/// The `oauth_clients` table: registered clients. A confidential client's row keeps only the
/// SHA-256 of its secret (S7); a public client's `secret_hash` is NULL. The list columns are JSON
/// arrays of strings.
struct ClientRepository: Sendable {
    /// The change channel every change to a client is announced on, in its transaction
    /// (``SQLConnection/announceChange(on:)``), so every process empties its ``ClientCache``.
    static let changeChannel = "latchkey_oauth_clients"

    /// A client with what authenticating it needs.
    struct StoredClient: Sendable {
        var client: OAuthClient
        /// The SHA-256 of its secret; `nil` for a public client.
        var secretHash: [UInt8]?
        /// Its public keys (a JWK Set, JSON) when it authenticates with `private_key_jwt`.
        var jwks: String?
    }

    /// Inserts a new client inside the caller's transaction.
    ///
    /// - Parameter secretHash: The SHA-256 of its secret; `nil` for a public client.
    func insert(_ client: OAuthClient, secretHash: [UInt8]?, jwks: String? = nil, on connection: any SQLConnection) throws {
        try connection.announceChange(on: Self.changeChannel)
        try connection.execute(
            """
            INSERT INTO oauth_clients (id, name, secret_hash, first_party, redirect_uris, post_logout_redirect_uris, grant_types, scopes,
                id_token_algorithm, created_at, jwks, require_dpop)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(client.id), .text(client.name), secretHash.map(SQLValue.blob) ?? .null, .bool(client.isFirstParty),
                .text(Self.jsonArray(client.redirectURIs)), .text(Self.jsonArray(client.postLogoutRedirectURIs)),
                .text(Self.jsonArray(client.grantTypes.map(\.rawValue).sorted())), .text(Self.jsonArray(client.scopes.sorted())),
                .text(client.idTokenAlgorithm), .time(client.createdAt), SQLValue(jwks),
                .bool(client.requiresDPoP),
            ])
    }

    /// The client with this id.
    func find(id: String, on connection: any SQLConnection) throws -> OAuthClient? {
        try stored(id: id, on: connection)?.client
    }

    /// The client with this id and the hash of its secret.
    func stored(id: String, on connection: any SQLConnection) throws -> StoredClient? {
        guard let row = try connection.queryOne("SELECT * FROM oauth_clients WHERE id = ?", [.text(id)]) else { return nil }
        return StoredClient(client: try Self.client(row), secretHash: row.optionalBlob("secret_hash"), jwks: row.optionalString("jwks"))
    }

    /// Every client, oldest first.
    func list(on connection: any SQLConnection) throws -> [OAuthClient] {
        try connection.query("SELECT * FROM oauth_clients ORDER BY created_at, id", []).map(Self.client)
    }

    /// Deletes the client; its sessions, codes and consents go with it (foreign keys cascade).
    ///
    /// - Returns: Whether a client was deleted.
    func delete(id: String, on connection: any SQLConnection) throws -> Bool {
        try connection.announceChange(on: Self.changeChannel)
        return try connection.execute("DELETE FROM oauth_clients WHERE id = ?", [.text(id)]) == 1
    }

    /// Writes a client's name, redirect URIs, post-logout redirect URIs and scopes.
    ///
    /// - Returns: Whether a client with this id was there to change.
    func update(_ client: OAuthClient, on connection: any SQLConnection) throws -> Bool {
        try connection.announceChange(on: Self.changeChannel)
        return try connection.execute(
            "UPDATE oauth_clients SET name = ?, redirect_uris = ?, post_logout_redirect_uris = ?, scopes = ? WHERE id = ?",
            [
                .text(client.name), .text(Self.jsonArray(client.redirectURIs)), .text(Self.jsonArray(client.postLogoutRedirectURIs)),
                .text(Self.jsonArray(client.scopes.sorted())), .text(client.id),
            ]) == 1
    }

    /// Compare-and-set: replaces a confidential client's secret hash; a public client (no
    /// hash) stays public.
    ///
    /// - Returns: Whether a confidential client with this id got the new hash.
    func replaceSecret(id: String, hash: [UInt8], at: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.announceChange(on: Self.changeChannel)
        return try connection.execute(
            "UPDATE oauth_clients SET secret_hash = ?, secret_rotated_at = ? WHERE id = ? AND secret_hash IS NOT NULL",
            [.blob(hash), .time(at), .text(id)]) == 1
    }

    // MARK: Rows

    /// A list of strings as the list columns store it: a JSON array.
    static func jsonArray(_ strings: [String]) -> String {
        JSONValue.array(strings.map(JSONValue.string)).serializedString
    }

    /// The strings of a JSON-array column.
    static func strings(_ text: String) throws -> [String] {
        guard let array = try JSONValue(parsing: Array(text.utf8)).arrayValue else { throw StoredClientCorrupt() }
        return try array.map { value in
            guard let string = value.stringValue else { throw StoredClientCorrupt() }
            return string
        }
    }

    /// An `oauth_clients` row.
    static func client(_ row: SQLRow) throws -> OAuthClient {
        var client = OAuthClient(
            id: try row.string("id"), name: try row.string("name"),
            isConfidential: row.optionalBlob("secret_hash") != nil || row.optionalString("jwks") != nil,
            isFirstParty: try row.bool("first_party"), redirectURIs: try strings(try row.string("redirect_uris")),
            postLogoutRedirectURIs: try strings(try row.string("post_logout_redirect_uris")),
            // A grant type this build does not know is left out rather than failing the whole client.
            grantTypes: Set(try strings(try row.string("grant_types")).compactMap(OAuthClient.GrantType.init(rawValue:))),
            scopes: Set(try strings(try row.string("scopes"))), idTokenAlgorithm: try row.string("id_token_algorithm"),
            createdAt: try row.date("created_at"))
        client.requiresDPoP = try row.bool("require_dpop")
        return client
    }
}

/// A list column of `oauth_clients` does not hold a JSON array of strings.
struct StoredClientCorrupt: Error, CustomStringConvertible {
    var description: String { "an oauth_clients row holds a list column that is not a JSON array of strings" }
}
