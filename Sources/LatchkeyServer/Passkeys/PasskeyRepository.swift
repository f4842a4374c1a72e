import FoundationEssentials
import LatchkeyJSON
import LatchkeyStore

/// The `passkeys` table and each account's passkey user handle.
///
/// Writes that depend on what is stored are compare-and-sets whose result the caller checks: a
/// use moves the signature counter only from the value it was verified against, and a user
/// handle is given once.
struct PasskeyRepository: Sendable {
    /// Stores a verified registration inside the caller's transaction.
    ///
    /// - Throws: `StoreError` with code `constraint` when the credential id is registered
    ///   already, to any account.
    func insert(_ passkey: Passkey, on connection: any SQLConnection) throws {
        try connection.execute(
            """
            INSERT INTO passkeys (id, user_id, credential_id, public_key, algorithm, sign_count, backup_eligible, backed_up, transports,
                aaguid, attestation, name, created_at, last_used_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(passkey.id), .text(passkey.userID), .blob(passkey.credentialID), .blob(passkey.publicKey), .integer(Int64(passkey.algorithm)),
                .integer(Int64(passkey.signCount)), .bool(passkey.backupEligible), .bool(passkey.backedUp),
                .text(JSONValue.array(passkey.transports.map(JSONValue.string)).serializedString), .blob(passkey.aaguid), .text(passkey.attestation),
                .text(passkey.name), .time(passkey.createdAt), SQLValue(passkey.lastUsedAt),
            ])
    }

    /// The passkey with this credential id, whoever's it is.
    func find(credentialID: [UInt8], on connection: any SQLConnection) throws -> Passkey? {
        try connection.queryOne("SELECT * FROM passkeys WHERE credential_id = ?", [.blob(credentialID)]).map(Self.passkey)
    }

    /// The account's passkeys, oldest first.
    func list(userID: String, on connection: any SQLConnection) throws -> [Passkey] {
        try connection.query("SELECT * FROM passkeys WHERE user_id = ? ORDER BY created_at, id", [.text(userID)]).map(Self.passkey)
    }

    /// How many passkeys the account has.
    func count(userID: String, on connection: any SQLConnection) throws -> Int {
        Int(try connection.queryOne("SELECT count(*) AS n FROM passkeys WHERE user_id = ?", [.text(userID)])?.int("n") ?? 0)
    }

    /// How many external identities (Sign in with Apple) the account has: with a password and
    /// passkeys, its ways to sign in.
    func identityCount(userID: String, on connection: any SQLConnection) throws -> Int {
        Int(try connection.queryOne("SELECT count(*) AS n FROM identities WHERE user_id = ?", [.text(userID)])?.int("n") ?? 0)
    }

    /// Renames the account's passkey.
    ///
    /// - Returns: Whether the account has a passkey with this id.
    func rename(id: String, userID: String, to name: String, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("UPDATE passkeys SET name = ? WHERE id = ? AND user_id = ?", [.text(name), .text(id), .text(userID)]) == 1
    }

    /// Deletes the account's passkey.
    ///
    /// - Returns: Whether this call deleted it.
    func delete(id: String, userID: String, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("DELETE FROM passkeys WHERE id = ? AND user_id = ?", [.text(id), .text(userID)]) == 1
    }

    /// Compare-and-set: records a verified use, moving the counter from `verifiedAgainst` (the
    /// value the assertion was checked against) to `signCount`, with the BS flag it carried.
    ///
    /// - Returns: false when another use moved the counter first (or the passkey is gone): the
    ///   caller refuses this one.
    func recordUse(
        id: String, verifiedAgainst: UInt32, signCount: UInt32, backedUp: Bool, at now: Date, on connection: any SQLConnection
    ) throws -> Bool {
        try connection.execute(
            "UPDATE passkeys SET sign_count = ?, backed_up = ?, last_used_at = ? WHERE id = ? AND sign_count = ?",
            [.integer(Int64(signCount)), .bool(backedUp), .time(now), .text(id), .integer(Int64(verifiedAgainst))]) == 1
    }

    // MARK: User handles

    /// The account's passkey user handle, if it was given one.
    func userHandle(userID: String, on connection: any SQLConnection) throws -> [UInt8]? {
        try connection.queryOne("SELECT passkey_user_handle FROM users WHERE id = ?", [.text(userID)])?.optionalBlob("passkey_user_handle")
    }

    /// Compare-and-set: gives the account `handle` unless it has one already.
    ///
    /// - Returns: The account's handle afterwards: `handle`, or the one another request gave
    ///   first; nil when the account is gone.
    func assignUserHandle(_ handle: [UInt8], userID: String, on connection: any SQLConnection) throws -> [UInt8]? {
        _ = try connection.execute(
            "UPDATE users SET passkey_user_handle = ? WHERE id = ? AND passkey_user_handle IS NULL", [.blob(handle), .text(userID)])
        return try userHandle(userID: userID, on: connection)
    }

    /// The id of the account with this user handle.
    func userID(handle: [UInt8], on connection: any SQLConnection) throws -> String? {
        try connection.queryOne("SELECT id FROM users WHERE passkey_user_handle = ?", [.blob(handle)]).map { try $0.string("id") }
    }

    static func passkey(_ row: SQLRow) throws -> Passkey {
        let transports = try JSONValue(parsing: Array(try row.string("transports").utf8)).arrayValue?.compactMap(\.stringValue) ?? []
        return Passkey(
            id: try row.string("id"), userID: try row.string("user_id"), credentialID: try row.blob("credential_id"),
            publicKey: try row.blob("public_key"), algorithm: Int(try row.int("algorithm")), signCount: UInt32(clamping: try row.int("sign_count")),
            backupEligible: try row.bool("backup_eligible"), backedUp: try row.bool("backed_up"), transports: transports,
            aaguid: try row.blob("aaguid"), attestation: try row.string("attestation"), name: try row.string("name"),
            createdAt: try row.date("created_at"), lastUsedAt: row.optionalDate("last_used_at"))
    }
}
