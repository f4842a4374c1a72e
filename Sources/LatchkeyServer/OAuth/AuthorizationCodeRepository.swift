import FoundationEssentials
import LatchkeyJSON
import LatchkeyStore

/// The `oauth_codes` table: authorization codes by hash (S22).
struct AuthorizationCodeRepository: Sendable {
    /// Stores a new code inside the caller's transaction.
    func insert(_ code: AuthorizationCode, on connection: any SQLConnection) throws {
        try connection.execute(
            """
            INSERT INTO oauth_codes (code_hash, client_id, user_id, browser_session_id, redirect_uri, code_challenge, scope, nonce,
                auth_time, amr, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .blob(code.hash), .text(code.clientID), .text(code.userID), SQLValue(code.browserSessionID), .text(code.redirectURI),
                .text(code.codeChallenge), .text(code.scope), SQLValue(code.nonce), .time(code.authTime),
                .text(SessionRepository.amrText(code.amr)), .time(code.createdAt), .time(code.expiresAt),
            ])
    }

    /// The code with this hash, used or not.
    func find(hash: [UInt8], on connection: any SQLConnection) throws -> AuthorizationCode? {
        guard let row = try connection.queryOne("SELECT * FROM oauth_codes WHERE code_hash = ?", [.blob(hash)]) else { return nil }
        let amr = (try? JSONValue(parsing: Array(try row.string("amr").utf8)))?.arrayValue?.compactMap(\.stringValue) ?? []
        return AuthorizationCode(
            hash: try row.blob("code_hash"), clientID: try row.string("client_id"), userID: try row.string("user_id"),
            browserSessionID: row.optionalString("browser_session_id"), redirectURI: try row.string("redirect_uri"),
            codeChallenge: try row.string("code_challenge"), scope: try row.string("scope"), nonce: row.optionalString("nonce"),
            authTime: try row.date("auth_time"), amr: amr, createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"),
            usedAt: row.optionalDate("used_at"), sessionID: row.optionalString("session_id"))
    }

    /// Compare-and-set: marks the code used unless it already is.
    ///
    /// - Returns: whether this call used it; `false` means another exchange did (a replay).
    func use(hash: [UInt8], at now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("UPDATE oauth_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL", [.time(now), .blob(hash)]) == 1
    }

    /// Records the session the exchange created, for revocation on replay.
    func attach(sessionID: String, toCode hash: [UInt8], on connection: any SQLConnection) throws {
        try connection.execute("UPDATE oauth_codes SET session_id = ? WHERE code_hash = ?", [.text(sessionID), .blob(hash)])
    }
}
