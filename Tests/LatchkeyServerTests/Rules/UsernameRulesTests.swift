@testable import LatchkeyServer
import Testing

/// The username rule (``Username``; docs/reference.md, "Passwords"): NFKC, surrounding white
/// space trimmed, lowercased; then email-like (one `@` with text on both sides, at most 254
/// characters, no white space or control characters) or a handle of 3 to 64 letters of any
/// script, digits, `.`, `_` and `-`.
@Suite("Username rules")
struct UsernameRulesTests {
    /// A username as typed, and what it is stored as: its value (compared scalar by scalar, so
    /// that composed and decomposed forms differ) and whether it is email-like.
    static let accepted: [(raw: String, value: String, isEmail: Bool)] = [
        ("ada", "ada", false),
        ("Ada", "ada", false),
        ("  Ada.Lovelace_1-x  ", "ada.lovelace_1-x", false),
        ("\tada\r\n", "ada", false),
        ("\u{A0}ada\u{3000}", "ada", false),
        ("\u{FF21}\u{FF24}\u{FF21}", "ada", false),
        ("\u{FB01}nn", "finn", false),
        ("\u{212A}elvin", "kelvin", false),
        ("x\u{B2}y", "x2y", false),
        ("\u{216B}", "xii", false),
        ("Jose\u{301}", "jos\u{E9}", false),
        ("Jos\u{E9}", "jos\u{E9}", false),
        ("\u{C5}SA", "\u{E5}sa", false),
        ("\u{3A9}mega", "\u{3C9}mega", false),
        ("Stra\u{DF}e", "stra\u{DF}e", false),
        ("STRASSE", "strasse", false),
        ("\u{674E}\u{5C0F}\u{9F8D}", "\u{674E}\u{5C0F}\u{9F8D}", false),
        ("\u{661}\u{662}\u{663}", "\u{661}\u{662}\u{663}", false),
        ("...", "...", false),
        (String(repeating: "a", count: 64), String(repeating: "a", count: 64), false),
        (String(repeating: " ", count: 1021) + "ada", "ada", false),
        ("Ada@Example.COM", "ada@example.com", true),
        (" ada@example.com ", "ada@example.com", true),
        ("\u{FF41}\u{FF44}\u{FF41}\u{FF20}\u{FF45}\u{FF58}\u{FF41}\u{FF4D}\u{FF50}\u{FF4C}\u{FF45}\u{FF0E}\u{FF43}\u{FF4F}\u{FF4D}", "ada@example.com", true),
        ("a@b", "a@b", true),
        ("ada+tag@example.com", "ada+tag@example.com", true),
        ("\u{DC}ser@\u{4F8B}\u{3048}.JP", "\u{FC}ser@\u{4F8B}\u{3048}.jp", true),
        (String(repeating: "a", count: 242) + "@example.com", String(repeating: "a", count: 242) + "@example.com", true),
    ]

    @Test("usernames are stored NFKC, trimmed and lowercased; with an @ they are email-like", arguments: accepted)
    func acceptedForms(_ row: (raw: String, value: String, isEmail: Bool)) throws {
        let username = try Username(row.raw)
        #expect(Array(username.value.unicodeScalars) == Array(row.value.unicodeScalars), "\(username.value.debugDescription)")
        #expect(username.isEmail == row.isEmail)
        // Stored once, found again: the rule is idempotent.
        #expect(try Username(username.value) == username)
    }

    /// Usernames refused, and the words the refusal says.
    static let refused: [(raw: String, rule: String)] = [
        ("", "username is required"),
        ("   ", "username is required"),
        ("\u{3000}\t\n", "username is required"),
        (String(repeating: " ", count: 1022) + "ada", "username is too long"),
        ("ab", "3 to 64 characters"),
        ("a\u{301}b", "3 to 64 characters"),
        (" ab ", "3 to 64 characters"),
        (String(repeating: "a", count: 65), "3 to 64 characters"),
        ("ada+tag", "only letters, digits"),
        ("ada lovelace", "only letters, digits"),
        ("ada\u{200B}x", "only letters, digits"),
        ("ada!", "only letters, digits"),
        ("ada/../x", "only letters, digits"),
        ("\u{1F600}\u{1F600}\u{1F600}", "only letters, digits"),
        ("@", "exactly one @"),
        ("ada@", "exactly one @"),
        ("@example.com", "exactly one @"),
        ("a@b@c", "exactly one @"),
        ("ada@@example.com", "exactly one @"),
        ("ada\u{FF20}\u{FF20}example.com", "exactly one @"),
        ("ada @example.com", "spaces or control characters"),
        ("ada@exam ple.com", "spaces or control characters"),
        ("ada\u{200B}@example.com", "spaces or control characters"),
        ("ada@example.com\u{202E}", "spaces or control characters"),
        ("ada\u{7}@example.com", "spaces or control characters"),
        ("ada\u{0}@example.com", "spaces or control characters"),
        (String(repeating: "a", count: 243) + "@example.com", "at most 254 characters"),
    ]

    @Test("usernames that break the rule are refused with invalid_request saying which part", arguments: refused)
    func refusedForms(_ row: (raw: String, rule: String)) {
        let error = #expect(throws: AuthError.invalidRequest("")) { try Username(row.raw) }
        #expect(error?.message.contains(row.rule) == true, "\(row.raw.prefix(40).debugDescription): \(error?.message ?? "")")
    }

    /// Pairs typed differently that are one account, and pairs that are two.
    static let sameAccount: [(String, String, Bool)] = [
        ("Ada@Example.COM", "ada@example.com", true),
        ("\u{FF21}da", "ada", true),
        ("Jose\u{301}", "jos\u{E9}", true),
        ("ada", "ada.", false),
        ("stra\u{DF}e", "strasse", false),
        ("ada@example.com", "ada@example.com.", false),
    ]

    @Test("two spellings are one account exactly when their stored forms are equal", arguments: sameAccount)
    func oneAccount(_ row: (String, String, Bool)) throws {
        #expect((try Username(row.0).value == Username(row.1).value) == row.2)
    }
}
