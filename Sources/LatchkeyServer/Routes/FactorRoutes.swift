import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyWire

/// `/v1/challenges`, `/v1/devices`, `/v1/totp` and `/v1/mfa` (docs/reference.md "Device keys ... and second
/// factors").
struct FactorRoutes {
    let factors: FactorService
    let bearer: BearerAuthenticator
    /// Binds the tokens a sign-in issues to the key of its DPoP proof.
    let binding: DPoPBinding

    /// The longest id or token a body may carry (ours are under 50 bytes).
    static let idLength = 512

    func register(on router: Router) {
        let factors = factors
        // Routes of `signedIn` run behind the bearer check, which puts the caller in the context.
        let signedIn = router.group("/v1", middleware: bearer)
        let issuing = router.group("", middleware: binding)

        signedIn.post("/challenges") { request, context in
            let principal = try context.requirePrincipal()
            let body = try request.wireBody(WireChallengeRequest.self)
            guard let purpose = ChallengePurpose(rawValue: try BodyMember.text(body.purpose.rawValue, "purpose", maxLength: Self.idLength)),
                purpose != .mfa
            else { throw HTTPError.invalidRequest("purpose must be register or step_up") }
            let deviceID = try BodyMember.text(body.deviceID, "device_id", maxLength: Self.idLength)
            return .json(WireChallenge(try await factors.issueChallenge(for: principal, purpose: purpose, deviceID: deviceID)).json)
        }

        signedIn.post("/challenges/{id}/verify") { request, context in
            let principal = try context.requirePrincipal()
            let signature = try BodyMember.binary(try request.wireBody(WireStepUpRequest.self).signature, "signature")
            let token = try await factors.stepUp(
                principal, challengeID: request.pathParameters["id"] ?? "", signature: signature, context: context.caller)
            return token.response()
        }

        signedIn.post("/devices") { request, context in
            let principal = try context.requirePrincipal()
            let body = try request.wireBody(WireDeviceRegistration.self)
            let publicKey = try BodyMember.binary(body.publicKey, "public_key")
            let label = try BodyMember.text(body.label, "label", maxLength: 400)
            guard label.count <= 100 else { throw HTTPError.invalidRequest("label must be at most 100 characters") }
            let challengeID = try BodyMember.text(body.challengeID, "challenge_id", maxLength: Self.idLength)
            let device = try await factors.registerDevice(
                for: principal, publicKey: publicKey, label: label, challengeID: challengeID, signature: try BodyMember.binary(body.signature, "signature"),
                context: context.caller)
            return .json(WireDevice(device).json, status: 201)
        }

        signedIn.get("/devices") { request, context in
            let principal = try context.requirePrincipal()
            return .json(WireDeviceList(devices: try await factors.devices(userID: principal.userID).map(WireDevice.init)).json)
        }

        signedIn.delete("/devices/{id}") { request, context in
            let principal = try context.requirePrincipal()
            try await factors.removeDevice(
                request.pathParameters["id"] ?? "", userID: principal.userID, principal: principal, context: context.caller)
            return .empty()
        }

        signedIn.post("/totp") { request, context in
            let principal = try context.requirePrincipal()
            let enrollment = try await factors.beginTOTP(for: principal, context: context.caller)
            var response = HTTPResponse.json(WireTOTPEnrollment(secret: enrollment.secret, otpauthURI: enrollment.otpauthURI).json)
            response.headers.set("Cache-Control", "no-store")
            return response
        }

        signedIn.post("/totp/confirm") { request, context in
            let principal = try context.requirePrincipal()
            let code = try BodyMember.text(try request.wireBody(WireTOTPConfirmation.self).code, "code", maxLength: Self.idLength)
            let codes = try await factors.confirmTOTP(for: principal, code: code, context: context.caller)
            var response = HTTPResponse.json(WireRecoveryCodes(recoveryCodes: codes).json)
            response.headers.set("Cache-Control", "no-store")
            return response
        }

        signedIn.delete("/totp") { request, context in
            let principal = try context.requirePrincipal()
            try await factors.removeTOTP(for: principal, context: context.caller)
            return .empty()
        }

        router.post("/v1/mfa/challenge") { request in
            let body = try request.wireBody(WireMFAChallengeRequest.self)
            let token = try BodyMember.text(body.mfaToken, "mfa_token", maxLength: Self.idLength)
            let deviceID = try BodyMember.text(body.deviceID, "device_id", maxLength: Self.idLength)
            return .json(WireChallenge(try await factors.mfaChallenge(token: token, deviceID: deviceID)).json)
        }

        issuing.post("/v1/mfa/verify") { request, context in
            let body = try request.wireBody(WireMFAVerifyRequest.self)
            let token = try BodyMember.text(body.mfaToken, "mfa_token", maxLength: Self.idLength)
            let challengeID = try BodyMember.text(body.challengeID, "challenge_id", maxLength: Self.idLength)
            let code = try BodyMember.text(body.totpCode, "totp_code", maxLength: Self.idLength)
            let recoveryCode = try BodyMember.text(body.recoveryCode, "recovery_code", maxLength: Self.idLength)
            let flowID = try BodyMember.text(body.flowID, "flow_id", maxLength: PasskeyCeremony.maxFlowIDLength)
            let proof: MFAProof
            switch (challengeID, code, recoveryCode, flowID) {
            case (let challengeID?, nil, nil, nil):
                guard let signature = body.signature else { throw HTTPError.invalidRequest("signature is required") }
                proof = .deviceSignature(challengeID: challengeID, signature: try BodyMember.binary(signature, "signature"))
            case (nil, let code?, nil, nil): proof = .totp(code)
            case (nil, nil, let recoveryCode?, nil): proof = .recoveryCode(recoveryCode)
            case (nil, nil, nil, let flowID?):
                guard case .object? = body.credential else { throw HTTPError.invalidRequest("credential is required, an object") }
                proof = .passkey(flowID: flowID, credential: body.credential ?? .null)
            default: throw HTTPError.invalidRequest("give exactly one of challenge_id with signature, totp_code, recovery_code or flow_id with credential")
            }
            return try await factors.mfaVerify(token: token, proof: proof, context: context.caller).response()
        }
    }
}

// MARK: Second factors in their wire form

extension WireChallenge {
    init(_ challenge: IssuedChallenge) {
        self.init(challengeID: challenge.id, challenge: Base64URL.encode(challenge.bytes), expiresIn: challenge.expiresIn)
    }
}

extension WireDevice {
    init(_ device: DeviceKey) {
        self.init(
            id: device.id, label: device.label, createdAt: WireTimestamp(device.createdAt), lastUsedAt: device.lastUsedAt.map(WireTimestamp.init))
    }
}
