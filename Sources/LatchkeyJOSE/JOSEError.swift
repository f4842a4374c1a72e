import LatchkeyErrors

/// Why a JOSE object or a JWT was refused.
///
/// Errors compare by ``code`` only, so tests and callers match on the kind of failure; ``message``
/// is for a developer and never contains token, key or signature bytes (docs/security.md S26).
/// It has the shape of every error of the package (`CodedError`).
package struct JOSEError: CodedError {
    /// The check that failed; new codes may be added, so switch with a `default`. Its raw value
    /// (and description) is the short name the CLI and logs print.
    package struct Code: ErrorCode {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// Not a compact JWS, bad base64url, bad JSON, or a header or claim of the wrong type.
        package static let malformed = Code(rawValue: "malformed")
        /// `alg` names an algorithm this library does not implement, such as `none`.
        package static let unsupportedAlgorithm = Code(rawValue: "unsupported_algorithm")
        /// `alg` is not in the verification context's allow-list, or not the key's algorithm.
        package static let algorithmNotAllowed = Code(rawValue: "algorithm_not_allowed")
        /// The header asks for something we refuse: `crit`, an embedded or remote key.
        package static let unsupportedHeader = Code(rawValue: "unsupported_header")
        /// No key in the set has the token's `kid`.
        package static let unknownKey = Code(rawValue: "unknown_key")
        /// A key could not be used: wrong type, size, `use` or `key_ops`, or an ambiguous set;
        /// or the token names a key its JWK Set lists but that was skipped as unusable (S30).
        package static let invalidKey = Code(rawValue: "invalid_key")
        /// The signature does not verify.
        package static let invalidSignature = Code(rawValue: "invalid_signature")
        /// `typ` is not what this context expects.
        package static let wrongType = Code(rawValue: "wrong_type")
        /// `exp` has passed (beyond the leeway).
        package static let expired = Code(rawValue: "expired")
        /// `nbf` is still ahead (beyond the leeway).
        package static let notYetValid = Code(rawValue: "not_yet_valid")
        /// `iat` is in the future (beyond the leeway).
        package static let issuedInFuture = Code(rawValue: "issued_in_future")
        /// `iss` is not the expected issuer.
        package static let wrongIssuer = Code(rawValue: "wrong_issuer")
        /// No `aud` value is in the allow-list.
        package static let wrongAudience = Code(rawValue: "wrong_audience")
        /// A claim the policy requires is absent.
        package static let missingClaim = Code(rawValue: "missing_claim")
    }

    /// The check that failed.
    package var code: Code
    /// A sentence for a developer; free of secrets.
    package var message: String

    /// Creates an error.
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    package var description: String { "\(code): \(message)" }

    static func malformed(_ message: String) -> JOSEError { JOSEError(.malformed, message) }
}
