import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore
import LatchkeyWebAuthn

/// Signing in with a passkey (WebAuthn §7.2), creating an account with one, and a passkey as the
/// second factor after a password (docs/reference.md, "Passkeys"; docs/security.md S34).
///
/// Options write nothing: each ceremony travels sealed in its `flow_id` (``PasskeyCeremony``).
/// Every answer spends its flow by a compare-and-set before it is verified; a refusal commits
/// that spending with its audit entry, so a challenge is never checked twice. A verified passkey
/// with user verification is phishing-resistant multi-factor: its sign-in never asks for a
/// second factor.
extension PasskeyService {
    /// The `method` label of sign-in metrics and the first `amr` value of a passkey sign-in.
    static let method = "swk"

    /// How long a discoverable sign-in's challenge lives: the hosted sign-in page asks for one
    /// when it loads and offers it to AutoFill, where browsers ignore `timeout`.
    static let discoverableLifetime: TimeInterval = 30 * 60

    // MARK: Sign-in

    /// `POST /v1/auth/passkey/options`. Without `username` the options allow any passkey of this
    /// relying party. With one, they name that account's passkeys; an unknown name gets one
    /// stand-in credential derived from the name (the same on every request), so the answer does
    /// not tell whether the account exists.
    func signInOptions(username raw: String?) async throws -> (flowID: String, publicKey: JSONValue) {
        let party = try party()
        let now = dependencies.clock()
        let challenge = SecureRandom.bytes(count: 32)
        guard let username = try raw.map({ try Username($0).value }) else {
            let flowID = try begin(.signIn, challenge, lifetime: Self.discoverableLifetime, now: now)
            return (flowID, requestOptions(challenge: challenge, party: party, allowing: []))
        }
        let (userID, owned) = try await dependencies.database.read { connection in
            let userID = try self.passwords.find(username: username, on: connection)?.userID ?? self.users.oldest(email: username, on: connection)?.id
            return (userID, try userID.map { try self.passkeys.list(userID: $0, on: connection) } ?? [])
        }
        let flowID = try begin(.signIn, challenge, userID: userID, username: username, now: now)
        return (flowID, requestOptions(challenge: challenge, party: party, allowing: owned.isEmpty ? standIn(for: username) : Self.descriptors(owned)))
    }

    /// One credential descriptor no passkey has, derived from `username` under the master key.
    func standIn(for username: String) -> JSONValue {
        let id = Array(HMAC.authenticationCode(for: Array(username.utf8), key: decoyKey).prefix(20))
        return [["type": "public-key", "id": .string(Base64URL.encode(id)), "transports": ["hybrid", "internal"]]]
    }

    /// `POST /v1/auth/passkey`: verifies the answer to a sign-in flow and signs its account in.
    ///
    /// - Throws: `invalid_grant` with the failed check's reason (the flow is spent, the refusal
    ///   audited); `mfa_required` only when user verification is `preferred` and the
    ///   authenticator did not verify the user of an account with a second factor.
    func signIn(flowID: String, credential: JSONValue, context: RequestContext, target: SignInTarget) async throws -> SignedIn {
        _ = try party()
        let now = dependencies.clock()
        let outcome = try await dependencies.database.write { connection -> Result<(Authentication, SignInPipeline.Admission), AuthError> in
            let (passkey, assertion): (Passkey, VerifiedAuthentication)
            switch try self.verifyAssertion(
                flowID: flowID, kind: .signIn, credential: credential, use: "sign_in", userID: nil, context: context, now: now, on: connection)
            {
            case .success(let verified): (passkey, assertion) = verified
            case .failure(let error): return .failure(error)
            }
            guard let user = try self.users.find(passkey.userID, on: connection) else {
                return .failure(.invalidGrant(.accountDeleted, "the account no longer exists"))
            }
            let authentication = Authentication(
                user: user, amr: Self.amr(passkey, assertion), secondFactor: assertion.userVerified ? .proved(at: now) : .notAsked)
            return .success((authentication, try self.signIns.admit(authentication, target: target, context: context, now: now, on: connection)))
        }
        switch outcome {
        case .success(let admitted): return try await signIns.conclude(admitted, method: "passkey", now: now)
        case .failure(let error):
            signIns.countFailure(method: "passkey")
            throw error
        }
    }

    /// `amr` of a verified assertion (RFC 8176): `swk` (`hwk` for an attested hardware
    /// authenticator), and with user verification `user` and `mfa`.
    static func amr(_ passkey: Passkey, _ assertion: VerifiedAuthentication) -> [String] {
        amr(attestation: passkey.attestation, userVerified: assertion.userVerified)
    }

    /// ``amr(_:_:)`` from a passkey's stored attestation (`verified` for an attested hardware
    /// authenticator) and the answer's UV flag.
    static func amr(attestation: String, userVerified: Bool) -> [String] {
        let key = attestation == "verified" ? "hwk" : Self.method
        return userVerified ? [key, "user", "mfa"] : [key]
    }

