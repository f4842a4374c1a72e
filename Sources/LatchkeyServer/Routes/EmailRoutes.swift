import LatchkeyHTTP
import LatchkeyWire

/// The email flows (docs/reference.md, "Email"): the requests that mail a link and a code, their
/// confirmations, and the page the mailed link opens.
struct EmailRoutes {
    let email: EmailService
    let bearer: BearerAuthenticator
    /// Binds the tokens a sign-in issues to the key of its DPoP proof.
    let binding: DPoPBinding

    func register(on router: Router) {
        let email = email
        // Routes of `signedIn` run behind the bearer check; confirmations need no bearer, since
        // the mail may be opened on another device.
        let signedIn = router.group("/v1", middleware: bearer)
        let anyone = router.group("", context: LatchkeyContext.self)
        let issuing = router.group("", middleware: binding)

        signedIn.post("/email/verification") { request, context in
            let principal = try context.requirePrincipal()
            return Self.started(try await email.requestVerification(principal: principal, locale: Self.locale(request, email), context: context.caller))
        }
        anyone.post("/v1/email/verification/confirm") { request, context in
            let body = try request.wireBody(WireEmailConfirmation.self)
            return Self.user(try await email.confirmVerification(Self.proof(body), context: context.caller))
        }

        anyone.post("/v1/auth/password/reset") { request, context in
            let body = try request.wireBody(WireEmailRequest.self)
            return Self.started(try await email.requestPasswordReset(email: try Self.address(body), locale: Self.locale(request, email), context: context.caller))
        }
        issuing.post("/v1/auth/password/reset/confirm") { request, context in
            let body = try request.wireBody(WireEmailConfirmation.self)
            guard let password = body.password else { throw HTTPError.invalidRequest("password is required") }
            return try await email.confirmPasswordReset(Self.proof(body), password: password, context: context.caller).response()
        }

        anyone.post("/v1/auth/email/start") { request, context in
            let body = try request.wireBody(WireEmailRequest.self)
            return Self.started(
                try await email.requestSignIn(
                    email: try Self.address(body), create: body.create ?? false, locale: Self.locale(request, email), context: context.caller))
        }
        issuing.post("/v1/auth/email/verify") { request, context in
            let body = try request.wireBody(WireEmailConfirmation.self)
            let tokens = try await email.confirmSignIn(Self.proof(body), context: context.caller)
            return tokens.response(status: tokens.created ? 201 : 200)
        }

        signedIn.post("/me/email") { request, context in
            let principal = try context.requirePrincipal()
            let body = try request.wireBody(WireEmailRequest.self)
            return Self.started(
                try await email.requestChange(principal: principal, email: try Self.address(body), locale: Self.locale(request, email), context: context.caller))
        }
        anyone.post("/v1/me/email/confirm") { request, context in
            let body = try request.wireBody(WireEmailConfirmation.self)
            return Self.user(try await email.confirmChange(Self.proof(body), locale: Self.locale(request, email), context: context.caller))
        }

        // The mailed link: GET shows a button and consumes nothing; the button's POST confirms.
        anyone.get("/email/{purpose}") { request, _ in
            let purpose = try Self.purpose(request)
            guard purpose != .signIn, let token = request.query["token"], !token.isEmpty, token.utf8.count <= 128 else {
                // A sign-in link finishes in the app (a universal link sends its token to
                // /v1/auth/email/verify); in a browser there is nothing to sign in to.
                return .page(EmailLinkPage(purpose: purpose, state: purpose == .signIn ? .done : .failed("The link is incomplete.")).render())
            }
            return .page(EmailLinkPage(purpose: purpose, state: .ask(token: token, error: nil)).render())
        }
        anyone.post("/email/{purpose}") { request, context in
            let purpose = try Self.purpose(request)
            let form = try request.formBody()
            guard purpose != .signIn, let token = form["token"], !token.isEmpty, token.utf8.count <= 128 else {
                return .page(EmailLinkPage(purpose: purpose, state: .failed("The link is incomplete.")).render(), status: 400)
            }
            do {
                switch purpose {
                case .verify: _ = try await email.confirmVerification(.token(token), context: context.caller)
                case .change: _ = try await email.confirmChange(.token(token), locale: Self.locale(request, email), context: context.caller)
                case .reset: try await email.resetPassword(.token(token), password: form["password"] ?? "", context: context.caller)
                case .signIn: break
                }
                return .page(EmailLinkPage(purpose: purpose, state: .done).render())
            } catch let error as AuthError where error.code == .invalidRequest {
                // A refused password: the same page again, saying why, with the flow untouched.
                return .page(EmailLinkPage(purpose: purpose, state: .ask(token: token, error: error.message)).render(), status: 400)
            } catch let error as AuthError where error.code == .invalidGrant || error.code == .conflict {
                return .page(EmailLinkPage(purpose: purpose, state: .failed(error.message)).render(), status: 400)
            }
        }
    }

    /// The locale of the mail a request sends: from its `Accept-Language`, every field of it.
    static func locale(_ request: HTTPRequest, _ email: EmailService) -> MailLocale {
        let fields = request.headers.values("Accept-Language")
        return email.locale(accepting: fields.isEmpty ? nil : fields.joined(separator: ","))
    }

    static func started(_ started: EmailService.Started) -> HTTPResponse {
        .json(WireEmailFlowStarted(flowID: started.flowID, expiresIn: started.expiresIn).json, status: 202)
    }

    static func user(_ user: User) -> HTTPResponse {
        .json(WireAccountUpdateResponse(user: WireUser(user)).json)
    }

    static func address(_ body: WireEmailRequest) throws -> String {
        try BodyMember.text(body.email, "email", maxLength: 1024)
    }

    static func proof(_ body: WireEmailConfirmation) throws -> EmailProof {
        switch body.proof {
        case .token(let token): .token(try BodyMember.text(token, "token", maxLength: 128))
        case .code(let flowID, let code): .code(flowID: try BodyMember.text(flowID, "flow_id", maxLength: 128), code: try BodyMember.text(code, "code", maxLength: 16))
        }
    }

    static func purpose(_ request: HTTPRequest) throws -> EmailPurpose {
        guard let purpose = request.pathParameters["purpose"].flatMap(EmailPurpose.init) else { throw HTTPError.notFound() }
        return purpose
    }
}
