import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyWire

/// `POST /v1/auth/apple` and `POST /v1/apple/notifications`.
struct AppleRoutes {
    let apple: AppleService

    func register(on router: Router) {
        let apple = apple

        router.post("/v1/auth/apple") { request in
            let body = try Self.decode(WireAppleSignInRequest.self, request)
            let code = try Self.checked(body.authorizationCode, "authorization_code", maxLength: 1024)
            // Apple's codes are printable ASCII. Anything else would reach Apple's token endpoint
            // and come back as its invalid_request, which reads as our misconfiguration (503).
            if let code, !code.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
                throw HTTPError.invalidRequest("authorization_code must be printable ASCII without spaces")
            }
            let signIn = AppleService.SignInRequest(
                identityToken: try Self.checked(body.identityToken, "identity_token", maxLength: JWS.maxCompactLength),
                authorizationCode: code,
                nonce: try Self.checked(body.nonce, "nonce", maxLength: 512),
                givenName: try Self.checked(body.givenName, "given_name", maxLength: User.maxNameLength),
                familyName: try Self.checked(body.familyName, "family_name", maxLength: User.maxNameLength))
            return try await apple.signIn(signIn, context: RequestContext(request)).response()
        }

        router.post("/v1/apple/notifications") { request in
            let body = try Self.decode(WireAppleNotification.self, request)
            let payload = try Self.checked(body.payload, "payload", maxLength: JWS.maxCompactLength)
            try await apple.handleNotification(payload, context: RequestContext(request))
            return .empty(status: 200)
        }
    }

    /// The JSON body read as `Model`; a member missing or mistyped is `invalid_request` naming it.
    private static func decode<Model: WireDecodable>(_ type: Model.Type, _ request: HTTPRequest) throws -> Model {
        let json = try request.jsonBody()
        do {
            return try Model(json: json)
        } catch {
            throw HTTPError.invalidRequest(error.description)
        }
    }

    /// A string member that must not be empty nor longer than `maxLength` bytes.
    private static func checked(_ value: String, _ name: String, maxLength: Int) throws -> String {
        guard !value.isEmpty, value.utf8.count <= maxLength else {
            throw HTTPError.invalidRequest("\(name) must be a non-empty string of at most \(maxLength) bytes")
        }
        return value
    }

    private static func checked(_ value: String?, _ name: String, maxLength: Int) throws -> String? {
        try value.map { try checked($0, name, maxLength: maxLength) }
    }
}
