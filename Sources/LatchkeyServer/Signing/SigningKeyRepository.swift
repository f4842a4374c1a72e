import FoundationEssentials
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore

/// The `signing_keys` table: the server's ES256 and RS256 keys, sealed under the master key.
struct SigningKeyRepository: Sendable {
    /// The change channel every key change is announced on (``SQLConnection/announceChange(on:)``),
    /// so that every process reloads its ``SigningKeyRing`` within about a second.
    static let changeChannel = "latchkey_signing_keys"

    /// One row: the public part, and the private key still sealed (opened only for the active key).
    struct StoredKey: Sendable {
        var key: SigningKeyRing.Key
        /// The `algorithm` column: how the sealed private key is to be read.
        var algorithm: JWSAlgorithm
        var sealedPrivateKey: [UInt8]
    }

    /// Inserts a new key, not retired, inside the caller's transaction, and announces the change
    /// on ``changeChannel`` in the same transaction (a rotation's retirement commits with it).
    func insert(_ key: SigningKeyRing.Key, sealedPrivateKey: [UInt8], on connection: any SQLConnection) throws {
        try connection.announceChange(on: Self.changeChannel)
        try connection.execute(
            """
            INSERT INTO signing_keys (id, algorithm, public_jwk, private_key, created_at, activates_at, retires_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)
            """,
            [.text(key.id), .text(key.algorithm.rawValue), .text(key.publicJWK.json.serializedString), .blob(sealedPrivateKey), .time(key.createdAt), .time(key.activatesAt)])
    }

    /// Whether a key of `algorithm` signs at `now`: activated and not retired.
    func hasActiveKey(_ algorithm: JWSAlgorithm = .es256, at now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.queryOne(
            "SELECT id FROM signing_keys WHERE algorithm = ? AND activates_at <= ? AND (retires_at IS NULL OR retires_at > ?) LIMIT 1",
            [.text(algorithm.rawValue), .time(now), .time(now)]
        ) != nil
    }

    /// Compare-and-set: retires every key of `algorithm` that is not retired yet (normally exactly
    /// the newest of that algorithm) at `retiresAt`, to leave the key set at `expiresAt`.
    ///
    /// - Returns: how many keys this call retired; 0 when a concurrent rotation retired them first.
    func retireUnretired(_ algorithm: JWSAlgorithm = .es256, at retiresAt: Date, expiresAt: Date, on connection: any SQLConnection) throws -> Int {
        try connection.execute(
            "UPDATE signing_keys SET retires_at = ?, expires_at = ? WHERE algorithm = ? AND retires_at IS NULL",
            [.time(retiresAt), .time(expiresAt), .text(algorithm.rawValue)])
    }

    /// Every key ever made, oldest activation first.
    func all(on connection: any SQLConnection) throws -> [StoredKey] {
        try connection.query("SELECT * FROM signing_keys ORDER BY activates_at, id").map { row in
            StoredKey(key: try Self.key(row), algorithm: JWSAlgorithm(rawValue: try row.string("algorithm")), sealedPrivateKey: try row.blob("private_key"))
        }
    }

    /// The public part of a `signing_keys` row.
    private static func key(_ row: SQLRow) throws -> SigningKeyRing.Key {
        SigningKeyRing.Key(
            id: try row.string("id"), publicJWK: try JWK(parsing: Array(try row.string("public_jwk").utf8)),
            createdAt: try row.date("created_at"), activatesAt: try row.date("activates_at"),
            retiresAt: row.optionalDate("retires_at"), expiresAt: row.optionalDate("expires_at"))
    }
}
