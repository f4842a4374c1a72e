import FoundationEssentials
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore
import Synchronization

/// The server's ES256 signing keys: generated here, sealed at rest under the master key,
/// published in the JWKS before first use and until every token they signed has expired
/// (docs/security.md S10).
///
/// The `signing_keys` table is the truth, so several processes on one database agree: the
/// active key is the one with the latest `activates_at` that has passed. Each process keeps a
/// snapshot and reloads it every ``reloadInterval`` and whenever a key's activation or expiry
/// passes. `latchkey keys rotate` adds a key that activates after a delay longer than the JWKS
/// cache lifetime, so clients see the new key before any token carries it.
public final class SigningKeyRing: Sendable {
    /// One row of `signing_keys`, public part only.
    public struct Key: Sendable, Hashable {
        public var id: String
        public var publicJWK: JWK
        public var createdAt: Date
        public var activatesAt: Date
        /// When it stops signing (a later key activated); `nil` while it is the newest.
        public var retiresAt: Date?
        /// When it leaves the JWKS: its retirement plus the longest life of a token it signed.
        public var expiresAt: Date?

        /// `pending`, `active`, `retired` (still published) or `expired`, at `now`.
        public func state(at now: Date) -> String {
            if now < activatesAt { return "pending" }
            if let expiresAt, now >= expiresAt { return "expired" }
            if let retiresAt, now >= retiresAt { return "retired" }
            return "active"
        }
    }

    struct Snapshot: Sendable {
        var keys: [Key]
        var signer: JWSSigner?
        var signerID: String?
        /// `GET /.well-known/jwks.json`, built once per key change rather than per request.
        var jwksResponse: HTTPResponse
        var verificationKeys: JWSKeySet
        var loadedAt: Date
        var nextTransition: Date?
    }

    /// How long caches may keep the JWKS (`Cache-Control: max-age`).
    public static let jwksMaxAge = 300
    /// How often a process re-reads the key table.
    static let reloadInterval: TimeInterval = 30

    private let database: any SQLDatabase
    private let masterKey: MasterKey
    /// How long after retirement a key stays published: the access-token lifetime plus leeway.
    private let tokenLifetime: TimeInterval
    private let snapshot: Mutex<Snapshot>

    private init(database: any SQLDatabase, masterKey: MasterKey, tokenLifetime: TimeInterval, snapshot: Snapshot) {
        self.database = database
        self.masterKey = masterKey
        self.tokenLifetime = tokenLifetime
        self.snapshot = Mutex(snapshot)
    }

    /// Loads the keys, first creating one that is active at once when none is.
    public static func open(database: any SQLDatabase, masterKey: MasterKey, accessTokenTTL: Int, now: Date) async throws -> SigningKeyRing {
        let lifetime = TimeInterval(accessTokenTTL) + 60
        try await database.write { connection in
            let active = try connection.queryOne(
                database.dialect.sql("SELECT id FROM signing_keys WHERE activates_at <= ? AND (retires_at IS NULL OR retires_at > ?) LIMIT 1"),
                [.time(now), .time(now)])
            if active == nil {
                _ = try Self.insertKey(activatesAt: now, now: now, masterKey: masterKey, on: connection, dialect: database.dialect)
            }
        }
        let snapshot = try await load(database: database, masterKey: masterKey, now: now)
        return SigningKeyRing(database: database, masterKey: masterKey, tokenLifetime: lifetime, snapshot: snapshot)
    }

    /// Adds a key that starts signing at `now + activationDelay`; the current newest key retires
    /// then and stays published for one token lifetime more.
    @discardableResult
    public func rotate(activationDelay: TimeInterval, now: Date) async throws -> Key {
        let lifetime = tokenLifetime
        let masterKey = masterKey
        let dialect = database.dialect
        let id = try await database.write { connection in
            let activatesAt = now.addingTimeInterval(activationDelay)
            try connection.execute(
                dialect.sql("UPDATE signing_keys SET retires_at = ?, expires_at = ? WHERE retires_at IS NULL"),
                [.time(activatesAt), .time(activatesAt.addingTimeInterval(lifetime))])
            return try Self.insertKey(activatesAt: activatesAt, now: now, masterKey: masterKey, on: connection, dialect: dialect)
        }
        try await reload(now: now)
        return cached.keys.first { $0.id == id }!
    }

