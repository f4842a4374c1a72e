import LatchkeyWire

/// Reading a test server's answer through the wire models the endpoints document, as an app
/// built on `LatchkeyWire` reads it: a member that is missing or mistyped fails the decode.
extension TestResponse {
    /// The body as the wire model `type`.
    ///
    /// - Throws: ``WireDecodingError`` when the body is not JSON or lacks what `type` requires.
    func decode<Model: WireDecodable>(_ type: Model.Type) throws -> Model {
        try Model(parsing: body)
    }

    /// The body of a sign-in, MFA completion, refresh or step-up.
    var tokens: WireTokenResponse {
        get throws { try WireTokenResponse(parsing: body) }
    }

    /// The body of a refusal: `{error, error_description, reason?, retry_after?, mfa_token?, ...}`.
    var wireError: WireErrorBody {
        get throws { try WireErrorBody(parsing: body) }
    }

    /// `Authorization: Bearer` with the access token of this token response.
    var bearer: [String: String] {
        get throws { ["Authorization": "Bearer \(try tokens.accessToken)"] }
    }
}