    // MARK: Sign-up

    /// `POST /v1/auth/passkey/signup/options`: options for a new account's passkey, under a new
    /// user handle. Nothing but the flow is written until the answer verifies.
    ///
    /// - Throws: `conflict` when `username` is an account's already.
    func signUpOptions(username raw: String?, givenName: String?, familyName: String?) async throws -> (flowID: String, publicKey: JSONValue) {
        let party = try party()
        let now = dependencies.clock()
        let challenge = SecureRandom.bytes(count: 32)
        let handle = SecureRandom.bytes(count: 64)
        let username = try raw.map { try Username($0) }
        guard username?.isEmail ?? true else { throw AuthError.invalidRequest("username must be an email address: a passkey account has no password") }
        if let username, try await dependencies.database.read({ try self.emailTaken(username.value, on: $0) }) {
            throw AuthError.conflict(PasswordService.usernameTaken)
        }
        let flowID = try begin(.signup, challenge, userHandle: handle, username: username?.value, givenName: givenName, familyName: familyName, now: now)
        let displayName = [givenName, familyName].compactMap { $0 }.joined(separator: " ")
        let name = username?.value ?? (displayName.isEmpty ? party.name : displayName)
        return (flowID, creationOptions(
            challenge: challenge, party: party, userHandle: handle, name: name, displayName: displayName.isEmpty ? name : displayName,
            excluding: []))
    }

    /// Whether an account signs in with `email`: as a password's username or its email.
    func emailTaken(_ email: String, on connection: any SQLConnection) throws -> Bool {
        try passwords.usernameExists(email, on: connection) || users.oldest(email: email, on: connection) != nil
    }

    /// `POST /v1/auth/passkey/signup`: verifies the answer to a sign-up flow, creates the account
    /// (no password; the email unverified) with its passkey, and signs it in (201, `created`).
    func signUp(flowID: String, credential: JSONValue, context: RequestContext, target: SignInTarget) async throws -> SignedIn {
        let party = try party()
        let now = dependencies.clock()
        let userVerification = userVerification
        let attestation = configuration.attestationPolicy(at: now)
        let transports = Self.transports(credential)
        let outcome = try await dependencies.database.write { connection -> Result<(Authentication, SignInPipeline.Admission), AuthError> in
            let refuse = { (error: AuthError, reason: String) throws -> Result<(Authentication, SignInPipeline.Admission), AuthError> in
                try self.dependencies.record(
                    .passkeyRegistrationFailed, .failure, userID: nil, context: context, now: now, details: ["use": "sign_up", "reason": reason],
                    on: connection)
                return .failure(error)
            }
            guard let ceremony = try self.take(flowID, .signup, at: now, on: connection), let handle = ceremony.userHandle
            else {
                return try refuse(.invalidGrant(AuthError.Reason(rawValue: "unknown_flow"), "no such sign-up flow, or it expired or was used"), "unknown_flow")
            }
            let verified: VerifiedRegistration
            do throws(WebAuthnError) {
                verified = try RegistrationCeremony(
                    challenge: ceremony.challenge, origins: Set(party.origins), rpID: party.id, userVerification: userVerification,
                    algorithms: COSEAlgorithm.supported, attestation: attestation, conditional: false
                ).verify(try RegistrationResponse(json: credential))
            } catch {
                return try refuse(.invalidGrant(AuthError.Reason(rawValue: error.reason), error.message), error.reason)
            }
            if try self.passkeys.find(credentialID: verified.credentialID, on: connection) != nil {
                return try refuse(.conflict("this passkey is registered already"), "credential_exists")
            }
            if let email = ceremony.username, try self.emailTaken(email, on: connection) {
                return try refuse(.conflict(PasswordService.usernameTaken), "username_taken")
            }
            let user = try self.users.create(
                email: ceremony.username, givenName: ceremony.givenName, familyName: ceremony.familyName, now: now, on: connection)
            guard try self.passkeys.assignUserHandle(handle, userID: user.id, on: connection) == handle else {
                throw AuthError.conflict("the user handle is taken; ask for new options")
            }
            let passkey = try self.store(
                verified, userID: user.id, name: nil, transports: transports, event: .passkeySignUp, context: context, now: now, on: connection)
            let authentication = Authentication(
                user: user, created: true, amr: Self.amr(attestation: passkey.attestation, userVerified: verified.userVerified),
                secondFactor: verified.userVerified ? .proved(at: now) : .decided(provedAt: nil))
            return .success((authentication, try self.signIns.admit(authentication, target: target, context: context, now: now, on: connection)))
        }
        switch outcome {
        case .success(let admitted):
            dependencies.metrics.increment(.passkeyRegistrations, ["outcome": "success"])
            return try await signIns.conclude(admitted, method: "passkey", now: now)
        case .failure(let error):
            dependencies.metrics.increment(.passkeyRegistrations, ["outcome": "failure"])
            signIns.countFailure(method: "passkey")
            throw error
        }
    }

