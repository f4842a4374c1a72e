/// The shape of every error the package's modules throw (`AuthError`, `CryptoError`, `JOSEError`,
/// `StoreError`, `HTTPServerError`, `HTTPClientError`, `CookieError`, `ConfigurationError`).
///
/// - A struct, not an enum, so a module can add codes without breaking a `switch`: its nested
///   ``Code`` is an ``ErrorCode``, a string with its known values as static constants.
/// - ``code`` says what kind of failure happened; ``message`` says what exactly, a sentence safe
///   to log that never holds a secret or the bytes of the input. Context of the type's own sits
///   beside them (`AuthError.reason`, `AuthError.retryAfter`).
/// - Equality and hashing compare ``code`` only, so a test matches the kind of failure:
///   `#expect(throws: StoreError.constraint()) { ... }`.
///
/// The public wire and JSON modules (`JSONError`, `WireDecodingError`) follow the same shape
/// without this protocol, so that what apps link depends on nothing.
package protocol CodedError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of failure of this error type.
    associatedtype Code: ErrorCode

    /// The kind of failure.
    var code: Code { get }
    /// What exactly went wrong, in words safe to log.
    var message: String { get }
}

/// The code of a ``CodedError``: an extensible set of names.
package protocol ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible where RawValue == String {
    /// A code by its name; any name is a valid code.
    init(rawValue: String)
}

extension ErrorCode {
    /// The code's name.
    package var description: String { rawValue }
}

extension CodedError {
    /// Compares the codes only.
    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    /// Hashes the code only, to agree with `==`.
    package func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// `TypeName.code: message`, or `TypeName.code` when there is no message.
    package var description: String {
        message.isEmpty ? "\(Self.self).\(code)" : "\(Self.self).\(code): \(message)"
    }
}
