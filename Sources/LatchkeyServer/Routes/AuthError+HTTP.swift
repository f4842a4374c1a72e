package import LatchkeyHTTP
package import LatchkeyJSON
import LatchkeyWire

/// The one place where the domain's refusals become HTTP: status, wire code, body members and
/// headers (docs/reference.md, "Errors"). A code without a row here is a defect and answers 500.
extension AuthError: HTTPResponseError {
    package var status: Int {
        switch code {
        case .invalidRequest, .invalidGrant, .unsupportedGrantType, .unauthorizedClient, .invalidScope: 400
        case .authorizationPending, .slowDown, .accessDenied, .expiredToken: 400
        // At a token endpoint; on a resource ``DPoPChallenge`` answers them 401 (RFC 9449 §7.1).
        case .invalidDPoPProof, .useDPoPNonce: 400
        case .invalidToken, .invalidCredentials, .invalidIdentityToken, .invalidClient, .appCheckFailed: 401
        case .secondFactorRequired, .insufficientAuthentication, .insufficientScope, .accountDisabled, .forbidden: 403
        case .notFound: 404
        case .conflict: 409
        case .rateLimited: 429
        case .overloaded, .unavailable, .appleUnavailable: 503
        default: 500
        }
    }

    package var errorCode: String { status == 500 ? WireErrorCode.serverError.rawValue : wireBody.error.rawValue }

    package var errorDescription: String {
        switch code {
        case _ where status == 500: "internal error"
        // The domain does not know its routes; the answer says where the sign-in goes on.
        case .secondFactorRequired: message + "; complete it at /v1/mfa/verify"
        default: message
        }
    }

    package var extraFields: [String: JSONValue] {
        guard status != 500, case .object(var members) = wireBody.json else { return [:] }
        members["error"] = nil
        members["error_description"] = nil
        return members
    }

    package var extraHeaders: HTTPHeaders {
        var headers = HTTPHeaders()
        if code == .invalidToken { headers.set("WWW-Authenticate", #"Bearer error="invalid_token""#) }
        if code == .insufficientScope { headers.set("WWW-Authenticate", #"Bearer error="insufficient_scope", scope="openid""#) }
        // Every 503 says when to come back (S28), as the store's own 503s do: a refusal that
        // names no time of its own gets the storage failure's.
        if status == 503 { headers.set("Retry-After", String(retryAfter ?? StoreErrorMiddleware.storageRetryAfter)) }
        if let retryAfter, status == 429 { headers.set("Retry-After", String(retryAfter)) }
        if let dpopNonce { headers.set("DPoP-Nonce", dpopNonce) }
        return headers
    }

    /// The error body, typed.
    var wireBody: WireErrorBody {
        WireErrorBody(
            error: WireErrorCode(rawValue: code.rawValue), errorDescription: errorDescription, reason: reason?.rawValue,
            retryAfter: code == .rateLimited ? retryAfter : nil, mfaToken: secondFactor?.token,
            factors: secondFactor?.factors.map(WireFactor.init))
    }
}

extension WireFactor {
    init(_ option: SecondFactorOption) {
        switch option {
        case .deviceKey(let id, let label): self.init(type: .deviceKey, id: id, label: label)
        case .totp: self.init(type: .totp)
        case .recoveryCode: self.init(type: .recoveryCode)
        case .passkey: self.init(type: .passkey)
        }
    }
}
