import FoundationEssentials
import LatchkeyBasics
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyWire

/// `/v1/passkeys`: registration for a signed-in account, list, rename, delete; `/v1/auth/passkey`:
/// sign-in and sign-up; `/v1/mfa/passkey/options`: the second factor (docs/reference.md
/// "Passkeys"). A passkey second factor is completed at `/v1/mfa/verify` (``FactorRoutes``).
struct PasskeyRoutes {
    let passkeys: PasskeyService
    let bearer: BearerAuthenticator
    /// Binds the tokens a sign-in issues to the key of its DPoP proof.
    let binding: DPoPBinding

    func register(on router: Router) {
        let passkeys = passkeys
        let signedIn = router.group("/v1", middleware: bearer)
        let anyone = router.group("", context: LatchkeyContext.self)
        let issuing = router.group("", middleware: binding)

        signedIn.post("/passkeys/registration/options") { request, context in
            let principal = try context.requirePrincipal()
            let body = try request.wireBody(WirePasskeyOptionsRequest.self)
            guard body.mediation == nil || body.mediation == "conditional" else { throw HTTPError.invalidRequest("mediation must be conditional or absent") }
            return Self.options(try await passkeys.registrationOptions(for: principal, conditional: body.mediation == "conditional"))
        }

        signedIn.post("/passkeys") { request, context in
            let principal = try context.requirePrincipal()
            let body = try request.wireBody(WirePasskeyRegistration.self)
            let flowID = try BodyMember.text(body.flowID, "flow_id", maxLength: PasskeyCeremony.maxFlowIDLength)
            let name = try Self.name(body.name)
            let passkey = try await passkeys.register(
                for: principal, flowID: flowID, credential: body.credential, name: name, context: context.caller)
            return .json(WirePasskey(passkey).json, status: 201)
        }

        signedIn.get("/passkeys") { request, context in
            let principal = try context.requirePrincipal()
            return .json(WirePasskeyList(passkeys: try await passkeys.list(userID: principal.userID).map(WirePasskey.init)).json)
        }

        signedIn.patch("/passkeys/{id}") { request, context in
            let principal = try context.requirePrincipal()
            guard let name = try Self.name(try request.wireBody(WirePasskeyRename.self).name) else {
                throw HTTPError.invalidRequest("name is required")
            }
            let passkey = try await passkeys.rename(request.pathParameters["id"] ?? "", to: name, principal: principal, context: context.caller)
            return .json(WirePasskey(passkey).json)
        }

        signedIn.delete("/passkeys/{id}") { request, context in
            let principal = try context.requirePrincipal()
            try await passkeys.delete(request.pathParameters["id"] ?? "", principal: principal, context: context.caller)
            return .empty()
        }

        anyone.post("/v1/auth/passkey/options") { request, context in
            let body = try request.wireBody(WirePasskeySignInOptionsRequest.self)
            return Self.options(try await passkeys.signInOptions(username: try BodyMember.text(body.username, "username", maxLength: 1024)))
        }

        issuing.post("/v1/auth/passkey") { request, context in
            let body = try request.wireBody(WirePasskeyAnswer.self)
            return try await passkeys.signIn(flowID: try Self.flowID(body), credential: body.credential, context: context.caller, target: .api)
                .tokens.response()
        }

        anyone.post("/v1/auth/passkey/signup/options") { request, context in
            let body = try request.wireBody(WirePasskeySignUpOptionsRequest.self)
            return Self.options(
                try await passkeys.signUpOptions(
                    username: try BodyMember.text(body.username, "username", maxLength: 1024),
                    givenName: try PasswordRoutes.name(body.givenName, "given_name"), familyName: try PasswordRoutes.name(body.familyName, "family_name")))
        }

        issuing.post("/v1/auth/passkey/signup") { request, context in
            let body = try request.wireBody(WirePasskeyAnswer.self)
            return try await passkeys.signUp(flowID: try Self.flowID(body), credential: body.credential, context: context.caller, target: .api)
                .tokens.response(status: 201)
        }

        anyone.post("/v1/mfa/passkey/options") { request, context in
            let body = try request.wireBody(WireMFAPasskeyOptionsRequest.self)
            return Self.options(try await passkeys.secondFactorOptions(mfaToken: try BodyMember.text(body.mfaToken, "mfa_token", maxLength: FactorRoutes.idLength)))
        }
    }

    /// `{flow_id, publicKey}`, never cached.
    static func options(_ options: (flowID: String, publicKey: JSONValue)) -> HTTPResponse {
        var response = HTTPResponse.json(WirePasskeyOptions(flowID: options.flowID, publicKey: options.publicKey).json)
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    static func flowID(_ answer: WirePasskeyAnswer) throws -> String {
        try BodyMember.text(answer.flowID, "flow_id", maxLength: PasskeyCeremony.maxFlowIDLength)
    }

    /// A passkey's name: trimmed, 1 to 100 characters, on one line.
    static func name(_ text: String?) throws -> String? {
        guard let raw = try BodyMember.text(text, "name", maxLength: 400) else { return nil }
        let name = String(raw.trimmingWhitespace())
        guard !name.isEmpty, name.count <= PasskeyService.maxNameLength, !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { throw HTTPError.invalidRequest("name must be 1 to \(PasskeyService.maxNameLength) characters on one line") }
        return name
    }
}

extension WirePasskey {
    init(_ passkey: Passkey) {
        self.init(
            id: passkey.id, name: passkey.name, createdAt: WireTimestamp(passkey.createdAt), lastUsedAt: passkey.lastUsedAt.map(WireTimestamp.init),
            backedUp: passkey.backedUp, transports: passkey.transports, aaguid: PasskeyService.uuid(passkey.aaguid))
    }
}
