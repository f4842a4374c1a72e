import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON

/// What a verified Apple identity token says about the user (docs/reference.md "Identity token checks").
struct AppleIdentityToken: Sendable {
    /// The user's stable id at our team; accounts are keyed on (issuer, subject).
    var subject: String
    /// The client id (`aud`) it was issued to.
    var clientID: String
    var email: String?
    var emailVerified: Bool
    var isPrivateEmail: Bool
    /// 0 unsupported, 1 unknown, 2 likely real: a hint only.
    var realUserStatus: Int?
    /// The user's id at the sending team during a team transfer.
    var transferSubject: String?
    var expiresAt: Date
    /// What makes this token single use: SHA-256 of its nonce, or of the whole token without one.
    var replayKey: [UInt8]

    /// The failure of one check, `invalid_identity_token` with the check named first in the
    /// message, e.g. `exp: the token expired at …`.
    static func failure(_ check: String, _ reason: String) -> AuthError {
        AuthError(.invalidIdentityToken, "\(check): \(reason)")
    }

    /// The check a JOSE failure belongs to.
    static func check(for error: JOSEError) -> String {
        switch error.code {
        case .algorithmNotAllowed, .unsupportedAlgorithm: "alg"
        case .unknownKey, .invalidKey: "kid"
        case .invalidSignature: "signature"
        case .wrongType: "typ"
        case .expired: "exp"
        case .notYetValid: "nbf"
        case .issuedInFuture: "iat"
        case .wrongIssuer: "iss"
        case .wrongAudience: "aud"
        case .missingClaim: "claims"
        case .unsupportedHeader: "header"
        default: "malformed"
        }
    }

    /// The policy identity tokens are held to: RS256 only (S1), Apple's issuer, one of our client
    /// ids, `exp` and `iat` within 60 s of our clock (S4), no `at+jwt` (S5).
    ///
    /// - Parameter audiences: The accepted `aud` values; `client_ids` when `nil`.
    static func policy(_ settings: AppleSettings, audiences: Set<String>? = nil) -> JWTValidationPolicy {
        JWTValidationPolicy(
            issuer: settings.issuer, audiences: audiences ?? settings.clientIDs, algorithms: [.rs256], requiredClaims: ["iss", "aud", "exp", "iat", "sub"])
    }

    /// Verifies an identity token and its nonce.
    ///
    /// - Parameters:
    ///   - token: The compact JWS the app received.
    ///   - rawNonce: The raw nonce the app sent; the token's `nonce` must be its SHA-256 in hex.
    ///   - audiences: The accepted `aud` values: `client_ids` when `nil`, the Services ID alone
    ///     for web sign-in.
    /// - Throws: ``AuthError`` `invalid_identity_token` naming the failed check; `apple_unavailable`
    ///   when Apple's keys cannot be fetched.
    static func verify(
        _ token: String, rawNonce: String?, audiences: Set<String>? = nil, keys: RemoteKeySet, settings: AppleSettings
    ) async throws -> AppleIdentityToken {
        let accepted = audiences ?? settings.clientIDs
        let claims: JWTClaims
        do {
            claims = try await keys.verify(token, policy: policy(settings, audiences: accepted)).claims
        } catch let error as JOSEError {
            throw failure(check(for: error), error.message)
        } catch let error as RemoteKeySetUnavailable {
            throw AppleError.unavailable(error.message).authError
        }
        guard let subject = claims.subject, !subject.isEmpty else { throw failure("sub", "the token has no subject") }
        let nonce = claims["nonce"]?.stringValue
        try checkNonce(nonce, rawNonce: rawNonce, supported: flag(claims["nonce_supported"]), required: settings.nonceRequired)
        var replayKey = HashFunction.sha256.hash(Array(token.utf8))
        if let nonce { replayKey = HashFunction.sha256.hash(Array(("nonce:" + nonce).utf8)) }
        return AppleIdentityToken(
            subject: subject, clientID: claims.audience.first { accepted.contains($0) } ?? "",
            email: claims["email"]?.stringValue, emailVerified: flag(claims["email_verified"]) ?? false,
            isPrivateEmail: flag(claims["is_private_email"]) ?? false, realUserStatus: claims["real_user_status"]?.numberValue.map { Int($0) },
            transferSubject: claims["transfer_sub"]?.stringValue, expiresAt: claims.expiresAt ?? Date(), replayKey: replayKey)
    }

    /// The nonce policy: the app hashes a raw nonce into its request and sends us the raw one.
    private static func checkNonce(_ nonce: String?, rawNonce: String?, supported: Bool?, required: Bool) throws {
        guard let nonce else {
            if rawNonce != nil { throw failure("nonce", "a nonce was sent but the token carries none") }
            if required { throw failure("nonce", "the token carries no nonce and this server requires one") }
            if supported == true { throw failure("nonce", "the token says nonces are supported but carries none") }
            return
        }
        guard let rawNonce else { throw failure("nonce", "the token carries a nonce; send the raw nonce with it") }
        let expected = HashFunction.sha256.hexDigest(Array(rawNonce.utf8))
        guard ConstantTime.equals(Array(expected.utf8), Array(nonce.lowercased().utf8)) else {
            throw failure("nonce", "SHA-256 of the raw nonce does not match the token's nonce")
        }
    }

    /// Apple sends some flags as JSON booleans and some as the strings "true" and "false".
    static func flag(_ value: JSONValue?) -> Bool? {
        switch value {
        case .bool(let flag)?: flag
        case .string("true")?: true
        case .string("false")?: false
        default: nil
        }
    }
}
