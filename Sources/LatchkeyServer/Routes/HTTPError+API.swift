import LatchkeyHTTP
import LatchkeyJSON

/// The errors of docs/reference.md's table that `LatchkeyHTTP.HTTPError` does not already have.
extension HTTPError {
    /// Why a grant failed, in the `reason` field of `invalid_grant` (docs/reference.md).
    struct GrantFailure: RawRepresentable, Sendable, Hashable {
        var rawValue: String
        static let reused = GrantFailure(rawValue: "reused")
        static let expired = GrantFailure(rawValue: "expired")
        static let revoked = GrantFailure(rawValue: "revoked")
        static let unknown = GrantFailure(rawValue: "unknown")
    }

    static func invalidGrant(_ reason: GrantFailure, _ description: String) -> HTTPError {
        HTTPError(status: 400, code: "invalid_grant", description: description, extraFields: ["reason": .string(reason.rawValue)])
    }

    /// 401 with `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750 §3).
    static func invalidToken(_ description: String) -> HTTPError {
        HTTPError(status: 401, code: "invalid_token", description: description, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
    }
}
