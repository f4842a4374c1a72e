import LatchkeyErrors

/// An error from a LatchkeyCrypto operation.
///
/// The ``code`` says what kind of failure happened; the ``message`` says what exactly, for logs and
/// tests. Equality and hashing compare the code only, so a test can write
/// `#expect(throws: CryptoError.malformedKey()) { ... }`. A message never contains key material,
/// passwords or plaintext. It has the shape of every error of the package (`CodedError`).
package struct CryptoError: CodedError {
    /// The kind of a ``CryptoError``; new codes may be added, so switch with a `default`. The raw
    /// value is the code's name.
    package struct Code: ErrorCode {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// A key did not parse, is on the wrong curve or algorithm, or breaks the import policy.
        package static let malformedKey = Code(rawValue: "malformedKey")
        /// A signature encoding did not parse (wrong length, not strict DER).
        package static let malformedSignature = Code(rawValue: "malformedSignature")
        /// A caller-chosen parameter is out of range (key size, nonce length, output length).
        package static let invalidParameter = Code(rawValue: "invalidParameter")
        /// Authenticated decryption found a tag that does not match.
        package static let authenticationFailure = Code(rawValue: "authenticationFailure")
        /// OpenSSL or argon2 failed in a way the input does not explain.
        package static let library = Code(rawValue: "library")
        /// Encoded data other than a key or signature did not parse: a PHC string, a sealed box.
        package static let malformedInput = Code(rawValue: "malformedInput")
    }

    /// The kind of failure.
    package var code: Code
    /// What exactly went wrong, in words safe to log.
    package var message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What exactly went wrong; never include secrets.
    package init(_ code: Code, _ message: String = "") {
        self.code = code
        self.message = message
    }

    /// A ``Code/malformedKey`` error.
    ///
    /// - Parameter message: What is wrong with the key.
    /// - Returns: The error.
    package static func malformedKey(_ message: String = "") -> CryptoError {
        CryptoError(.malformedKey, message)
    }

    /// A ``Code/malformedSignature`` error.
    ///
    /// - Parameter message: What is wrong with the signature.
    /// - Returns: The error.
    package static func malformedSignature(_ message: String = "") -> CryptoError {
        CryptoError(.malformedSignature, message)
    }

    /// An ``Code/invalidParameter`` error.
    ///
    /// - Parameter message: Which parameter, and the allowed range.
    /// - Returns: The error.
    package static func invalidParameter(_ message: String = "") -> CryptoError {
        CryptoError(.invalidParameter, message)
    }

    /// An ``Code/authenticationFailure`` error.
    ///
    /// - Parameter message: What failed to authenticate.
    /// - Returns: The error.
    package static func authenticationFailure(_ message: String = "") -> CryptoError {
        CryptoError(.authenticationFailure, message)
    }

    /// A ``Code/library`` error.
    ///
    /// - Parameter message: The failing call and the library's own reason string.
    /// - Returns: The error.
    package static func library(_ message: String = "") -> CryptoError {
        CryptoError(.library, message)
    }

    /// A ``Code/malformedInput`` error.
    ///
    /// - Parameter message: What is wrong with the input.
    /// - Returns: The error.
    package static func malformedInput(_ message: String = "") -> CryptoError {
        CryptoError(.malformedInput, message)
    }
}
