/// An error from a LatchkeyCrypto operation.
///
/// The ``code`` says what kind of failure happened; the ``message`` says what exactly, for logs and
/// tests. Equality and hashing compare the code only, so a test can write
/// `#expect(throws: CryptoError.malformedKey()) { ... }`. A message never contains key material,
/// passwords or plaintext. The shape every error of the package follows is described on
/// `AuthError` (LatchkeyServer).
public struct CryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of a ``CryptoError``; new codes may be added, so switch with a `default`. The raw
    /// value is the code's name.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A key did not parse, is on the wrong curve or algorithm, or breaks the import policy.
        public static let malformedKey = Code(rawValue: "malformedKey")
        /// A signature encoding did not parse (wrong length, not strict DER).
        public static let malformedSignature = Code(rawValue: "malformedSignature")
        /// A caller-chosen parameter is out of range (key size, nonce length, output length).
        public static let invalidParameter = Code(rawValue: "invalidParameter")
        /// Authenticated decryption found a tag that does not match.
        public static let authenticationFailure = Code(rawValue: "authenticationFailure")
        /// OpenSSL or argon2 failed in a way the input does not explain.
        public static let library = Code(rawValue: "library")
        /// Encoded data other than a key or signature did not parse: a PHC string, a sealed box.
        public static let malformedInput = Code(rawValue: "malformedInput")

        /// The code's name, for example `malformedKey`.
        public var description: String { rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// What exactly went wrong, in words safe to log.
    public var message: String

    /// The former name of ``message``, kept so that existing callers read on.
    public var reason: String {
        get { message }
        set { message = newValue }
    }

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What exactly went wrong; never include secrets.
    public init(_ code: Code, _ message: String = "") {
        self.code = code
        self.message = message
    }

    /// Creates an error (the labelled spelling of ``init(_:_:)``).
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - reason: What exactly went wrong; never include secrets.
    public init(code: Code, reason: String = "") {
        self.init(code, reason)
    }

    /// `CryptoError.code: message`, or only the code when there is no message.
    public var description: String {
        message.isEmpty ? "CryptoError.\(code)" : "CryptoError.\(code): \(message)"
    }

    /// Compares the codes only (STYLE §3).
    ///
    /// - Parameters:
    ///   - lhs: An error.
    ///   - rhs: Another error.
    /// - Returns: Whether both have the same ``code``.
    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool {
        lhs.code == rhs.code
    }

    /// Hashes the code only, to agree with ``==(_:_:)``.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    /// A ``Code/malformedKey`` error.
    ///
    /// - Parameter reason: What is wrong with the key.
    /// - Returns: The error.
    public static func malformedKey(_ reason: String = "") -> CryptoError {
        CryptoError(code: .malformedKey, reason: reason)
    }

    /// A ``Code/malformedSignature`` error.
    ///
    /// - Parameter reason: What is wrong with the signature.
    /// - Returns: The error.
    public static func malformedSignature(_ reason: String = "") -> CryptoError {
        CryptoError(code: .malformedSignature, reason: reason)
    }

    /// An ``Code/invalidParameter`` error.
    ///
    /// - Parameter reason: Which parameter, and the allowed range.
    /// - Returns: The error.
    public static func invalidParameter(_ reason: String = "") -> CryptoError {
        CryptoError(code: .invalidParameter, reason: reason)
    }

    /// An ``Code/authenticationFailure`` error.
    ///
    /// - Parameter reason: What failed to authenticate.
    /// - Returns: The error.
    public static func authenticationFailure(_ reason: String = "") -> CryptoError {
        CryptoError(code: .authenticationFailure, reason: reason)
    }

    /// A ``Code/library`` error.
    ///
    /// - Parameter reason: The failing call and the library's own reason string.
    /// - Returns: The error.
    public static func library(_ reason: String = "") -> CryptoError {
        CryptoError(code: .library, reason: reason)
    }

    /// A ``Code/malformedInput`` error.
    ///
    /// - Parameter reason: What is wrong with the input.
    /// - Returns: The error.
    public static func malformedInput(_ reason: String = "") -> CryptoError {
        CryptoError(code: .malformedInput, reason: reason)
    }
}
