import FoundationEssentials
import LatchkeyBasics
import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyWire

/// `/v1/passkeys`: registration for a signed-in account, list, rename, delete (docs/reference.md
/// "Passkeys").
struct PasskeyRoutes {
    let passkeys: PasskeyService
    let bearer: BearerAuthenticator

    func register(on router: Router) {
        let passkeys = passkeys
        let signedIn = router.group("/v1", middleware: bearer)

        signedIn.post("/passkeys/registration/options") { request, context in
            let principal = try context.requirePrincipal()
            _ = try request.wireBody(WirePasskeyOptionsRequest.self)
            let options = try await passkeys.registrationOptions(for: principal)
            var response = HTTPResponse.json(WirePasskeyOptions(flowID: options.flowID, publicKey: options.publicKey).json)
            response.headers.set("Cache-Control", "no-store")
            return response
        }

        signedIn.post("/passkeys") { request, context in
            let principal = try context.requirePrincipal()
            let body = try request.wireBody(WirePasskeyRegistration.self)
            let flowID = try BodyMember.text(body.flowID, "flow_id", maxLength: FactorRoutes.idLength)
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
