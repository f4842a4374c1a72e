import FoundationEssentials
import LatchkeyStore

/// The `passkey_ceremonies` table: one row per answered flow, kept until the flow would have
/// expired (then the housekeeping removes it, ``RetentionRepository``). The row is what makes a
/// flow answerable once, whether its answer then verifies or not: a challenge is never checked
/// twice.
struct PasskeyCeremonyRepository: Sendable {
    /// Compare-and-set: spends the flow of `ceremony`.
    ///
    /// - Returns: false when it was spent already (by this instance or another).
    func spend(_ ceremony: PasskeyCeremony, at now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            """
            INSERT INTO passkey_ceremonies (id, kind, challenge, conditional, created_at, expires_at, used_at)
            VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING
            """,
            [
                .text(ceremony.id), .text(ceremony.kind.rawValue), .blob(ceremony.challenge), .bool(ceremony.conditional),
                .time(ceremony.createdAt), .time(ceremony.expiresAt), .time(now),
            ]) == 1
    }
}
