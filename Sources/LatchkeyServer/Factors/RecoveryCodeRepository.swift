import FoundationEssentials
import LatchkeyStore

/// The `recovery_codes` table: hashes of one-time recovery codes (S18).
struct RecoveryCodeRepository: Sendable {
    /// Stores the hash of a new code inside the caller's transaction.
    func insert(codeHash: [UInt8], userID: String, at now: Date, on connection: any SQLConnection) throws {
        try connection.execute(
            "INSERT INTO recovery_codes (code_hash, user_id, created_at) VALUES (?, ?, ?)", [.blob(codeHash), .text(userID), .time(now)])
    }

    /// Deletes all of the user's codes, used or not.
    func deleteAll(userID: String, on connection: any SQLConnection) throws {
        try connection.execute("DELETE FROM recovery_codes WHERE user_id = ?", [.text(userID)])
    }

    /// Compare-and-set: marks the user's code with this hash used only if it is unused.
    ///
    /// - Returns: Whether this call spent it (false: not one of the user's codes, or already
    ///   used, perhaps by a request running at the same time).
    func spend(codeHash: [UInt8], userID: String, at now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE recovery_codes SET used_at = ? WHERE code_hash = ? AND user_id = ? AND used_at IS NULL",
            [.time(now), .blob(codeHash), .text(userID)]) == 1
    }

    /// How many of the user's codes are unused.
    func unusedCount(userID: String, on connection: any SQLConnection) throws -> Int {
        let row = try connection.queryOne("SELECT COUNT(*) AS unused FROM recovery_codes WHERE user_id = ? AND used_at IS NULL", [.text(userID)])
        return Int(try row?.int("unused") ?? 0)
    }
}
