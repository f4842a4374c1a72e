import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJSON

/// The errors of docs/reference.md's table that second factors answer with.
extension HTTPError {
    /// 403 `mfa_required`: the first factor was right; `mfa_token` and `factors` say how to go on.
    static func mfaRequired(token: String, factors: [JSONValue]) -> HTTPError {
        HTTPError(
            status: 403, code: "mfa_required", description: "this account needs a second factor; complete it at /v1/mfa/verify",
            extraFields: ["mfa_token": .string(token), "factors": .array(factors)])
    }

    /// 403 `insufficient_authentication`: the action needs a second factor in the last five minutes.
    static func insufficientAuthentication() -> HTTPError {
        HTTPError(
            status: 403, code: "insufficient_authentication",
            description: "this needs a second factor in the last five minutes; verify a device key challenge (step_up) or sign in again")
    }
}

extension HTTPError.GrantFailure {
    /// A device signature did not verify.
    static let invalidSignature = HTTPError.GrantFailure(rawValue: "invalid_signature")
    /// A TOTP or recovery code was wrong or already used.
    static let invalidCode = HTTPError.GrantFailure(rawValue: "invalid_code")
}

