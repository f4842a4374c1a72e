import FoundationEssentials
import LatchkeyCrypto

/// What a new password must be (docs/security.md S12, NIST SP 800-63B §3.1.1.2): long enough, not
/// absurdly long, and not a common password. There are no composition rules.
///
/// Passwords are normalised with NFKC before anything else, so the composed and decomposed
/// forms of "é" (and full-width and half-width letters) are the same password on every device.
/// Length counts Unicode code points of the normalised text, as NIST asks. Nothing is ever
/// truncated: a password longer than ``maximumLength`` is refused, not cut.
struct PasswordPolicy: Sendable {
    /// `password.min_length`: at least 8.
    let minimumLength: Int
    /// The vendored list of common passwords, fetched when a new password is first checked.
    ///
    /// Not at start: building the set normalises 19,640 entries, which reaches ICU's
    /// normalisation data and leaves the set on the heap, and a server that only refreshes
    /// sessions never needs it (0.8 MB resident, measured on `latchkey serve --dev` at its first sign-up).
    private let commonPasswords: @Sendable () -> CommonPasswords

    init(minimumLength: Int, commonPasswords: @escaping @Sendable () -> CommonPasswords = { .shared }) {
        self.minimumLength = minimumLength
        self.commonPasswords = commonPasswords
    }

    /// The longest password accepted, in code points after normalisation: well beyond the 64
    /// that S12 asks for, and small enough that hashing it costs no more than a short one.
    static let maximumLength = 1024
    /// The most UTF-8 bytes read before normalising, which can expand text up to 18 times.
    static let maximumInputBytes = 4096

    /// The NFKC form of a password: what is hashed and compared.
    ///
    /// - Throws: ``AuthError/Code/invalidRequest`` with reason `password_too_long` for input
    ///   beyond ``maximumInputBytes`` or, once normalised, ``maximumLength``.
    static func normalize(_ password: String, field: String) throws -> String {
        let tooLong = AuthError.invalidRequest("\(field) is longer than \(maximumLength) characters", reason: .passwordTooLong)
        guard password.utf8.count <= maximumInputBytes else { throw tooLong }
        let normalized = password.nfkc
        guard normalized.unicodeScalars.count <= maximumLength else { throw tooLong }
        return normalized
    }

    /// Checks a new password, already normalised.
    ///
    /// - Throws: ``AuthError/Code/invalidRequest`` with a ``AuthError/Reason`` and a sentence a
    ///   person can act on.
    func check(newPassword normalized: String, field: String) throws {
        guard normalized.unicodeScalars.count >= minimumLength else {
            throw AuthError.invalidRequest("\(field) must be at least \(minimumLength) characters long", reason: .passwordTooShort)
        }
        guard !commonPasswords().contains(normalized) else {
            throw AuthError.invalidRequest(
                "\(field) is one of the most commonly used passwords, which attackers try first; choose another", reason: .passwordCommon)
        }
    }
}

/// The list of common passwords new ones are checked against (docs/security.md S12): Django's list
/// of 19,640, vendored with its source and licence in `CommonPasswordList.swift`.
///
/// Loaded once per process into a set; entries and candidates are compared after NFKC and
/// lowercasing, so "PassWord1" is as refused as "password1".
final class CommonPasswords: Sendable {
    private let entries: Set<String>

    /// The vendored list (`CommonPasswordList.swift`), made into a set on first use.
    static let shared = CommonPasswords(vendoredList.split(separator: "\n").map(String.init))

    /// A list from the given passwords.
    init(_ passwords: some Sequence<String>) {
        entries = Set(passwords.lazy.map(Self.key).filter { !$0.isEmpty })
    }

    /// How many distinct entries the list holds.
    var count: Int { entries.count }

    /// Whether `password` (in any case or normalisation form) is on the list.
    func contains(_ password: String) -> Bool {
        entries.contains(Self.key(password))
    }

    private static func key(_ password: String) -> String {
        password.nfkc.lowercased()
    }
}
