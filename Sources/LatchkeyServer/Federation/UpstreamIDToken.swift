import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON

/// The ID-token checks of an OpenID upstream (S37), each failure with its own reason:
/// the signature by a key of the discovery document's `jwks_uri`, `alg` from the provider's
/// allow-list (never `none` or an HMAC), `iss` exactly the issuer, `aud` containing our client
/// id, `azp` (if present, or if there are several audiences) our client id, `exp`/`iat` within
/// 60 s of our clock, and `nonce` equal to the one this sign-in sent.
enum UpstreamIDToken {
    static func verify(
        _ token: String, provider: UpstreamProvider, issuer: String, nonce: String
    ) async throws(ProviderSignInFailure) -> UpstreamProfile {
        guard let keys = provider.keys else { throw ProviderSignInFailure(.idTokenMissing, "the provider signs no ID tokens") }
        let clientID = provider.settings.clientID
        let policy = JWTValidationPolicy(
            issuer: issuer, audiences: [clientID], algorithms: provider.algorithms, requiredClaims: ["iss", "aud", "exp", "iat", "sub"])
        let claims: JWTClaims
        do {
            claims = try await keys.verify(token, policy: policy).claims
        } catch let error as JOSEError {
            throw ProviderSignInFailure(reason(for: error), "the ID token failed: \(error.message)")
        } catch {
            throw ProviderSignInFailure(.upstreamUnavailable, "the provider's keys cannot be had: \((error as? RemoteKeySetUnavailable)?.message ?? "\(error)")")
        }
        if let azp = claims["azp"]?.stringValue ?? (claims.audience.count > 1 ? "" : nil), azp != clientID {
            throw ProviderSignInFailure(.idTokenAzp, "the ID token's azp is not this server's client id")
        }
        guard let presented = claims["nonce"]?.stringValue, ConstantTime.equals(Array(presented.utf8), Array(nonce.utf8)) else {
            throw ProviderSignInFailure(.idTokenNonce, "the ID token's nonce is not the one this sign-in sent")
        }
        guard let subject = claims.subject, !subject.isEmpty, subject.utf8.count <= UpstreamProfile.maxSubjectBytes else {
            throw ProviderSignInFailure(.idTokenMalformed, "the ID token's sub is empty or too long")
        }
        var profile = UpstreamProfile(
            issuer: issuer, subject: subject, email: UpstreamProfile.email(claims["email"]), emailVerified: UpstreamProfile.flag(claims["email_verified"]))
        profile.takeNames(given: claims["given_name"], family: claims["family_name"], full: claims["name"])
        return profile
    }

    static func reason(for error: JOSEError) -> ProviderSignInFailure.Code {
        switch error.code {
        case .algorithmNotAllowed, .unsupportedAlgorithm: .idTokenAlg
        case .unknownKey, .invalidKey: .idTokenUnknownKey
        case .invalidSignature: .idTokenSignature
        case .expired, .notYetValid, .issuedInFuture: .idTokenExpired
        case .wrongIssuer: .idTokenIss
        case .wrongAudience: .idTokenAud
        default: .idTokenMalformed
        }
    }
}
