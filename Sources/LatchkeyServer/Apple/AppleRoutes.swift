import Foundation
import LatchkeyHTTP
import LatchkeyJOSE

/// `POST /v1/auth/apple`, `POST /v1/apple/notifications` and `DELETE /v1/me`.
struct AppleRoutes {
    let apple: AppleService
    let bearer: BearerAuthenticator

    func register(on router: Router) {
        let apple = apple
        let bearer = bearer

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

        router.delete("/v1/me") { request in
            let principal = try await bearer.authenticate(request)
            try await apple.deleteAccount(userID: principal.userID, reason: "user", context: RequestContext(request))
            return .empty()
        }
    }
}

extension AppleService {
    /// Deletes an account and queues its Apple tokens for revocation, then sends the queue.
    ///
    /// - Throws: 404 when there is no such user.
    func deleteAccount(userID: String, reason: String, context: RequestContext) async throws {
        let now = clock()
        let deletion = AccountDeletion(sessions: sessions, masterKey: masterKey, outbox: outbox)
        let existed = try await database.write { connection in
            try deletion.delete(userID: userID, reason: reason, revokeAtApple: true, context: context, now: now, on: connection)
        }
        guard existed else { throw HTTPError.notFound("no such user") }
        // The revocation is durable now; sending it does not hold up the answer.
        Task { [outbox] in _ = try? await outbox.runDue() }
    }
}
