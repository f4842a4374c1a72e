/// JWK Set members Latchkey must skip rather than let them take the whole set down (docs/security.md
/// S30), as JSON text: the JOSE, CLI and server tests put them next to a good key.
///
/// Public halves of real keys, made with OpenSSL 3.0: `openssl genrsa 1024` and
/// `openssl ecparam -name secp521r1 -genkey`; `n`, `x` and `y` read from `openssl … -text`.
package enum UnusableJWKs {
    /// A 1024-bit RSA key for RS256: below RFC 7518 §3.3's 2048 bits.
    package static let weakRSA = """
        {"kty":"RSA","kid":"kid-weak-rsa-1024","alg":"RS256","use":"sig","e":"AQAB",\
        "n":"092mYcU_uKrdkyPXSVwDTW14dEm5xgdZt2K86pRHlXwBLtjbdoONLotewbWrOr_-RZtASSMPddHg42RsqaBVKHGNPQjBMVnwqUQxXqXs-l37BlvtWvpsq2aN9Z4drYKEzNZtQE94LvX5d6qGnxm6PcBp9dfVaXZPIuKkhylpYWk"}
        """

    /// A P-521 key for ES512: a curve Latchkey does not implement.
    package static let p521 = """
        {"kty":"EC","kid":"kid-p521","alg":"ES512","use":"sig","crv":"P-521",\
        "x":"AHO5xH-N4nlTzEHugZvzOFwsxRWjrbH3_zmo--QJjkDK9iNnn4s2-1RKf8TTKH6VlAhUfiCJkCEuxBlUyIg8VzPH",\
        "y":"AMnWH17hp6Za3cbKss2C6YHZWHW--mPRctV7tn-nfnYZ8vNvrDIFmqoB0ldFhUpZ0y4NyY-6DbDM17vCEA1js1MS"}
        """

    /// An RSA member whose modulus is not base64url.
    package static let malformed = #"{"kty":"RSA","kid":"kid-malformed","alg":"RS256","use":"sig","n":"not base64url!","e":"AQAB"}"#

    /// The three above, with the `reason` label each must be skipped under.
    package static let all: [(json: String, keyID: String, reason: String)] = [
        (weakRSA, "kid-weak-rsa-1024", "weak_key"), (p521, "kid-p521", "unsupported_curve"), (malformed, "kid-malformed", "malformed"),
    ]

    /// A JWK Set document listing `members` (JSON object texts) in order.
    package static func document(_ members: [String]) -> String {
        #"{"keys":["# + members.joined(separator: ",") + "]}"
    }
}
