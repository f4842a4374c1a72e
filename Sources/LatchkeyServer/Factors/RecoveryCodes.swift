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
    static func replace(userID: String, now: Date, on connection: any SQLConnection) throws -> [String] {
        let repository = RecoveryCodeRepository()
        try repository.deleteAll(userID: userID, on: connection)
        var codes: [String] = []
        for _ in 0..<count {
            let text = Base32.encode(SecureRandom.bytes(count: 20)).lowercased()
            let code = stride(from: 0, to: text.count, by: 4).map { start in
                String(text.dropFirst(start).prefix(4))
            }.joined(separator: "-")
            try repository.insert(codeHash: hash(code), userID: userID, at: now, on: connection)
            codes.append(code)
        }
        return codes
    }

    /// Spends one code of the user's inside the caller's transaction, by compare-and-set.
    ///
    /// - Returns: false when the code is not one of the user's unused codes (or a concurrent
    ///   request spent it first).
    static func spend(_ code: String, userID: String, now: Date, on connection: any SQLConnection) throws -> Bool {
        try RecoveryCodeRepository().spend(codeHash: hash(code), userID: userID, at: now, on: connection)
    }

    /// The stored form: SHA-256 of the code without separators, in lower case.
    static func hash(_ code: String) -> [UInt8] {
        let normalised = code.lowercased().filter { $0 != "-" && $0 != " " }
        return HashFunction.sha256.hash(Array(normalised.utf8))
    }
}
