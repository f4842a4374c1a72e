import FoundationEssentials
import LatchkeyStore
import LatchkeyWebAuthn

/// A key App Attest vouched for, as stored: the attested key and the last assertion counter.
struct AppAttestKey: Sendable, Hashable {
    var attested: AppAttestedKey
    /// The greatest counter accepted so far (0 right after attestation).
    var counter: UInt32
    var createdAt: Date
    var lastAssertedAt: Date?
}

/// The `app_attest_challenges` and `app_attest_keys` tables (S47, S48).
struct AppAttestRepository: Sendable {
    /// Stores a new challenge by its SHA-256.
    func insertChallenge(hash: [UInt8], createdAt: Date, expiresAt: Date, on connection: any SQLConnection) throws {
        try connection.execute(
            "INSERT INTO app_attest_challenges (challenge_hash, created_at, expires_at) VALUES (?, ?, ?)",
            [.blob(hash), .time(createdAt), .time(expiresAt)])
    }

    /// Compare-and-set: deletes the challenge only if it exists and is unexpired at `now`.
    ///
    /// - Returns: Whether this call spent it (false: unknown, spent already, or expired).
    func spendChallenge(hash: [UInt8], at now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("DELETE FROM app_attest_challenges WHERE challenge_hash = ? AND expires_at > ?", [.blob(hash), .time(now)]) == 1
    }

    /// Stores an attested key with counter 0.
    func insertKey(_ key: AppAttestedKey, at now: Date, on connection: any SQLConnection) throws {
        try connection.execute(
            """
            INSERT INTO app_attest_keys (key_id, app_id, environment, public_key, receipt, counter, created_at)
            VALUES (?, ?, ?, ?, ?, 0, ?)
            """,
            [.blob(key.keyID), .text(key.appID), .text(key.environment.rawValue), .blob(key.publicKey), .blob(key.receipt), .time(now)])
    }

    /// The key with this id, if one was attested.
    func findKey(id: [UInt8], on connection: any SQLConnection) throws -> AppAttestKey? {
        guard let row = try connection.queryOne("SELECT * FROM app_attest_keys WHERE key_id = ?", [.blob(id)]),
            let environment = AppAttestEnvironment(rawValue: try row.string("environment")),
            let counter = UInt32(exactly: try row.int("counter"))
        else { return nil }
        return AppAttestKey(
            attested: AppAttestedKey(
                keyID: try row.blob("key_id"), publicKey: try row.blob("public_key"), appID: try row.string("app_id"),
                environment: environment, receipt: try row.blob("receipt")),
            counter: counter, createdAt: try row.date("created_at"), lastAssertedAt: row.optionalDate("last_asserted_at"))
    }

    /// Compare-and-set: advances the key's counter to `counter` only if the stored one is
    /// smaller, so of two assertions with one counter, on any instances, one wins (S48).
    ///
    /// - Returns: Whether this call advanced it.
    func advanceCounter(keyID: [UInt8], to counter: UInt32, at now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE app_attest_keys SET counter = ?, last_asserted_at = ? WHERE key_id = ? AND counter < ?",
            [.integer(Int64(counter)), .time(now), .blob(keyID), .integer(Int64(counter))]) == 1
    }
}
