import FoundationEssentials
import LatchkeyCrypto
import LatchkeyStore

/// Ten single-use recovery codes, issued when TOTP is confirmed (docs/reference.md), kept only as SHA-256
/// hashes (S7).
///
/// A code is 160 random bits written as 32 lower-case base32 characters in groups of four, e.g.
/// `abcd-efgh-…`; hyphens, spaces and case are ignored when one is entered.
enum RecoveryCodes {
    static let count = 10

    /// Replaces the user's codes with ten new ones inside the caller's transaction.
    ///
    /// - Returns: The codes, to be shown once.
    static func replace(userID: String, now: Date, dialect: SQLDialect, on connection: any SQLConnection) throws -> [String] {
        try connection.execute(dialect.sql("DELETE FROM recovery_codes WHERE user_id = ?"), [.text(userID)])
        var codes: [String] = []
        for _ in 0..<count {
            let text = Base32.encode(SecureRandom.bytes(count: 20)).lowercased()
            let code = stride(from: 0, to: text.count, by: 4).map { start in
                String(text.dropFirst(start).prefix(4))
            }.joined(separator: "-")
            try connection.execute(
                dialect.sql("INSERT INTO recovery_codes (code_hash, user_id, created_at) VALUES (?, ?, ?)"),
                [.blob(hash(code)), .text(userID), .time(now)])
            codes.append(code)
        }
        return codes
    }

    /// Spends one code of the user's inside the caller's transaction.
    ///
    /// - Returns: false when the code is not one of the user's unused codes.
    static func spend(_ code: String, userID: String, now: Date, dialect: SQLDialect, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            dialect.sql("UPDATE recovery_codes SET used_at = ? WHERE code_hash = ? AND user_id = ? AND used_at IS NULL"),
            [.time(now), .blob(hash(code)), .text(userID)]) == 1
    }

    /// The stored form: SHA-256 of the code without separators, in lower case.
    static func hash(_ code: String) -> [UInt8] {
        let normalised = code.lowercased().filter { $0 != "-" && $0 != " " }
        return HashFunction.sha256.hash(Array(normalised.utf8))
    }
}
