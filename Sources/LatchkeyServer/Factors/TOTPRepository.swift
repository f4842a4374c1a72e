import FoundationEssentials
import LatchkeyStore

/// The `totp_factors` table: sealed TOTP secrets and the last step used (S19).
struct TOTPRepository: Sendable {
    /// Stores a new, unconfirmed factor inside the caller's transaction.
    ///
    /// - Throws: `StoreError` with code `constraint` when the user already has a factor.
    func insert(_ factor: TOTPFactor, on connection: any SQLConnection) throws {
        try connection.execute(
            "INSERT INTO totp_factors (id, user_id, secret, confirmed_at, last_used_step, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [
                .text(factor.id), .text(factor.userID), .blob(factor.sealedSecret), SQLValue(factor.confirmedAt),
                factor.lastUsedStep.map(SQLValue.integer) ?? .null, .time(factor.createdAt),
            ])
    }

    /// The user's factor, confirmed or not.
    func find(userID: String, on connection: any SQLConnection) throws -> TOTPFactor? {
        guard let row = try connection.queryOne("SELECT * FROM totp_factors WHERE user_id = ?", [.text(userID)]) else { return nil }
        return TOTPFactor(
            id: try row.string("id"), userID: try row.string("user_id"), sealedSecret: try row.blob("secret"),
            confirmedAt: row.optionalDate("confirmed_at"), lastUsedStep: row.optionalInt("last_used_step"), createdAt: try row.date("created_at"))
    }

    /// Whether the user has a confirmed factor.
    func isConfirmed(userID: String, on connection: any SQLConnection) throws -> Bool {
        try connection.queryOne("SELECT 1 AS one FROM totp_factors WHERE user_id = ? AND confirmed_at IS NOT NULL", [.text(userID)]) != nil
    }

    /// Deletes the user's factor if it is not confirmed (a set-up that was never finished).
    func deleteUnconfirmed(userID: String, on connection: any SQLConnection) throws {
        try connection.execute("DELETE FROM totp_factors WHERE user_id = ? AND confirmed_at IS NULL", [.text(userID)])
    }

    /// Deletes the user's factor, confirmed or not.
    ///
    /// - Returns: Whether there was one.
    func delete(userID: String, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("DELETE FROM totp_factors WHERE user_id = ?", [.text(userID)]) > 0
    }

    /// Compare-and-set: confirms the factor with its first step only if it is still unconfirmed.
    ///
    /// - Returns: Whether this call confirmed it (false: already confirmed, perhaps by a request
    ///   running at the same time, or replaced or removed meanwhile).
    func confirm(id: String, step: Int64, at now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE totp_factors SET confirmed_at = ?, last_used_step = ? WHERE id = ? AND confirmed_at IS NULL",
            [.time(now), .integer(step), .text(id)]) == 1
    }

    /// Compare-and-set (S19): records `step` as the confirmed factor's last used step only if it
    /// is later than the one stored, so no code is accepted twice, even by two requests at once.
    ///
    /// - Returns: Whether this call advanced it (false: the step, or a later one, was used).
    func advanceStep(id: String, to step: Int64, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            """
            UPDATE totp_factors SET last_used_step = ?
            WHERE id = ? AND confirmed_at IS NOT NULL AND (last_used_step IS NULL OR last_used_step < ?)
            """,
            [.integer(step), .text(id), .integer(step)]) == 1
    }
}