    private static func insertKey(activatesAt: Date, now: Date, masterKey: MasterKey, on connection: any SQLConnection, dialect: SQLDialect) throws -> String {
        let key = P256.Signing.PrivateKey()
        let id = Base64URL.encode(SecureRandom.bytes(count: 12))
        let jwk = JWK(key.publicKey, keyID: id)
        try connection.execute(
            dialect.sql(
                """
                INSERT INTO signing_keys (id, algorithm, public_jwk, private_key, created_at, activates_at, retires_at, expires_at)
                VALUES (?, 'ES256', ?, ?, ?, ?, NULL, NULL)
                """),
            [.text(id), .text(jwk.json.serializedString), .blob(try masterKey.seal(key.rawRepresentation, context: "signing_keys/\(id)")),
             .time(now), .time(activatesAt)])
        return id
    }

    private static func load(database: any SQLDatabase, masterKey: MasterKey, now: Date) async throws -> Snapshot {
        let rows = try await database.read { connection in
            try connection.query(database.dialect.sql("SELECT * FROM signing_keys ORDER BY activates_at, id"))
        }
        var keys = [Key]()
        var signer: JWSSigner?
        var signerID: String?
        var transitions = [Date]()
        for row in rows {
            let key = try Self.key(row)
            let id = key.id
            transitions += [key.activatesAt, key.retiresAt, key.expiresAt].compactMap { $0 }.filter { $0 > now }
            let state = key.state(at: now)
            if state == "expired" { continue }
            keys.append(key)
            if state == "active" {
                let raw = try masterKey.unseal(try row.blob("private_key"), context: "signing_keys/\(id)")
                signer = .es256(try P256.Signing.PrivateKey(rawRepresentation: raw), keyID: id)
                signerID = id
            }
        }
        let published = keys.map(\.publicJWK)
        return Snapshot(
            keys: keys, signer: signer, signerID: signerID, jwksResponse: Self.jwksResponse(JWKSet(keys: published)),
            verificationKeys: try JWSKeySet(jwks: JWKSet(keys: published)), loadedAt: now, nextTransition: transitions.min())
    }

    /// The JWKS answer: JSON, cacheable for ``jwksMaxAge`` seconds.
    private static func jwksResponse(_ set: JWKSet) -> HTTPResponse {
        var response = HTTPResponse.json(set.json)
        response.headers.set("Cache-Control", "public, max-age=\(jwksMaxAge)")
        return response
    }

    /// The JWKS answer for the keys published now.
    var jwksResponse: HTTPResponse { snapshot.withLock { $0.jwksResponse } }

    /// Re-reads the key table.
    public func reload(now: Date) async throws {
        let fresh = try await Self.load(database: database, masterKey: masterKey, now: now)
        snapshot.withLock { $0 = fresh }
    }

    /// The snapshot, reloading it first when it is stale.
    func current(now: Date) async throws -> Snapshot {
        let (stale, value) = snapshot.withLock { snapshot in
            let due = now.timeIntervalSince(snapshot.loadedAt) >= Self.reloadInterval || (snapshot.nextTransition.map { now >= $0 } ?? false)
            return (due, snapshot)
        }
        guard stale else { return value }
        try await reload(now: now)
        return snapshot.withLock { $0 }
    }

    /// The snapshot as it is, for synchronous callers (the JWKS route); reloads happen on the
    /// asynchronous paths.
    var cached: Snapshot { snapshot.withLock { $0 } }

    /// The published keys (pending, active, retired), oldest first.
    public var publishedKeys: [Key] { cached.keys }

    /// Every key ever made, for `latchkey keys list`.
    public func allKeys() async throws -> [Key] {
        let database = database
        return try await database.read { connection in
            try connection.query(database.dialect.sql("SELECT * FROM signing_keys ORDER BY activates_at, id")).map(Self.key)
        }
    }

    /// The public part of a `signing_keys` row.
    private static func key(_ row: SQLRow) throws -> Key {
        Key(
            id: try row.string("id"), publicJWK: try JWK(parsing: Array(try row.string("public_jwk").utf8)),
            createdAt: try row.date("created_at"), activatesAt: try row.date("activates_at"),
            retiresAt: row.optionalDate("retires_at"), expiresAt: row.optionalDate("expires_at"))
    }
}
