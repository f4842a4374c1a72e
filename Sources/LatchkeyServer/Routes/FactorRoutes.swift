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

    /// The longest id or token a body may carry (ours are under 50 bytes).
    static let idLength = 512

    func register(on router: Router) {
        let factors = factors
        // Routes of `signedIn` run behind the bearer check, which puts the caller in the context.
        let signedIn = router.group("/v1", middleware: bearer)

        signedIn.post("/challenges") { request, context in
            let principal = try context.requirePrincipal()
            let body = try Self.decode(WireChallengeRequest.self, request)
            guard let purpose = ChallengePurpose(rawValue: try Self.text(body.purpose.rawValue, "purpose", maxLength: Self.idLength)),
                purpose != .mfa
            else { throw HTTPError.invalidRequest("purpose must be register or step_up") }
            let deviceID = try Self.text(body.deviceID, "device_id", maxLength: Self.idLength)
            return .json(WireChallenge(try await factors.issueChallenge(for: principal, purpose: purpose, deviceID: deviceID)).json)
        }

        signedIn.post("/challenges/{id}/verify") { request, context in
            let principal = try context.requirePrincipal()
            let signature = try Self.binary(try Self.decode(WireStepUpRequest.self, request).signature, "signature")
            let token = try await factors.stepUp(
                principal, challengeID: request.pathParameters["id"] ?? "", signature: signature, context: RequestContext(request))
            return token.response()
        }

        signedIn.post("/devices") { request, context in
            let principal = try context.requirePrincipal()
            let body = try Self.decode(WireDeviceRegistration.self, request)
            let publicKey = try Self.binary(body.publicKey, "public_key")
            let label = try Self.text(body.label, "label", maxLength: 400)
            guard label.count <= 100 else { throw HTTPError.invalidRequest("label must be at most 100 characters") }
            let challengeID = try Self.text(body.challengeID, "challenge_id", maxLength: Self.idLength)
            let device = try await factors.registerDevice(
                for: principal, publicKey: publicKey, label: label, challengeID: challengeID, signature: try Self.binary(body.signature, "signature"),
                context: RequestContext(request))
            return .json(WireDevice(device).json, status: 201)
        }

        signedIn.get("/devices") { request, context in
            let principal = try context.requirePrincipal()
            return .json(WireDeviceList(devices: try await factors.devices(userID: principal.userID).map(WireDevice.init)).json)
        }

        signedIn.delete("/devices/{id}") { request, context in
            let principal = try context.requirePrincipal()
            try await factors.removeDevice(
                request.pathParameters["id"] ?? "", userID: principal.userID, principal: principal, context: RequestContext(request))
            return .empty()
        }

        signedIn.post("/totp") { request, context in
            let principal = try context.requirePrincipal()
            let enrollment = try await factors.beginTOTP(for: principal, context: RequestContext(request))
            var response = HTTPResponse.json(WireTOTPEnrollment(secret: enrollment.secret, otpauthURI: enrollment.otpauthURI).json)
            response.headers.set("Cache-Control", "no-store")
            return response
        }

        signedIn.post("/totp/confirm") { request, context in
            let principal = try context.requirePrincipal()
            let code = try Self.text(try Self.decode(WireTOTPConfirmation.self, request).code, "code", maxLength: Self.idLength)
            let codes = try await factors.confirmTOTP(for: principal, code: code, context: RequestContext(request))
            var response = HTTPResponse.json(WireRecoveryCodes(recoveryCodes: codes).json)
            response.headers.set("Cache-Control", "no-store")
            return response
        }

        signedIn.delete("/totp") { request, context in
            let principal = try context.requirePrincipal()
            try await factors.removeTOTP(for: principal, context: RequestContext(request))
            return .empty()
        }

        router.post("/v1/mfa/challenge") { request in
            let body = try Self.decode(WireMFAChallengeRequest.self, request)
            let token = try Self.text(body.mfaToken, "mfa_token", maxLength: Self.idLength)
            let deviceID = try Self.text(body.deviceID, "device_id", maxLength: Self.idLength)
            return .json(WireChallenge(try await factors.mfaChallenge(token: token, deviceID: deviceID)).json)
        }

        router.post("/v1/mfa/verify") { request in
            let body = try Self.decode(WireMFAVerifyRequest.self, request)
            let token = try Self.text(body.mfaToken, "mfa_token", maxLength: Self.idLength)
            let challengeID = try Self.text(body.challengeID, "challenge_id", maxLength: Self.idLength)
            let code = try Self.text(body.totpCode, "totp_code", maxLength: Self.idLength)
            let recoveryCode = try Self.text(body.recoveryCode, "recovery_code", maxLength: Self.idLength)
            let proof: MFAProof
            switch (challengeID, code, recoveryCode) {
            case (let challengeID?, nil, nil):
                guard let signature = body.signature else { throw HTTPError.invalidRequest("signature is required") }
                proof = .deviceSignature(challengeID: challengeID, signature: try Self.binary(signature, "signature"))
            case (nil, let code?, nil): proof = .totp(code)
            case (nil, nil, let recoveryCode?): proof = .recoveryCode(recoveryCode)
            default: throw HTTPError.invalidRequest("give exactly one of challenge_id with signature, totp_code or recovery_code")
            }
            return try await factors.mfaVerify(token: token, proof: proof, context: RequestContext(request)).response()
        }
    }

    // MARK: Reading bodies

    /// The JSON body read as `Model`.
    ///
    /// - Throws: `invalid_request` naming the first member that is missing or mistyped, as
    ///   `WireDecodingError` describes it (`label is required`, `code must be a string`).
    static func decode<Model: WireDecodable>(_ type: Model.Type, _ request: HTTPRequest) throws -> Model {
        let json = try request.jsonBody()
        do {
            return try Model(json: json)
        } catch {
            throw HTTPError.invalidRequest(error.description)
        }
    }

    /// `value` of the member `name`, which must be non-empty and at most `maxLength` bytes.
    static func text(_ value: String, _ name: String, maxLength: Int) throws -> String {
        guard !value.isEmpty, value.utf8.count <= maxLength else {
            throw HTTPError.invalidRequest("\(name) must be a non-empty string of at most \(maxLength) bytes")
        }
        return value
    }

    /// ``text(_:_:maxLength:)`` for an optional member.
    static func text(_ value: String?, _ name: String, maxLength: Int) throws -> String? {
        try value.map { try text($0, name, maxLength: maxLength) }
    }

    /// The bytes of the binary member `name`: base64url without padding, or standard base64 with
    /// padding (what `SecKey` and CryptoKit hand an app).
    static func binary(_ value: String, _ name: String, maxLength: Int = 512) throws -> [UInt8] {
        guard let bytes = Base64URL.decodeLenient(try text(value, name, maxLength: maxLength)) else {
            throw HTTPError.invalidRequest("\(name) is not base64url or base64")
        }
        return bytes
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
