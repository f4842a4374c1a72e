import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyWire

/// `POST /v1/auth/apple` and `POST /v1/apple/notifications`.
struct AppleRoutes {
    let apple: AppleService
    /// Binds the tokens a sign-in issues to the key of its DPoP proof.
    let binding: DPoPBinding

    func register(on router: Router) {
        let apple = apple
        let anyone = router.group("", context: LatchkeyContext.self)
        let issuing = router.group("", middleware: binding)

        issuing.post("/v1/auth/apple") { request, context in
            let body = try request.wireBody(WireAppleSignInRequest.self)
            let code = try BodyMember.text(body.authorizationCode, "authorization_code", maxLength: 1024)
            // Apple's codes are printable ASCII. Anything else would reach Apple's token endpoint
            // and come back as its invalid_request, which reads as our misconfiguration (503).
            if let code, !code.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
                throw HTTPError.invalidRequest("authorization_code must be printable ASCII without spaces")
            }
            let signIn = AppleService.SignInRequest(
                identityToken: try BodyMember.text(body.identityToken, "identity_token", maxLength: JWS.maxCompactLength),
                authorizationCode: code,
                nonce: try BodyMember.text(body.nonce, "nonce", maxLength: 512),
                givenName: try BodyMember.text(body.givenName, "given_name", maxLength: User.maxNameLength),
                familyName: try BodyMember.text(body.familyName, "family_name", maxLength: User.maxNameLength))
            return try await apple.signIn(signIn, context: context.caller).response()
        }

        anyone.post("/v1/apple/notifications") { request, context in
            let body = try request.wireBody(WireAppleNotification.self)
            let payload = try BodyMember.text(body.payload, "payload", maxLength: JWS.maxCompactLength)
            try await apple.handleNotification(payload, context: context.caller)
            return .empty(status: 200)
        }
    }
}
