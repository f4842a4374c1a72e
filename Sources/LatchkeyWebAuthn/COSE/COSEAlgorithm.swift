/// A COSE algorithm identifier (IANA "COSE Algorithms"), as WebAuthn's `pubKeyCredParams`
/// and COSE keys' `alg` carry it.
package struct COSEAlgorithm: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    package let rawValue: Int64
    package init(rawValue: Int64) { self.rawValue = rawValue }

    /// ECDSA with SHA-256 on P-256 (RFC 9053 §2.1); WebAuthn signatures are ASN.1 DER.
    package static let es256 = COSEAlgorithm(rawValue: -7)
    /// EdDSA (RFC 9053 §2.2); WebAuthn accepts Ed25519 only.
    package static let edDSA = COSEAlgorithm(rawValue: -8)
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8812 §2).
    package static let rs256 = COSEAlgorithm(rawValue: -257)

    /// The algorithms this verifier implements, in the order the server offers them.
    package static let supported: [COSEAlgorithm] = [.es256, .edDSA, .rs256]

    /// The name, e.g. "ES256", or the number for an unknown algorithm.
    package var description: String {
        switch self {
        case .es256: "ES256"
        case .edDSA: "EdDSA"
        case .rs256: "RS256"
        default: String(rawValue)
        }
    }
}
