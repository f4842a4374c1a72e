import FoundationEssentials
import LatchkeyStore

/// One sign-in identity of a user at a provider (Apple), as the `identities` table holds it.
struct Identity: Sendable, Hashable {
    var id: String
    var userID: String
    /// `apple` for now.
    var provider: String
    var issuer: String
    /// The user's stable id at the provider.
    var subject: String
    var email: String?
    var emailVerified: Bool
    var isPrivateEmail: Bool
    /// Apple's `real_user_status`: 0 unsupported, 1 unknown, 2 likely real.
    var realUserStatus: Int?
    /// An imported team-transfer id awaiting the user's next sign-in.
    var transferSubject: String?
    /// Apple's refresh token, sealed under the master key (context ``AppleService/refreshTokenContext(_:)``).
    var sealedAppleRefreshToken: [UInt8]?
    /// The client id the Apple refresh token was issued to.
    var appleClientID: String?
    /// Set after `consent-revoked` or a failed daily validation, until the user signs in again.
    var revokedAt: Date?
    /// When the stored Apple refresh token was last checked, or claimed for a check.
    var lastValidatedAt: Date?
    var emailDisabledAt: Date?
    var createdAt: Date

    init(
        id: String, userID: String, provider: String, issuer: String, subject: String, email: String?, emailVerified: Bool,
        isPrivateEmail: Bool, realUserStatus: Int?, transferSubject: String? = nil, sealedAppleRefreshToken: [UInt8]? = nil,
        appleClientID: String? = nil, revokedAt: Date? = nil, lastValidatedAt: Date? = nil, emailDisabledAt: Date? = nil, createdAt: Date
    ) {
        self.id = id
        self.userID = userID
        self.provider = provider
        self.issuer = issuer
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.realUserStatus = realUserStatus
        self.transferSubject = transferSubject
        self.sealedAppleRefreshToken = sealedAppleRefreshToken
        self.appleClientID = appleClientID
        self.revokedAt = revokedAt
        self.lastValidatedAt = lastValidatedAt
        self.emailDisabledAt = emailDisabledAt
        self.createdAt = createdAt
    }
}

