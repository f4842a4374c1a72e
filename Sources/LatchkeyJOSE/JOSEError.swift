/// Why a JOSE object or a JWT was refused.
///
/// Errors compare by ``code`` only, so tests and callers match on the kind of failure; ``reason``
/// is for a developer and never contains token, key or signature bytes (docs/security.md S26).
public struct JOSEError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The check that failed. Its description is the short name the CLI and logs print.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// Not a compact JWS, bad base64url, bad JSON, or a header or claim of the wrong type.
        public static let malformed = Code("malformed")
        /// `alg` names an algorithm this library does not implement, such as `none`.
        public static let unsupportedAlgorithm = Code("unsupported_algorithm")
        /// `alg` is not in the verification context's allow-list, or not the key's algorithm.
        public static let algorithmNotAllowed = Code("algorithm_not_allowed")
        /// The header asks for something we refuse: `crit`, an embedded or remote key.
        public static let unsupportedHeader = Code("unsupported_header")
        /// No key in the set has the token's `kid`.
        public static let unknownKey = Code("unknown_key")
        /// A key could not be used: wrong type, size, `use` or `key_ops`, or an ambiguous set;
        /// or the token names a key its JWK Set lists but that was skipped as unusable (S30).
        public static let invalidKey = Code("invalid_key")
        /// The signature does not verify.
        public static let invalidSignature = Code("invalid_signature")
        /// `typ` is not what this context expects.
        public static let wrongType = Code("wrong_type")
        /// `exp` has passed (beyond the leeway).
        public static let expired = Code("expired")
        /// `nbf` is still ahead (beyond the leeway).
        public static let notYetValid = Code("not_yet_valid")
        /// `iat` is in the future (beyond the leeway).
        public static let issuedInFuture = Code("issued_in_future")
        /// `iss` is not the expected issuer.
        public static let wrongIssuer = Code("wrong_issuer")
        /// No `aud` value is in the allow-list.
        public static let wrongAudience = Code("wrong_audience")
        /// A claim the policy requires is absent.
        public static let missingClaim = Code("missing_claim")
    }

    /// The check that failed.
    public var code: Code
    /// A sentence for a developer; free of secrets.
    public var reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }

    public static func == (lhs: JOSEError, rhs: JOSEError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    static func malformed(_ reason: String) -> JOSEError { JOSEError(.malformed, reason) }
}
