import FoundationEssentials
import LatchkeyBasics
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON

/// Who signed in at an upstream, as its checked answer says.
struct UpstreamProfile: Sendable, Hashable {
    /// What the identity is stored under beside the subject: the OpenID issuer, or GitHub's API URL.
    var issuer: String
    /// The stable id: the `sub` claim, or GitHub's numeric `id` (never the login, which can be renamed).
    var subject: String
    var email: String?
    /// Whether the upstream says the email is the user's: `email_verified` true, or GitHub's
    /// verified primary address.
    var emailVerified: Bool
    var givenName: String? = nil
    var familyName: String? = nil

    /// The longest email and name part kept.
    static let maxEmailBytes = 320
    static let maxNameLength = 100
    static let maxSubjectBytes = 255

    /// A name part as kept: trimmed, non-empty, not too long.
    static func name(_ value: JSONValue?) -> String? {
        guard let raw = value?.stringValue else { return nil }
        let text = String(raw.trimmingWhitespace())
        guard !text.isEmpty, text.count <= maxNameLength, !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        return text
    }

    /// An email as kept: one `@`, no spaces or controls, not too long.
    static func email(_ value: JSONValue?) -> String? {
        guard let text = value?.stringValue, !text.isEmpty, text.utf8.count <= maxEmailBytes, text.filter({ $0 == "@" }).count == 1,
            !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F })
        else { return nil }
        return text
    }

    /// Takes the names an upstream gives: `given_name` and `family_name`, or else `name` split at
    /// its first space (GitHub, and providers that send only `name`). Names already taken stay.
    mutating func takeNames(given: JSONValue?, family: JSONValue?, full: JSONValue?) {
        guard givenName == nil, familyName == nil else { return }
        givenName = Self.name(given)
        familyName = Self.name(family)
        if givenName == nil, familyName == nil, let full = full?.stringValue {
            let parts = full.split(separator: " ", maxSplits: 1).map { JSONValue.string(String($0)) }
            givenName = Self.name(parts.first)
            familyName = Self.name(parts.dropFirst().first)
        }
    }

    /// Email flags arrive as JSON booleans, and from some providers as the strings "true" and "false".
    static func flag(_ value: JSONValue?) -> Bool {
        switch value {
        case .bool(let flag)?: flag
        case .string("true")?: true
        default: false
        }
    }
}

/// The ID-token checks of an OpenID upstream (S37), each failure with its own reason:
/// the signature by a key of the discovery document's `jwks_uri`, `alg` from the provider's
/// allow-list (never `none` or an HMAC), `iss` exactly the issuer, `aud` containing our client
/// id, `azp` (if present, or if there are several audiences) our client id, `exp`/`iat` within
/// 60 s of our clock, and `nonce` equal to the one this sign-in sent.
enum UpstreamIDToken {
    static func verify(
        _ token: String, provider: UpstreamProvider, issuer: String, nonce: String
    ) async throws(ProviderSignInFailure) -> (claims: JWTClaims, profile: UpstreamProfile) {
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
        return (claims, profile)
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
