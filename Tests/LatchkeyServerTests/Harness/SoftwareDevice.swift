import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore
import LatchkeyWire
@testable import LatchkeyServer

/// A software P-256 key standing in for the Secure Enclave key of the WWDC24 sample
/// (`generateClientKeys()` / `signChallenge(_:)`): it exports its public key and signs exactly as
/// iOS does, so tests (and later `latchkey demo`) run the real client flow.
struct SoftwareDevice: Sendable {
    let key = P256.Signing.PrivateKey()

    /// What `SecKeyCopyExternalRepresentation` returns: 04‖X‖Y, 65 bytes.
    var publicKey: [UInt8] { key.publicKey.x963Representation }

    /// What `SecKeyCreateSignature(.ecdsaSignatureMessageX962SHA256)` returns: DER over SHA-256.
    func sign(_ challenge: [UInt8]) throws -> [UInt8] {
        try key.signature(for: challenge).derRepresentation
    }

    /// Signs the base64url `challenge` of a `{challenge_id, challenge, expires_in}` body.
    func sign(challenge: WireChallenge) throws -> (challengeID: String, signature: String) {
        (challenge.challengeID, Base64URL.encode(try sign(Base64URL.decode(challenge.challenge) ?? [])))
    }

    /// Signs the challenge in the body of `response`, an answer of `POST /v1/challenges` or
    /// `POST /v1/mfa/challenge`.
    func sign(challengeIn response: TestResponse) throws -> (challengeID: String, signature: String) {
        try sign(challenge: try response.decode(WireChallenge.self))
    }

    /// The whole registration: ask for a `register` challenge, sign it, post the key.
    ///
    /// - Returns: The response to `POST /v1/devices`.
    func register(on server: TestServer, bearer: [String: String], label: String = "Ada's iPhone") async throws -> TestResponse {
        let challenge = try await server.request(.post, "/v1/challenges", json: WireChallengeRequest(purpose: .register).json, headers: bearer)
        let (id, signature) = try sign(challengeIn: challenge)
        let registration = WireDeviceRegistration(publicKey: Base64URL.encode(publicKey), label: label, challengeID: id, signature: signature)
        return try await server.request(.post, "/v1/devices", json: registration.json, headers: bearer)
    }

    /// A step-up: a `step_up` challenge for `deviceID`, signed and verified.
    ///
    /// - Returns: The response to `POST /v1/challenges/{id}/verify`.
    func stepUp(on server: TestServer, bearer: [String: String], deviceID: String) async throws -> TestResponse {
        let request = WireChallengeRequest(purpose: .stepUp, deviceID: deviceID)
        let challenge = try await server.request(.post, "/v1/challenges", json: request.json, headers: bearer)
        let (id, signature) = try sign(challengeIn: challenge)
        return try await server.request(.post, "/v1/challenges/\(id)/verify", json: WireStepUpRequest(signature: signature).json, headers: bearer)
    }
}

extension TestServer {
    /// Signs `user` in through ``SignInPipeline/signIn(method:context:authenticate:)``, the seam
    /// every sign-in endpoint ends in, as a password sign-in would once its check passed.
    ///
    /// - Returns: The tokens, or the `mfa_required` error's body.
    func signIn(_ user: User, method: String = "pwd") async throws -> Result<TokenResponse, AuthError> {
        do {
            return .success(
                try await application.services.signIns.signIn(method: method, context: RequestContext(ip: "127.0.0.1")) { _, _ in
                    Authentication(user: user, amr: [method])
                })
        } catch let error as AuthError {
            return .failure(error)
        }
    }

    /// The event names of a user's audit entries, newest first.
    func auditEvents(_ userID: String) async throws -> [String] {
        try await AuditLog(database: database).entries(userID: userID, limit: 1000).map(\.event.rawValue)
    }
}
