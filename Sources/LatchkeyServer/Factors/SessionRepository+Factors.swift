import FoundationEssentials
import LatchkeyJSON
import LatchkeyStore

/// What second factors read and write in the `sessions` table: the time a session last proved a
/// second factor, and a step-up's `amr`.
extension SessionRepository {
    /// When the user's session last proved a second factor; nil when it never did or the user
    /// has no such session.
    func secondFactorTime(sessionID: String, userID: String, on connection: any SQLConnection) throws -> Date? {
        try connection.queryOne("SELECT second_factor_at FROM sessions WHERE id = ? AND user_id = ?", [.text(sessionID), .text(userID)])?
            .optionalDate("second_factor_at")
    }

    /// Notes in the session that a second factor was proved at `now`.
    func markSecondFactor(sessionID: String, at now: Date, on connection: any SQLConnection) throws {
        try connection.execute("UPDATE sessions SET second_factor_at = ? WHERE id = ?", [.time(now), .text(sessionID)])
    }

    /// Compare-and-set: gives the session its step-up `amr` and a second-factor time of `now`
    /// only if it has not been revoked.
    ///
    /// - Returns: Whether this call updated it (false: the session was revoked meanwhile).
    func recordStepUp(sessionID: String, amr: [String], at now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE sessions SET amr = ?, second_factor_at = ? WHERE id = ? AND revoked_at IS NULL",
            [.text(JSONValue.array(amr.map(JSONValue.string)).serializedString), .time(now), .text(sessionID)]) == 1
    }
}
