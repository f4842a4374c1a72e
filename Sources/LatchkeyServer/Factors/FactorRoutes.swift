import Foundation
import LatchkeyHTTP
import LatchkeyJOSE

/// `/v1/challenges`, `/v1/devices`, `/v1/totp` and `/v1/mfa` (API.md "Device keys ... and second
/// factors").
struct FactorRoutes {
    let factors: FactorService
    let bearer: BearerAuthenticator

    func register(on router: Router) {
        let factors = factors
        let bearer = bearer

        router.post("/v1/challenges") { request in
            let principal = try await bearer.authenticate(request)
            let body = try Self.object(request)
            guard let purpose = try Self.string(body, "purpose").flatMap(ChallengePurpose.init(rawValue:)), purpose != .mfa else {
                throw HTTPError.invalidRequest("purpose must be register or step_up")
            }
            let deviceID = try Self.string(body, "device_id")
            return .json(try await factors.issueChallenge(for: principal, purpose: purpose, deviceID: deviceID))
        }

        router.post("/v1/challenges/{id}/verify") { request in
            let principal = try await bearer.authenticate(request)
            let body = try Self.object(request)
            let signature = try Self.binary(body, "signature")
            let token = try await factors.stepUp(
                principal, challengeID: request.pathParameters["id"] ?? "", signature: signature, context: RequestContext(request))
            return token.response()
        }

        router.post("/v1/devices") { request in
            let principal = try await bearer.authenticate(request)
            let body = try Self.object(request)
            let publicKey = try Self.binary(body, "public_key")
            guard let label = try Self.string(body, "label"), (1...100).contains(label.count) else {
                throw HTTPError.invalidRequest("label is required, 1 to 100 characters")
            }
            guard let challengeID = try Self.string(body, "challenge_id") else { throw HTTPError.invalidRequest("challenge_id is required") }
            let device = try await factors.registerDevice(
                for: principal, publicKey: publicKey, label: label, challengeID: challengeID, signature: try Self.binary(body, "signature"),
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
            guard let code = try Self.string(Self.object(request), "code") else { throw HTTPError.invalidRequest("code is required") }
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
            let body = try Self.object(request)
            guard let token = try Self.string(body, "mfa_token") else { throw HTTPError.invalidRequest("mfa_token is required") }
            guard let deviceID = try Self.string(body, "device_id") else { throw HTTPError.invalidRequest("device_id is required") }
            return .json(try await factors.mfaChallenge(token: token, deviceID: deviceID))
        }

        router.post("/v1/mfa/verify") { request in
            let body = try Self.object(request)
            guard let token = try Self.string(body, "mfa_token") else { throw HTTPError.invalidRequest("mfa_token is required") }
            let challengeID = try Self.string(body, "challenge_id")
            let code = try Self.string(body, "totp_code")
            let recoveryCode = try Self.string(body, "recovery_code")
            let proof: MFAProof
            switch (challengeID, code, recoveryCode) {
            case (let challengeID?, nil, nil): proof = .deviceSignature(challengeID: challengeID, signature: try Self.binary(body, "signature"))
            case (nil, let code?, nil): proof = .totp(code)
            case (nil, nil, let recoveryCode?): proof = .recoveryCode(recoveryCode)
            default: throw HTTPError.invalidRequest("give exactly one of challenge_id with signature, totp_code or recovery_code")
            }
            return try await factors.mfaVerify(token: token, proof: proof, context: RequestContext(request)).response()
        }
    }

    /// The body as a JSON object.
    static func object(_ request: HTTPRequest) throws -> [String: JSONValue] {
        guard case .object(let members) = try request.jsonBody() else { throw HTTPError.invalidRequest("the body must be a JSON object") }
        return members
    }

    /// An optional string field of at most 512 characters.
    static func string(_ body: [String: JSONValue], _ name: String) throws -> String? {
        guard let value = body[name], value != .null else { return nil }
        guard let string = value.stringValue, string.utf8.count <= 512 else { throw HTTPError.invalidRequest("\(name) must be a string") }
        return string
    }

    /// A required binary field: base64url without padding, or standard base64 with padding.
    static func binary(_ body: [String: JSONValue], _ name: String) throws -> [UInt8] {
        guard let text = try string(body, name) else { throw HTTPError.invalidRequest("\(name) is required") }
        guard let bytes = Base64URL.decodeLenient(text) else { throw HTTPError.invalidRequest("\(name) is not base64url or base64") }
        return bytes
    }
}
