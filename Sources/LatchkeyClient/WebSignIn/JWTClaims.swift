import Foundation
import LatchkeyJSON

/// The claims of a compact JWT, read without checking its signature.
///
/// Only for tokens that the server's token endpoint just answered over the client's own transport
/// (OpenID Connect Core §3.1.3.7 allows TLS server authentication in place of the signature
/// there): the SDK reads its `sid`, `sub`, `nonce`; the server checks signatures.
enum JWTClaims {
    /// The payload of `token` as a JSON object.
    ///
    /// - Returns: `nil` when `token` is not three base64url parts whose middle one is a JSON object.
    static func unverifiedPayload(of token: String) -> [String: JSONValue]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(String(parts[1])),
            let json = try? JSONValue(parsing: Array(bytes))
        else { return nil }
        return json.objectValue
    }
}
