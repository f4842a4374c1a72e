import FoundationEssentials
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJOSE
import LatchkeyJSON

/// `latchkey demo`: the seeds' stories, step by step, against a development server and its
/// sandbox Apple, over HTTP exactly as an app would do it: Sign in with Apple from first sign-in
/// to account deletion, with the WWDC24 sample's device key as a second factor on the way.
enum DemoCommand {
    static let demo = Command(
        path: ["demo"], summary: "Walk the Sign in with Apple story against a development server.",
        options: [Option(name: "url", valueName: "URL", help: "the server (default http://127.0.0.1:8080)")],
        details: """
            Needs a server in development mode (make run, or latchkey serve --dev): the sandbox
            Apple it mounts plays the device and Apple. Prints each step; exits 0 when every step
            answered as it should, 1 at the first that did not.
            """
    ) { arguments in
        let base = arguments[option: "url"] ?? "http://127.0.0.1:8080"
        guard let url = URL(string: base), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw UsageError(message: "--url must be an http or https URL")
        }
        do {
            try await Demo(base: base.hasSuffix("/") ? String(base.dropLast()) : base).run()
            print("\nThe story holds: every step answered as Apple's server rules say it should.")
            return 0
        } catch let failure as Demo.Failure {
            print("   ✗ \(failure.message)")
            return 1
        }
    }
}

/// The steps of the demo.
final class Demo {
    struct Failure: Error {
        var message: String
    }

    let base: String
    private let client = EventHTTPClient()
    private var stepNumber = 0

    init(base: String) {
        self.base = base
    }

