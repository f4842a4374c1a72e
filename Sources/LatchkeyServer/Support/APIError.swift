import LatchkeyHTTP
import LatchkeyJOSE

/// The errors of API.md's table, with their statuses, codes and extra fields.
struct APIError: HTTPResponseError, Sendable {
    var status: Int
    var errorCode: String
    var errorDescription: String
    var extraFields: [String: JSONValue] = [:]
    var extraHeaders = HTTPHeaders()

    /// Why a grant failed, in the `reason` field of `invalid_grant` (API.md).
    struct GrantFailure: RawRepresentable, Sendable, Hashable {
        var rawValue: String
        static let reused = GrantFailure(rawValue: "reused")
        static let expired = GrantFailure(rawValue: "expired")
        static let revoked = GrantFailure(rawValue: "revoked")
        static let unknown = GrantFailure(rawValue: "unknown")
    }

    static func invalidGrant(_ reason: GrantFailure, _ description: String) -> APIError {
        APIError(status: 400, errorCode: "invalid_grant", errorDescription: description, extraFields: ["reason": .string(reason.rawValue)])
    }

    /// 401 with `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750 §3).
    static func invalidToken(_ description: String) -> APIError {
        APIError(status: 401, errorCode: "invalid_token", errorDescription: description, extraHeaders: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
    }

    static func invalidRequest(_ description: String) -> APIError {
        APIError(status: 400, errorCode: "invalid_request", errorDescription: description)
    }

    static func notFound(_ description: String = "not found") -> APIError {
        APIError(status: 404, errorCode: "not_found", errorDescription: description)
    }
}
