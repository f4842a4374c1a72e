import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJSON

/// `/v1/challenges`, `/v1/devices`, `/v1/totp` and `/v1/mfa` (docs/reference.md "Device keys ... and second
/// factors").
struct FactorRoutes {
    let factors: FactorService
    let bearer: BearerAuthenticator

    /// The longest id or token a body may carry (ours are under 50 bytes).
    static let idLength = 512

    func register(on router: Router) {
        let factors = factors
        let bearer = bearer

        router.post("/v1/challenges") { request in
            let principal = try await bearer.authenticate(request)
            let body = try JSONFields(request)
            guard let purpose = ChallengePurpose(rawValue: try body.required("purpose", maxLength: Self.idLength)), purpose != .mfa else {
                throw HTTPError.invalidRequest("purpose must be register or step_up")
            }
            let deviceID = try body.optional("device_id", maxLength: Self.idLength)
            return .json(try await factors.issueChallenge(for: principal, purpose: purpose, deviceID: deviceID))
        }

        router.post("/v1/challenges/{id}/verify") { request in
            let principal = try await bearer.authenticate(request)
            let signature = try JSONFields(request).binary("signature")
            let token = try await factors.stepUp(
                principal, challengeID: request.pathParameters["id"] ?? "", signature: signature, context: RequestContext(request))
            return token.response()
        }

        router.post("/v1/devices") { request in
            let principal = try await bearer.authenticate(request)
            let body = try JSONFields(request)
            let publicKey = try body.binary("public_key")
            let label = try body.required("label", maxLength: 400)
            guard label.count <= 100 else { throw HTTPError.invalidRequest("label must be at most 100 characters") }
            let challengeID = try body.required("challenge_id", maxLength: Self.idLength)
            let device = try await factors.registerDevice(
                for: principal, publicKey: publicKey, label: label, challengeID: challengeID, signature: try body.binary("signature"),
                context: RequestContext(request))
            return .json(device.json, status: 201)
        }

        router.get("/v1/devices") { request in
            let principal = try await bearer.authenticate(request)
            return .json(["devices": .array(try await factors.devices(userID: principal.userID).map(\.json))])
        }

        router.delete("/v1/devices/{id}") { request in
            let principal = try await bearer.authenticate(request)
            try await factors.removeDevice(
                request.pathParameters["id"] ?? "", userID: principal.userID, principal: principal, context: RequestContext(request))
            return .empty()
        }

        router.post("/v1/totp") { request in
            let principal = try await bearer.authenticate(request)
            var response = HTTPResponse.json(try await factors.beginTOTP(for: principal, context: RequestContext(request)))
            response.headers.set("Cache-Control", "no-store")
            return response
        }

        router.post("/v1/totp/confirm") { request in
            let principal = try await bearer.authenticate(request)
            let code = try JSONFields(request).required("code", maxLength: Self.idLength)
            let codes = try await factors.confirmTOTP(for: principal, code: code, context: RequestContext(request))
            var response = HTTPResponse.json(["recovery_codes": .array(codes.map(JSONValue.string))])
            response.headers.set("Cache-Control", "no-store")
            return response
        }

        router.delete("/v1/totp") { request in
            let principal = try await bearer.authenticate(request)
            try await factors.removeTOTP(for: principal, context: RequestContext(request))
            return .empty()
        }

        router.post("/v1/mfa/challenge") { request in
            let body = try JSONFields(request)
            let token = try body.required("mfa_token", maxLength: Self.idLength)
            let deviceID = try body.required("device_id", maxLength: Self.idLength)
            return .json(try await factors.mfaChallenge(token: token, deviceID: deviceID))
        }

        router.post("/v1/mfa/verify") { request in
            let body = try JSONFields(request)
            let token = try body.required("mfa_token", maxLength: Self.idLength)
            let challengeID = try body.optional("challenge_id", maxLength: Self.idLength)
            let code = try body.optional("totp_code", maxLength: Self.idLength)
            let recoveryCode = try body.optional("recovery_code", maxLength: Self.idLength)
            let proof: MFAProof
            switch (challengeID, code, recoveryCode) {
            case (let challengeID?, nil, nil): proof = .deviceSignature(challengeID: challengeID, signature: try body.binary("signature"))
            case (nil, let code?, nil): proof = .totp(code)
            case (nil, nil, let recoveryCode?): proof = .recoveryCode(recoveryCode)
            default: throw HTTPError.invalidRequest("give exactly one of challenge_id with signature, totp_code or recovery_code")
            }
            return try await factors.mfaVerify(token: token, proof: proof, context: RequestContext(request)).response()
        }
    }
}