    // MARK: Second factor

    /// `POST /v1/mfa/passkey/options`: options naming the passkeys of the `mfa_token`'s account.
    ///
    /// - Throws: `not_found` when the account has no passkey; the `mfa_token`'s refusals.
    func secondFactorOptions(mfaToken: String) async throws -> (flowID: String, publicKey: JSONValue) {
        let party = try party()
        let now = dependencies.clock()
        let challenge = SecureRandom.bytes(count: 32)
        let (userID, owned) = try await dependencies.database.read { connection in
            let mfa = try MFAToken.usable(mfaToken, now: now, on: connection)
            return (mfa.userID, try self.passkeys.list(userID: mfa.userID, on: connection))
        }
        guard !owned.isEmpty else { throw AuthError.notFound("the account has no passkey") }
        let flowID = try begin(.secondFactor, challenge, userID: userID, now: now)
        return (flowID, requestOptions(challenge: challenge, party: party, allowing: Self.descriptors(owned)))
    }

    // MARK: Verifying an assertion

    /// Spends the flow, verifies the assertion by the passkey it names, and records the use
    /// (sign count and BS, by compare-and-set), all in the caller's transaction. A refusal is
    /// audited (`passkey.failed` with the reason) before it is returned.
    ///
    /// - Parameters:
    ///   - kind: The flow's kind: a sign-in or a second factor.
    ///   - credential: The `AuthenticationResponseJSON`.
    ///   - use: `sign_in` or `mfa`, in the audit entries.
    ///   - userID: The account the passkey must belong to (a second factor's), if known.
    func verifyAssertion(
        flowID: String, kind: PasskeyCeremony.Kind, credential: JSONValue, use: String, userID: String?, context: RequestContext, now: Date,
        on connection: any SQLConnection
    ) throws -> Result<(Passkey, VerifiedAuthentication), AuthError> {
        var passkey: Passkey?
        func refuse(_ reason: String, _ message: String) throws -> Result<(Passkey, VerifiedAuthentication), AuthError> {
            var details = ["use": use, "reason": reason]
            if let passkey { details["passkey_id"] = passkey.id }
            try dependencies.record(.passkeyFailed, .failure, userID: passkey?.userID ?? userID, context: context, now: now, details: details, on: connection)
            return .failure(.invalidGrant(AuthError.Reason(rawValue: reason), message))
        }
        // A server without an RP ID has made no flow to take.
        guard let ceremony = try take(flowID, kind, at: now, on: connection), userID == nil || ceremony.userID == userID,
            let party = relyingParty()
        else {
            return try refuse("unknown_flow", "no such passkey flow, or it expired or was used")
        }
        let response: AuthenticationResponse
        do throws(WebAuthnError) {
            response = try AuthenticationResponse(json: credential)
        } catch {
            return try refuse(error.reason, error.message)
        }
        passkey = try passkeys.find(credentialID: response.credentialID, on: connection)
        guard let found = passkey, let handle = try passkeys.userHandle(userID: found.userID, on: connection) else {
            return try refuse("unknown_credential", "no account has this passkey")
        }
        // A flow for a named account (or a second factor) accepts only that account's passkeys.
        if ceremony.username != nil || ceremony.kind == .secondFactor {
            guard ceremony.userID == found.userID else { return try refuse("credential_not_allowed", "the credential is not in allowCredentials") }
        }
        var current = found
        while true {
            let verified: VerifiedAuthentication
            do throws(WebAuthnError) {
                verified = try AuthenticationCeremony(
                    challenge: ceremony.challenge, origins: Set(party.origins), rpID: party.id, userVerification: userVerification
                ).verify(
                    response,
                    credential: StoredCredential(credentialID: current.credentialID, publicKey: current.publicKey, signCount: current.signCount, userHandle: handle))
            } catch {
                return try refuse(error.reason, error.message)
            }
            if try passkeys.recordUse(
                id: current.id, verifiedAgainst: current.signCount, signCount: verified.signCount, backedUp: verified.backedUp, at: now,
                on: connection)
            {
                var details = ["use": use, "passkey_id": current.id, "backed_up": verified.backedUp ? "true" : "false"]
                if verified.backupEligible != current.backupEligible { details["backup_eligible_changed"] = "true" }
                try dependencies.record(.passkeyUsed, .success, userID: current.userID, context: context, now: now, details: details, on: connection)
                return .success((current, verified))
            }
            // Another use moved the counter since it was read: check this one against the new value.
            guard let moved = try passkeys.find(credentialID: current.credentialID, on: connection) else {
                return try refuse("unknown_credential", "no account has this passkey")
            }
            current = moved
        }
    }
}
