package import FoundationEssentials

/// What one verification context demands of a JWT (docs/security.md S1–S5, RFC 8725).
///
/// Each place that verifies tokens (Apple identity tokens, Apple notifications, our own access
/// tokens) has its own policy, so a token minted for one cannot pass in another.
package struct JWTValidationPolicy: Sendable {
    /// What the header's `typ` must be (RFC 8725 §3.11).
    package enum TypeRequirement: Sendable, Hashable {
        /// `typ` must equal this value (case-insensitive, an `application/` prefix ignored, as
        /// RFC 7515 §4.1.9 allows); e.g. `at+jwt` for our access tokens (RFC 9068 §2.1).
        case exactly(String)
        /// `typ` must be absent or `JWT`. This is what ID tokens carry, and it keeps an
        /// `at+jwt` access token out of a context expecting an ID token (docs/security.md S5).
        case absentOrJWT
        /// `typ` is not checked. Only for inspection tools.
        case any
    }

    /// The required `iss`; `nil` skips the check (only for inspection tools).
    package var issuer: String?
    /// The accepted audiences: `aud` (string or array) must contain one; `nil` skips the check.
    package var audiences: Set<String>?
    /// The algorithm allow-list (S1).
    package var algorithms: Set<JWSAlgorithm>
    /// The slack allowed on `exp`, `nbf` and `iat`, in seconds (S4; 60 by default).
    package var leeway: TimeInterval
    /// Claims that must be present.
    package var requiredClaims: Set<String>
    /// The `typ` rule (S5).
    package var type: TypeRequirement

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - issuer: Required `iss`, or `nil` to skip.
    ///   - audiences: Accepted audiences, or `nil` to skip.
    ///   - algorithms: Allowed algorithms.
    ///   - leeway: Clock slack in seconds.
    ///   - requiredClaims: Claims that must be present; `exp` by default.
    ///   - type: The `typ` rule.
    package init(
        issuer: String?, audiences: Set<String>?, algorithms: Set<JWSAlgorithm>, leeway: TimeInterval = 60,
        requiredClaims: Set<String> = ["exp"], type: TypeRequirement = .absentOrJWT
    ) {
        self.issuer = issuer
        self.audiences = audiences
        self.algorithms = algorithms
        self.leeway = leeway
        self.requiredClaims = requiredClaims
        self.type = type
    }

    /// Checks the header's `typ`.
    func checkType(_ type: String?) throws(JOSEError) {
        func normalized(_ value: String) -> String {
            let lower = value.lowercased()
            return lower.hasPrefix("application/") ? String(lower.dropFirst("application/".count)) : lower
        }
        switch self.type {
        case .any: return
        case .absentOrJWT:
            guard let type else { return }
            guard normalized(type) == "jwt" else { throw JOSEError(.wrongType, "typ \(type.prefix(40)) is not accepted here") }
        case .exactly(let expected):
            guard let type, normalized(type) == normalized(expected) else {
                throw JOSEError(.wrongType, "typ must be \(expected)")
            }
        }
    }

    /// Checks the claims against the policy at time `now`.
    func checkClaims(_ claims: JWTClaims, now: Date) throws(JOSEError) {
        for name in requiredClaims.sorted() where claims[name] == nil {
            throw JOSEError(.missingClaim, "claim \(name) is required")
        }
        if let expiresAt = claims.expiresAt, now.timeIntervalSince(expiresAt) >= leeway {
            throw JOSEError(.expired, "the token expired at \(expiresAt.formatted(.iso8601))")
        }
        if let notBefore = claims.notBefore, notBefore.timeIntervalSince(now) > leeway {
            throw JOSEError(.notYetValid, "the token is not valid before \(notBefore.formatted(.iso8601))")
        }
        if let issuedAt = claims.issuedAt, issuedAt.timeIntervalSince(now) > leeway {
            throw JOSEError(.issuedInFuture, "the token was issued in the future (\(issuedAt.formatted(.iso8601)))")
        }
        if let issuer, claims.issuer != issuer {
            throw JOSEError(.wrongIssuer, "iss must be \(issuer)")
        }
        if let audiences, !claims.audience.contains(where: audiences.contains) {
            throw JOSEError(.wrongAudience, "aud names none of the accepted audiences")
        }
    }
}
