/// An error from a LatchkeyCrypto operation.
///
/// The ``code`` says what kind of failure happened; the ``reason`` says what exactly, for logs and
/// tests. Equality and hashing compare the code only, so a test can write
/// `#expect(throws: CryptoError.malformedKey()) { ... }`. A reason never contains key material,
/// passwords or plaintext.
public struct CryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of a ``CryptoError``; new codes may be added, so switch with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) { self.name = name }

        /// A key did not parse, is on the wrong curve or algorithm, or breaks the import policy.
        public static let malformedKey = Code("malformedKey")
        /// A signature encoding did not parse (wrong length, not strict DER).
        public static let malformedSignature = Code("malformedSignature")
        /// A caller-chosen parameter is out of range (key size, nonce length, output length).
        public static let invalidParameter = Code("invalidParameter")
        /// Authenticated decryption found a tag that does not match.
        public static let authenticationFailure = Code("authenticationFailure")
        /// OpenSSL or argon2 failed in a way the input does not explain.
        public static let library = Code("library")
        /// Encoded data other than a key or signature did not parse: a PHC string, a sealed box.
        public static let malformedInput = Code("malformedInput")

        /// The code's name, for example `malformedKey`.
        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// What exactly went wrong, in words safe to log.
    public var reason: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - reason: What exactly went wrong; never include secrets.
    public init(code: Code, reason: String = "") {
        self.code = code
        self.reason = reason
    }

    /// `code: reason`, or only the code when there is no reason.
    public var description: String {
        reason.isEmpty ? "CryptoError.\(code)" : "CryptoError.\(code): \(reason)"
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
