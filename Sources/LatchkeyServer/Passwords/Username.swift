import FoundationEssentials
import LatchkeyBasics
import LatchkeyCrypto

/// A username in the one form it is stored and looked up in (docs/reference.md, "Passwords").
///
/// The rule: NFKC-normalise, trim surrounding white space, lowercase (Unicode's default case
/// mapping). Then it is either
/// - email-like: exactly one `@` with text on both sides, at most 254 characters, no white space
///   or control characters; it is also stored as the user's (unverified) email; or
/// - a handle: 3 to 64 letters (any script), digits, `.`, `_` or `-`.
///
/// So `Ada@Example.COM`, ` ada@example.com ` and its full-width form are one account, and what
/// Password AutoFill saved keeps working whatever case the keyboard produced.
struct Username: Sendable, Hashable {
    /// The normalised username.
    var value: String
    /// Whether it is email-like.
    var isEmail: Bool

    static let maximumEmailLength = 254
    static let handleLengths = 3...64

    /// Normalises and checks a username as typed.
    ///
    /// - Throws: ``AuthError/Code/invalidRequest`` saying which part of the rule it breaks.
    init(_ raw: String) throws {
        guard raw.utf8.count <= 1024 else { throw AuthError.invalidRequest("username is too long") }
        let value = raw.nfkc.trimmingWhitespace().lowercased()
        let scalars = value.unicodeScalars
        guard !scalars.isEmpty else { throw AuthError.invalidRequest("username is required") }
        if value.contains("@") {
            let parts = value.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw AuthError.invalidRequest("an email-like username has exactly one @ with text on both sides")
            }
            guard scalars.count <= Self.maximumEmailLength else {
                throw AuthError.invalidRequest("an email-like username is at most \(Self.maximumEmailLength) characters")
            }
            guard !scalars.contains(where: { $0.properties.isWhitespace || Self.isControl($0) }) else {
                throw AuthError.invalidRequest("a username cannot contain spaces or control characters")
            }
            self.init(value: value, isEmail: true)
        } else {
            guard Self.handleLengths.contains(scalars.count) else {
                throw AuthError.invalidRequest("a username that is not an email is 3 to 64 characters")
            }
            guard scalars.allSatisfy({ Self.isAlphanumeric($0) || "._-".unicodeScalars.contains($0) }) else {
                throw AuthError.invalidRequest("a username that is not an email has only letters, digits, '.', '_' and '-'")
            }
            self.init(value: value, isEmail: false)
        }
    }

    /// Control and format characters (general categories Cc and Cf).
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        [.control, .format].contains(scalar.properties.generalCategory)
    }

    /// Letters, marks and numbers (general categories L*, M* and N*), in any script.
    private static func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
            true
        default: false
        }
    }

    private init(value: String, isEmail: Bool) {
        self.value = value
        self.isEmail = isEmail
    }
}
