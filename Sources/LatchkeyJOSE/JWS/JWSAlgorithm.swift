/// A JWS `alg` value (RFC 7518 §3.1).
///
/// A string struct rather than an enum, so a token naming an algorithm we do not know is still
/// representable, and refused with a clear error.
package struct JWSAlgorithm: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package var description: String { rawValue }

    /// ECDSA P-256 with SHA-256, signature as raw r‖s (RFC 7518 §3.4). What Latchkey signs with.
    package static let es256 = JWSAlgorithm(rawValue: "ES256")
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3). What Apple signs identity tokens with.
    package static let rs256 = JWSAlgorithm(rawValue: "RS256")
    /// RSASSA-PSS with SHA-256, MGF1 SHA-256, 32-byte salt (RFC 7518 §3.5).
    package static let ps256 = JWSAlgorithm(rawValue: "PS256")
    /// EdDSA with Ed25519 (RFC 8037 §3.1): what a DPoP proof may be signed with besides ES256
    /// and RS256.
    package static let edDSA = JWSAlgorithm(rawValue: "EdDSA")
    /// HMAC SHA-256 (RFC 7518 §3.2). Internal use only: never trusted from a published key set.
    package static let hs256 = JWSAlgorithm(rawValue: "HS256")

    /// The algorithms this library implements.
    package static let supported: Set<JWSAlgorithm> = [.es256, .rs256, .ps256, .edDSA, .hs256]
}
