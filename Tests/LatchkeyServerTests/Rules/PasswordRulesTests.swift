import LatchkeyCrypto
@testable import LatchkeyServer
import Testing

/// The password rules (``PasswordPolicy``; docs/security.md S12, docs/reference.md "Passwords"):
/// NFKC first, then at least `password.min_length` (8) and at most 1024 code points of the
/// normalised text, nothing trimmed or cut, no composition rules, and not on the common list
/// (compared after lowercasing). Each refusal names the field and carries its reason.
@Suite("Password rules")
struct PasswordRulesTests {
    enum Outcome: Sendable, Equatable {
        case accepted
        case tooShort
        case tooLong
        case common
    }

    /// A password as typed, the configured minimum, the field it came in, and what the rule says.
    static let rows: [(password: String, minimum: Int, field: String, outcome: Outcome)] = [
        ("correct horse battery staple", 8, "password", .accepted),
        ("Tr0ub4dor&3", 8, "password", .accepted),
        ("qbxmwfzk", 8, "password", .accepted),
        ("abcdefgh", 8, "password", .common),
        ("qbxmwfz", 8, "password", .tooShort),
        ("", 8, "password", .tooShort),
        ("        ", 8, "password", .accepted),
        ("abcdefghijk", 12, "new_password", .tooShort),
        ("correcthorse", 12, "new_password", .accepted),
        // Counted in code points after NFKC.
        (String(repeating: "e\u{301}", count: 8), 8, "password", .accepted),
        (String(repeating: "e\u{301}", count: 7), 8, "password", .tooShort),
        ("\u{2167}\u{2167}", 8, "password", .accepted),
        ("\u{1F469}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466}", 8, "password", .tooShort),
        (String(repeating: "\u{1F469}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466}", count: 2), 8, "password", .accepted),
        (String(repeating: "\u{1F600}", count: 8), 8, "password", .accepted),
        // The common list, whatever the case or the width.
        ("password", 8, "password", .common),
        ("PASSWORD", 8, "password", .common),
        ("PassWord1", 8, "new_password", .common),
        ("\u{FF50}\u{FF41}\u{FF53}\u{FF53}\u{FF57}\u{FF4F}\u{FF52}\u{FF44}", 8, "password", .common),
        ("12345678", 8, "password", .common),
        ("qwertyuiop", 8, "password", .common),
        ("xxxxxxxx", 8, "password", .common),
        ("password", 12, "password", .tooShort),
        // At most 1024 code points once normalised, at most 4096 bytes before.
        (String(repeating: "x", count: 1023) + "y", 8, "password", .accepted),
        (String(repeating: "x", count: 1024) + "y", 8, "new_password", .tooLong),
        (String(repeating: "\u{1F600}", count: 1024), 8, "password", .accepted),
        (String(repeating: "\u{1F600}", count: 1025), 8, "password", .tooLong),
        (String(repeating: "\u{FDFA}", count: 56), 8, "password", .accepted),
        (String(repeating: "\u{FDFA}", count: 57), 8, "password", .tooLong),
        (String(repeating: "x", count: 5000), 8, "password", .tooLong),
    ]

    @Test("S12: NFKC, then at least the minimum and at most 1024 code points, and not a common password; the refusal names the field", arguments: rows)
    func newPasswordS12(_ row: (password: String, minimum: Int, field: String, outcome: Outcome)) {
        let policy = PasswordPolicy(minimumLength: row.minimum)
        let result = Result { () throws in
            let normalized = try PasswordPolicy.normalize(row.password, field: row.field)
            try policy.check(newPassword: normalized, field: row.field)
            return normalized
        }
        switch (row.outcome, result) {
        case (.accepted, .success(let normalized)):
            #expect(Array(normalized.unicodeScalars) == Array(row.password.nfkc.unicodeScalars), "nothing trimmed or cut")
        case (.accepted, .failure(let error)):
            Issue.record("refused: \(error)")
        case (_, .success):
            Issue.record("accepted, expected \(row.outcome)")
        case (let outcome, .failure(let error)):
            guard let error = error as? AuthError else {
                Issue.record("not an AuthError: \(error)")
                return
            }
            #expect(error.code == AuthError.Code.invalidRequest)
            #expect(error.message.hasPrefix(row.field + " "), "\(error.message)")
            switch outcome {
            case .tooShort:
                #expect(error.reason == .passwordTooShort)
                #expect(error.message.contains("at least \(row.minimum) characters"), "\(error.message)")
            case .tooLong:
                #expect(error.reason == .passwordTooLong)
                #expect(error.message.contains("longer than 1024 characters"), "\(error.message)")
            case .common:
                #expect(error.reason == .passwordCommon)
                #expect(error.message.contains("commonly used"), "\(error.message)")
            case .accepted:
                break
            }
        }
    }

    /// Spellings that hash as one password, and spellings that stay two.
    static let samePassword: [(String, String, Bool)] = [
        ("caf\u{E9} au lait", "cafe\u{301} au lait", true),
        ("\u{FF30}assword-\u{FF11}\u{FF12}", "Password-12", true),
        ("\u{FB01}nal answer", "final answer", true),
        ("Password-12", "password-12", false),
        (" secret phrase", "secret phrase", false),
        ("secret phrase ", "secret phrase", false),
        ("stra\u{DF}e!!!", "strasse!!!", false),
    ]

    @Test("S12: what is hashed is the NFKC form: composed and decomposed, full and half width are one password; case and spaces count", arguments: samePassword)
    func normalizedFormS12(_ row: (String, String, Bool)) throws {
        let first = try PasswordPolicy.normalize(row.0, field: "password")
        let second = try PasswordPolicy.normalize(row.1, field: "password")
        #expect((Array(first.utf8) == Array(second.utf8)) == row.2)
    }

    @Test("S12: the common list compares after NFKC and lowercasing, and a list without the password lets it through")
    func commonListCompares() {
        let list = CommonPasswords(["Letmein1", "hunter22"])
        #expect(list.count == 2)
        for candidate in ["letmein1", "LETMEIN1", "\u{FF4C}etmein1", "Hunter22"] { #expect(list.contains(candidate), "\(candidate)") }
        for candidate in ["letmein", "letmein12", "hunter2", ""] { #expect(!list.contains(candidate), "\(candidate)") }
        let policy = PasswordPolicy(minimumLength: 8, commonPasswords: { list })
        #expect(throws: AuthError.invalidRequest("")) { try policy.check(newPassword: "LetMeIn1", field: "password") }
        #expect(throws: Never.self) { try policy.check(newPassword: "password", field: "password") }
    }
}