    func run() async throws {
        let email = "ada@privaterelay.appleid.com"
        announce("The app asks Apple to sign in, with a nonce (sandbox /authorize)")
        let first = try await authorize(subject: nil, email: email)
        done("identity token for Apple user \(first.subject); a single-use authorization code")

        announce("The app sends both to POST /v1/auth/apple, with the name Apple shares only this once")
        var signIn = try await signInWithApple(first, names: ("Ada", "Lovelace"))
        try expect(signIn["created"] == true, "created should be true on the first sign-in", signIn)
        let userID = signIn["user"]?["id"]?.stringValue ?? "?"
        done("account \(userID) created for \(name(signIn)); Apple's refresh token stored sealed")

        announce("The access token expires; the app refreshes (POST /v1/token)")
        let refreshed = try await call(.post, "/v1/token", json: ["grant_type": "refresh_token", "refresh_token": signIn["refresh_token"] ?? .null])
        try expect(refreshed.status == 200, "refresh should succeed", refreshed.body)
        done("a new access token and a new refresh token; the old one is retired")

        announce("The app loads the profile (GET /v1/me)")
        let me = try await call(.get, "/v1/me", bearer: refreshed.body["access_token"]?.stringValue)
        try expect(me.status == 200 && me.body["user"]?["given_name"] == "Ada", "the profile should carry the name", me.body)
        done("\(name(me.body)), identities: \(me.body["identities"]?.arrayValue?.compactMap { $0["provider"]?.stringValue }.joined(separator: ", ") ?? "")")

        announce("The user stops using Sign in with Apple for the app; Apple notifies the server (consent-revoked)")
        let notified = try await call(.post, "/sandbox/apple/notify", json: ["sub": .string(first.subject), "type": "consent-revoked"])
        try expect(notified.status == 200 && notified.body["status"] == 200, "the notification endpoint should answer 200", notified.body)
        done("the server verified the signed notification and ended the user's sessions")

        announce("The app refreshes again and learns why its session ended")
        let refused = try await call(.post, "/v1/token", json: ["grant_type": "refresh_token", "refresh_token": refreshed.body["refresh_token"] ?? .null])
        try expect(refused.status == 400 && refused.body["reason"] == "consent_revoked", "refresh should fail with reason consent_revoked", refused.body)
        done("400 invalid_grant, reason consent_revoked: the app signs out cleanly")

        announce("The user signs in again; Apple sends no name this time")
        let second = try await authorize(subject: first.subject, email: email)
        signIn = try await signInWithApple(second, names: nil)
        try expect(signIn["created"] == false && signIn["user"]?["given_name"] == "Ada", "the account and its name should be kept", signIn)
        done("created: false, still \(name(signIn))")

        let stepped = try await deviceKeyChapter(first, email: email, bearer: signIn["access_token"]?.stringValue)

        announce("The user deletes the account in the app (DELETE /v1/me, second factor fresh)")
        let deleted = try await call(.delete, "/v1/me", bearer: stepped["access_token"]?.stringValue)
        try expect(deleted.status == 204, "deletion should answer 204", deleted.body)
        done("sessions ended and personal data deleted")

        announce("Apple's token was revoked at Apple (sandbox /auth/revoke), as the App Store requires")
        for _ in 0..<50 {
            let seen = try await call(.get, "/sandbox/apple/revocations")
            if seen.body["revocations"]?.arrayValue?.contains(where: { $0["sub"]?.stringValue == first.subject }) == true {
                done("Apple saw the revocation of \(first.subject)'s refresh token")
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure(message: "the sandbox saw no revocation within 5 seconds")
    }

    /// The WWDC24 sample's second factor: a P-256 key (in software here, in the Secure Enclave
    /// on a device) registered with proof of possession, then signing the server's challenge
    /// when the next sign-in answers `mfa_required`.
    ///
    /// - Returns: The token response of the sign-in completed with the device key.
    private func deviceKeyChapter(_ credential: Credential, email: String, bearer: String?) async throws -> JSONValue {
        let deviceKey = P256.Signing.PrivateKey()
        announce("The app makes a device key (Secure Enclave; software here) and registers it (POST /v1/challenges, POST /v1/devices)")
        let challenge = try await call(.post, "/v1/challenges", json: ["purpose": "register"], bearer: bearer)
        try expect(challenge.status == 200, "a register challenge should be issued", challenge.body)
        let registered = try await call(.post, "/v1/devices", json: [
            "public_key": .string(Base64URL.encode(deviceKey.publicKey.x963Representation)), "label": "Demo iPhone",
            "challenge_id": challenge.body["challenge_id"] ?? .null, "signature": .string(try sign(challenge.body, with: deviceKey)),
        ], bearer: bearer)
        try expect(registered.status == 201, "the device key should register", registered.body)
        let deviceID = registered.body["id"] ?? .null
        done("device key \(deviceID.stringValue ?? "?") registered: it signed the challenge with the key it claims")

        announce("The user signs in again; a second factor is now needed")
        let again = try await authorize(subject: credential.subject, email: email)
        let refused = try await call(.post, "/v1/auth/apple", json: [
            "identity_token": .string(again.identityToken), "authorization_code": .string(again.code), "nonce": .string(again.rawNonce),
        ])
        try expect(refused.status == 403 && refused.body["error"] == "mfa_required", "sign-in should answer mfa_required", refused.body)
        done("403 mfa_required with an mfa_token and the factors: \(refused.body["factors"]?.arrayValue?.compactMap { $0["type"]?.stringValue }.joined(separator: ", ") ?? "")")

        announce("The app signs the server's challenge with the device key (POST /v1/mfa/challenge, POST /v1/mfa/verify)")
        let mfaToken = refused.body["mfa_token"] ?? .null
        let mfaChallenge = try await call(.post, "/v1/mfa/challenge", json: ["mfa_token": mfaToken, "device_id": deviceID])
        try expect(mfaChallenge.status == 200, "an mfa challenge should be issued", mfaChallenge.body)
        let verified = try await call(.post, "/v1/mfa/verify", json: [
            "mfa_token": mfaToken, "challenge_id": mfaChallenge.body["challenge_id"] ?? .null,
            "signature": .string(try sign(mfaChallenge.body, with: deviceKey)),
        ])
        let amr = (try? Insecure.unverifiedContents(of: verified.body["access_token"]?.stringValue ?? "").claims["amr"])?.arrayValue?
            .compactMap(\.stringValue) ?? []
        try expect(verified.status == 200 && amr.contains("hwk"), "the signed challenge should give tokens whose amr has hwk", verified.body)
        done("signed in with amr \(amr.joined(separator: ", "))")
        return verified.body
    }

    /// What `SecKeyCreateSignature(.ecdsaSignatureMessageX962SHA256)` gives for a challenge
    /// body's `challenge`: DER, base64url.
    private func sign(_ challenge: JSONValue, with key: P256.Signing.PrivateKey) throws -> String {
        guard let bytes = Base64URL.decode(challenge["challenge"]?.stringValue ?? "") else {
            throw Failure(message: "the challenge is not base64url: \(challenge.serializedString)")
        }
        return Base64URL.encode(try key.signature(for: bytes).derRepresentation)
    }

    // MARK: Steps

    private struct Credential {
        var identityToken: String
        var code: String
        var subject: String
        var rawNonce: String
    }

    private func authorize(subject: String?, email: String) async throws -> Credential {
        let rawNonce = Base64URL.encode(SecureRandom.bytes(count: 16))
        let hashed = HashFunction.sha256.hexDigest(Array(rawNonce.utf8))
        var body: [String: JSONValue] = ["nonce": .string(hashed), "email": .string(email), "is_private_email": true]
        if let subject { body["sub"] = .string(subject) }
        let answer = try await call(.post, "/sandbox/apple/authorize", json: .object(body))
        if answer.status == 404 { throw Failure(message: "no sandbox at \(base): is the server in development mode (make run)?") }
        guard answer.status == 200, let token = answer.body["identity_token"]?.stringValue, let code = answer.body["authorization_code"]?.stringValue,
            let sub = answer.body["sub"]?.stringValue
        else { throw Failure(message: "the sandbox answered \(answer.status): \(answer.body.serializedString)") }
        return Credential(identityToken: token, code: code, subject: sub, rawNonce: rawNonce)
    }

    private func signInWithApple(_ credential: Credential, names: (String, String)?) async throws -> JSONValue {
        var body: [String: JSONValue] = [
            "identity_token": .string(credential.identityToken), "authorization_code": .string(credential.code), "nonce": .string(credential.rawNonce),
        ]
        if let names {
            body["given_name"] = .string(names.0)
            body["family_name"] = .string(names.1)
        }
        let answer = try await call(.post, "/v1/auth/apple", json: .object(body))
        try expect(answer.status == 200, "sign-in should answer 200", answer.body)
        return answer.body
    }

    private func call(_ method: HTTPMethod, _ path: String, json: JSONValue? = nil, bearer: String? = nil) async throws -> (status: Int, body: JSONValue) {
        var headers = HTTPHeaders()
        if json != nil { headers.set("Content-Type", "application/json") }
        if let bearer { headers.set("Authorization", "Bearer \(bearer)") }
        let response: OutboundResponse
        do {
            response = try await client.send(OutboundRequest(url: URL(string: base + path)!, method: method, headers: headers, body: json?.serialized ?? []))
        } catch {
            throw Failure(message: "\(method.rawValue) \(path) got no answer from \(base) (\(error)); is the server running (make run)?")
        }
        let body = response.body.isEmpty ? JSONValue.object([:]) : (try? JSONValue(parsing: response.body)) ?? .object([:])
        return (response.status, body)
    }

    // MARK: Output

    private func expect(_ condition: Bool, _ message: String, _ body: JSONValue) throws {
        guard condition else { throw Failure(message: "\(message); the server answered \(Self.redacted(body).serializedString)") }
    }

    private func announce(_ text: String) {
        stepNumber += 1
        print("\n\(stepNumber). \(text)")
    }

    private func done(_ text: String) {
        print("   ✓ \(text)")
    }

    private func name(_ body: JSONValue) -> String {
        let user = body["user"]
        return [user?["given_name"]?.stringValue, user?["family_name"]?.stringValue].compactMap { $0 }.joined(separator: " ")
    }

    /// A body with its tokens cut short, so the output carries no usable secret.
    static func redacted(_ body: JSONValue) -> JSONValue {
        guard case .object(var members) = body else { return body }
        for name in ["access_token", "refresh_token", "identity_token", "authorization_code", "mfa_token"] {
            if let value = members[name]?.stringValue { members[name] = .string(String(value.prefix(6)) + "…") }
        }
        return .object(members)
    }
}
