/// Why a JOSE object or a JWT was refused.
///
/// Errors compare by ``code`` only, so tests and callers match on the kind of failure; ``message``
/// is for a developer and never contains token, key or signature bytes (docs/security.md S26).
/// The shape every error of the package follows is described on `AuthError` (LatchkeyServer).
public struct JOSEError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The check that failed; new codes may be added, so switch with a `default`. Its raw value
    /// (and description) is the short name the CLI and logs print.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Not a compact JWS, bad base64url, bad JSON, or a header or claim of the wrong type.
        public static let malformed = Code(rawValue: "malformed")
        /// `alg` names an algorithm this library does not implement, such as `none`.
        public static let unsupportedAlgorithm = Code(rawValue: "unsupported_algorithm")
        /// `alg` is not in the verification context's allow-list, or not the key's algorithm.
        public static let algorithmNotAllowed = Code(rawValue: "algorithm_not_allowed")
        /// The header asks for something we refuse: `crit`, an embedded or remote key.
        public static let unsupportedHeader = Code(rawValue: "unsupported_header")
        /// No key in the set has the token's `kid`.
        public static let unknownKey = Code(rawValue: "unknown_key")
        /// A key could not be used: wrong type, size, `use` or `key_ops`, or an ambiguous set;
        /// or the token names a key its JWK Set lists but that was skipped as unusable (S30).
        public static let invalidKey = Code(rawValue: "invalid_key")
        /// The signature does not verify.
        public static let invalidSignature = Code(rawValue: "invalid_signature")
        /// `typ` is not what this context expects.
        public static let wrongType = Code(rawValue: "wrong_type")
        /// `exp` has passed (beyond the leeway).
        public static let expired = Code(rawValue: "expired")
        /// `nbf` is still ahead (beyond the leeway).
        public static let notYetValid = Code(rawValue: "not_yet_valid")
        /// `iat` is in the future (beyond the leeway).
        public static let issuedInFuture = Code(rawValue: "issued_in_future")
        /// `iss` is not the expected issuer.
        public static let wrongIssuer = Code(rawValue: "wrong_issuer")
        /// No `aud` value is in the allow-list.
        public static let wrongAudience = Code(rawValue: "wrong_audience")
        /// A claim the policy requires is absent.
        public static let missingClaim = Code(rawValue: "missing_claim")
    }

    /// The check that failed.
    public var code: Code
    /// A sentence for a developer; free of secrets.
    public var message: String

    /// The former name of ``message``, kept so that existing callers read on.
    public var reason: String {
        get { message }
        set { message = newValue }
    }

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }

    /// Compares the codes only.
    public static func == (lhs: JOSEError, rhs: JOSEError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code only, to agree with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    static func malformed(_ message: String) -> JOSEError { JOSEError(.malformed, message) }
}
