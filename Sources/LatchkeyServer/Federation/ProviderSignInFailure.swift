import LatchkeyErrors

/// Why a sign-in through an upstream provider stopped: each check of the callback has its own
/// code, which is the audited `reason` (docs/reference.md "Upstream providers").
struct ProviderSignInFailure: CodedError {
    struct Code: ErrorCode {
        let rawValue: String
        init(rawValue: String) { self.rawValue = rawValue }

        /// The `state` is not one this server made.
        static let stateUnknown = Code(rawValue: "state_unknown")
        /// The `state` was made for another browser (its binding cookie is missing or another).
        static let stateOtherBrowser = Code(rawValue: "state_other_browser")
        /// The sign-in took longer than ten minutes.
        static let stateExpired = Code(rawValue: "state_expired")
        /// The `state` came back a second time.
        static let stateReplayed = Code(rawValue: "state_replayed")
        /// The upstream answered with `error=` (the user declined, …): the same error goes to the app.
        static let upstreamError = Code(rawValue: "upstream_error")
        /// The RFC 9207 `iss` parameter is missing or names another issuer (a mix-up).
        static let issMismatch = Code(rawValue: "iss_mismatch")
        /// The upstream refused the code exchange.
        static let exchangeFailed = Code(rawValue: "exchange_failed")
        /// The upstream could not be reached, timed out or answered 5xx: try again.
        static let upstreamUnavailable = Code(rawValue: "upstream_unavailable")
        static let idTokenMissing = Code(rawValue: "id_token_missing")
        static let idTokenMalformed = Code(rawValue: "id_token_malformed")
        static let idTokenAlg = Code(rawValue: "id_token_alg")
        static let idTokenUnknownKey = Code(rawValue: "id_token_unknown_key")
        static let idTokenSignature = Code(rawValue: "id_token_signature")
        static let idTokenIss = Code(rawValue: "id_token_iss")
        static let idTokenAud = Code(rawValue: "id_token_aud")
        static let idTokenAzp = Code(rawValue: "id_token_azp")
        static let idTokenExpired = Code(rawValue: "id_token_expired")
        static let idTokenNonce = Code(rawValue: "id_token_nonce")
        /// Userinfo or GitHub's API did not say who signed in.
        static let userinfoFailed = Code(rawValue: "userinfo_failed")
        /// The upstream identity belongs to another account than the one being linked to.
        static let identityTaken = Code(rawValue: "identity_taken")
    }

    var code: Code
    /// Safe to log: names the check and the upstream, never a token, code or secret.
    var message: String
    /// The upstream's own `error` code, for ``Code/upstreamError``.
    var upstreamError: String?

    init(_ code: Code, _ message: String, upstreamError: String? = nil) {
        self.code = code
        self.message = message
        self.upstreamError = upstreamError
    }
}