/// The `identities` table: a user's sign-in identities at providers (Apple), with the sealed
/// Apple refresh token kept for revocation and validation.
///
/// Every write whose meaning depends on the row's prior state is a compare-and-set that reports
/// whether it changed the row; the caller acts on `false`.
struct IdentityRepository: Sendable {
    /// Inserts a new identity inside the caller's transaction, unless one with the same
    /// provider, issuer and subject exists.
    ///
    /// - Returns: Whether this call inserted it (false: a concurrent sign-in created that identity first).
    func insert(_ identity: Identity, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            """
            INSERT INTO identities (id, user_id, provider, issuer, subject, email, email_verified, is_private_email, real_user_status,
                transfer_sub, apple_refresh_token, apple_client_id, revoked_at, last_validated_at, email_disabled_at, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO NOTHING
            """,
            [
                .text(identity.id), .text(identity.userID), .text(identity.provider), .text(identity.issuer), .text(identity.subject),
                SQLValue(identity.email), .bool(identity.emailVerified), .bool(identity.isPrivateEmail), SQLValue(identity.realUserStatus),
                SQLValue(identity.transferSubject), SQLValue(identity.sealedAppleRefreshToken), SQLValue(identity.appleClientID),
                SQLValue(identity.revokedAt), SQLValue(identity.lastValidatedAt), SQLValue(identity.emailDisabledAt), .time(identity.createdAt),
            ]) == 1
    }

    /// The identity with this id.
    func find(id: String, on connection: any SQLConnection) throws -> Identity? {
        try connection.queryOne("SELECT * FROM identities WHERE id = ?", [.text(id)]).map(Self.identity)
    }

    /// The identity a provider's issuer knows by `subject`.
    func find(provider: String, issuer: String, subject: String, on connection: any SQLConnection) throws -> Identity? {
        try connection.queryOne(
            "SELECT * FROM identities WHERE provider = ? AND issuer = ? AND subject = ?", [.text(provider), .text(issuer), .text(subject)]
        ).map(Self.identity)
    }

    /// The identity an operator imported this team-transfer id for.
    func find(provider: String, issuer: String, transferSubject: String, on connection: any SQLConnection) throws -> Identity? {
        try connection.queryOne(
            "SELECT * FROM identities WHERE provider = ? AND issuer = ? AND transfer_sub = ? ORDER BY created_at, id",
            [.text(provider), .text(issuer), .text(transferSubject)]
        ).map(Self.identity)
    }

    /// Deletes one of a user's identities.
    ///
    /// - Returns: Whether this call deleted it.
    func delete(id: String, userID: String, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("DELETE FROM identities WHERE id = ? AND user_id = ?", [.text(id), .text(userID)]) == 1
    }

    /// A user's identities, oldest first.
    func list(userID: String, on connection: any SQLConnection) throws -> [Identity] {
        try connection.query("SELECT * FROM identities WHERE user_id = ? ORDER BY created_at, id", [.text(userID)]).map(Self.identity)
    }

    /// Compare-and-set: moves an identity to a new subject, spending its transfer id, only if
    /// the transfer id is still the one read.
    ///
    /// - Returns: Whether this call took it over (false: another sign-in did first).
    func takeOver(id: String, transferSubject: String, newSubject: String, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE identities SET subject = ?, transfer_sub = NULL WHERE id = ? AND transfer_sub = ?",
            [.text(newSubject), .text(id), .text(transferSubject)]) == 1
    }

    /// Stores what a new identity token says (an email only when it carries one) and restores a
    /// revoked identity.
    ///
    /// - Returns: Whether the identity still exists.
    func recordSignIn(
        id: String, email: String?, emailVerified: Bool, isPrivateEmail: Bool, realUserStatus: Int?, on connection: any SQLConnection
    ) throws -> Bool {
        try connection.execute(
            """
            UPDATE identities SET email = COALESCE(?, email), email_verified = ?, is_private_email = ?,
                real_user_status = COALESCE(?, real_user_status), revoked_at = NULL
            WHERE id = ?
            """,
            [SQLValue(email), .bool(emailVerified), .bool(isPrivateEmail), SQLValue(realUserStatus), .text(id)]) == 1
    }

    /// Stores Apple's refresh token (already sealed) and the client it was issued to; a fresh
    /// token counts as validated `at`.
    ///
    /// - Returns: Whether the identity still exists.
    func storeAppleRefreshToken(id: String, sealed: [UInt8], clientID: String, at time: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE identities SET apple_refresh_token = ?, apple_client_id = ?, last_validated_at = ? WHERE id = ?",
            [.blob(sealed), .text(clientID), .time(time), .text(id)]) == 1
    }

    /// Marks an identity revoked and forgets its Apple refresh token.
    ///
    /// - Returns: Whether the identity exists (false: it was deleted meanwhile).
    func revoke(id: String, at time: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("UPDATE identities SET revoked_at = ?, apple_refresh_token = NULL WHERE id = ?", [.time(time), .text(id)]) == 1
    }

    /// Sets (`at` not nil) or clears the time the user turned off email forwarding; enabling it
    /// again stores a new relay address when one is given.
    ///
    /// - Returns: Whether the identity exists.
    func setEmailDisabled(id: String, at time: Date?, email: String? = nil, on connection: any SQLConnection) throws -> Bool {
        if let time {
            return try connection.execute("UPDATE identities SET email_disabled_at = ? WHERE id = ?", [.time(time), .text(id)]) == 1
        }
        return try connection.execute(
            "UPDATE identities SET email_disabled_at = NULL, email = COALESCE(?, email) WHERE id = ?", [SQLValue(email), .text(id)]) == 1
    }

    /// Records a team-transfer id on the identities of `provider` at `issuer` with this subject.
    ///
    /// - Returns: How many identities now carry it.
    func recordTransfer(_ transferSubject: String, provider: String, issuer: String, subject: String, on connection: any SQLConnection) throws -> Int {
        try connection.execute(
            "UPDATE identities SET transfer_sub = ? WHERE provider = ? AND issuer = ? AND subject = ?",
            [.text(transferSubject), .text(provider), .text(issuer), .text(subject)])
    }

    /// Records a team-transfer id on the identities of `provider` at `issuer` of this user.
    ///
    /// - Returns: How many identities now carry it.
    func recordTransfer(_ transferSubject: String, provider: String, issuer: String, userID: String, on connection: any SQLConnection) throws -> Int {
        try connection.execute(
            "UPDATE identities SET transfer_sub = ? WHERE provider = ? AND issuer = ? AND user_id = ?",
            [.text(transferSubject), .text(provider), .text(issuer), .text(userID)])
    }

    // MARK: Daily validation

    /// Live identities of `provider` with a stored Apple refresh token last validated at or
    /// before `cutoff` (or never), least recently validated first.
    ///
    /// In a write transaction that claims them, pass `claiming`: on PostgreSQL the rows are
    /// locked (`FOR UPDATE SKIP LOCKED`), and rows another instance is claiming at the same
    /// moment are left to it instead of conflicting; SQLite's one writer claims alone.
    func dueForValidation(
        provider: String, before cutoff: Date, limit: Int, claiming: Bool = false, on connection: any SQLConnection
    ) throws -> [Identity] {
        try connection.query(
            """
            SELECT * FROM identities
            WHERE provider = ? AND apple_refresh_token IS NOT NULL AND revoked_at IS NULL
                AND (last_validated_at IS NULL OR last_validated_at <= ?)
            ORDER BY last_validated_at, id LIMIT ?
            """ + (claiming ? " FOR UPDATE SKIP LOCKED" : ""),
            [.text(provider), .time(cutoff), .integer(Int64(limit))]
        ).map(Self.identity)
    }

    /// Compare-and-set: claims an identity for one validation by moving `last_validated_at` from
    /// the value the caller read to `until`, only while the identity is live with a token.
    ///
    /// The claim is the new value: ``rescheduleValidation(id:claimedUntil:to:on:)`` and
    /// ``revoke(id:claimedUntil:checkedToken:at:on:)`` act only while it still holds, so a
    /// sign-in storing a new token meanwhile wins over a stale check.
    ///
    /// - Returns: Whether this call claimed it (false: another process did, or the identity changed).
    func claimValidation(id: String, read lastValidatedAt: Date?, until: Date, on connection: any SQLConnection) throws -> Bool {
        let live = "revoked_at IS NULL AND apple_refresh_token IS NOT NULL"
        guard let lastValidatedAt else {
            return try connection.execute(
                "UPDATE identities SET last_validated_at = ? WHERE id = ? AND last_validated_at IS NULL AND \(live)", [.time(until), .text(id)]) == 1
        }
        return try connection.execute(
            "UPDATE identities SET last_validated_at = ? WHERE id = ? AND last_validated_at = ? AND \(live)",
            [.time(until), .text(id), .time(lastValidatedAt)]) == 1
    }

    /// Compare-and-set: moves a claimed validation to `time` (a retry), only while the claim holds.
    ///
    /// - Returns: Whether the claim still held.
    func rescheduleValidation(id: String, claimedUntil: Date, to time: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "UPDATE identities SET last_validated_at = ? WHERE id = ? AND last_validated_at = ?", [.time(time), .text(id), .time(claimedUntil)]) == 1
    }

    /// Compare-and-set: revokes an identity whose token a validation found withdrawn, only while
    /// that validation's claim holds and the stored token is still the one it checked (sealing
    /// draws a fresh nonce, so a token stored by a later sign-in never compares equal, even one
    /// stored in the same second as the claim).
    ///
    /// - Returns: Whether this call revoked it (false: the identity changed since the claim).
    func revoke(id: String, claimedUntil: Date, checkedToken sealed: [UInt8], at time: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            """
            UPDATE identities SET revoked_at = ?, apple_refresh_token = NULL
            WHERE id = ? AND last_validated_at = ? AND apple_refresh_token = ? AND revoked_at IS NULL
            """,
            [.time(time), .text(id), .time(claimedUntil), .blob(sealed)]) == 1
    }

    static func identity(_ row: SQLRow) throws -> Identity {
        Identity(
            id: try row.string("id"), userID: try row.string("user_id"), provider: try row.string("provider"), issuer: try row.string("issuer"),
            subject: try row.string("subject"), email: row.optionalString("email"), emailVerified: try row.bool("email_verified"),
            isPrivateEmail: try row.bool("is_private_email"), realUserStatus: row.optionalInt("real_user_status").map { Int($0) },
            transferSubject: row.optionalString("transfer_sub"), sealedAppleRefreshToken: row.optionalBlob("apple_refresh_token"),
            appleClientID: row.optionalString("apple_client_id"), revokedAt: row.optionalDate("revoked_at"),
            lastValidatedAt: row.optionalDate("last_validated_at"), emailDisabledAt: row.optionalDate("email_disabled_at"),
            createdAt: try row.date("created_at"))
    }
}
