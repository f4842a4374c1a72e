import Foundation
import LatchkeyHTTP
import LatchkeyJOSE

/// `POST /v1/auth/apple` and `POST /v1/apple/notifications`.
struct AppleRoutes {
    let apple: AppleService

    func register(on router: Router) {
        let apple = apple

        router.post("/v1/auth/apple") { request in
            let body = try JSONFields(request)
            let signIn = AppleService.SignInRequest(
                identityToken: try body.string("identity_token", maxLength: JWS.maxCompactLength)!,
                authorizationCode: try body.string("authorization_code", required: false, maxLength: 1024),
                nonce: try body.string("nonce", required: false, maxLength: 512),
                givenName: try body.string("given_name", required: false, maxLength: 200),
                familyName: try body.string("family_name", required: false, maxLength: 200))
            return try await apple.signIn(signIn, context: RequestContext(request)).response()
        }

        router.post("/v1/apple/notifications") { request in
            let body = try JSONFields(request)
            try await apple.handleNotification(try body.string("payload", maxLength: JWS.maxCompactLength)!, context: RequestContext(request))
            return .empty(status: 200)
        }
    }
}
