import FoundationEssentials
import LatchkeyStore

/// The `passkey_ceremonies` table. A ceremony is taken once, by a compare-and-set, whether its
/// answer then verifies or not: a challenge is never checked twice. Expired ones go with the
/// housekeeping (``RetentionRepository``).
struct PasskeyCeremonyRepository: Sendable {
    func insert(_ ceremony: PasskeyCeremony, on connection: any SQLConnection) throws {
        try connection.execute(
            """
            INSERT INTO passkey_ceremonies (id, kind, challenge, user_id, user_handle, username, given_name, family_name, conditional,
                created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(ceremony.id), .text(ceremony.kind.rawValue), .blob(ceremony.challenge), SQLValue(ceremony.userID),
                ceremony.userHandle.map(SQLValue.blob) ?? .null, SQLValue(ceremony.username), SQLValue(ceremony.givenName),
                SQLValue(ceremony.familyName), .bool(ceremony.conditional), .time(ceremony.createdAt), .time(ceremony.expiresAt),
            ])
    }

    /// Compare-and-set: takes the ceremony `id` of `kind` if it is unused and unexpired at `now`.
    ///
    /// - Returns: The ceremony, now used; nil when there is no such ceremony, it expired, or
    ///   another request took it first.
    func take(id: String, kind: PasskeyCeremony.Kind, at now: Date, on connection: any SQLConnection) throws -> PasskeyCeremony? {
        let taken = try connection.execute(
            "UPDATE passkey_ceremonies SET used_at = ? WHERE id = ? AND kind = ? AND used_at IS NULL AND expires_at > ?",
            [.time(now), .text(id), .text(kind.rawValue), .time(now)])
        guard taken == 1 else { return nil }
        return try connection.queryOne("SELECT * FROM passkey_ceremonies WHERE id = ?", [.text(id)]).map(Self.ceremony)
    }

    static func ceremony(_ row: SQLRow) throws -> PasskeyCeremony {
        guard let kind = PasskeyCeremony.Kind(rawValue: try row.string("kind")) else {
            throw StoreError.typeMismatch("passkey_ceremonies.kind holds an unknown kind")
        }
        return PasskeyCeremony(
            id: try row.string("id"), kind: kind, challenge: try row.blob("challenge"), userID: row.optionalString("user_id"),
            userHandle: row.optionalBlob("user_handle"), username: row.optionalString("username"), givenName: row.optionalString("given_name"),
            familyName: row.optionalString("family_name"), conditional: try row.bool("conditional"), createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at"))
    }
}
