import FoundationEssentials
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyStore
import LatchkeyWebAuthn

/// Passkeys: registration for a signed-in account (WebAuthn §7.1), list, rename, delete; sign-in,
/// sign-up and the second factor are in PasskeySignIn.swift (docs/reference.md, "Passkeys";
/// docs/security.md S34).
///
/// A registration flow is used once: its ceremony is taken by a compare-and-set before the
/// answer is verified, and a refusal is committed with that take and its audit entry, so a
/// challenge is never checked twice.
package final class PasskeyService: Sendable {
    let dependencies: Dependencies
    /// Whose recent sign-in removing a passkey needs.
    let sessions: SessionService
    let signIns: SignInPipeline
    let configuration: Configuration.Passkeys
    /// The relying party for the public URL the server runs at (known once bound).
    let relyingParty: @Sendable () -> Configuration.RelyingParty?

    let passkeys = PasskeyRepository()
    let ceremonies = PasskeyCeremonyRepository()
    let users: UserRepository
    let passwords = PasswordCredentialRepository()
    /// Seals each ceremony into its `flow_id`.
    let masterKey: MasterKey
    /// The key of the stand-in credentials named for unknown usernames.
    let decoyKey: [UInt8]

    /// The longest name an account holder may give a passkey, in characters.
    static let maxNameLength = 100

    init(
        dependencies: Dependencies, sessions: SessionService, signIns: SignInPipeline, masterKey: MasterKey, configuration: Configuration,
        publicURL: @escaping @Sendable () -> String
    ) {
        self.dependencies = dependencies
        self.sessions = sessions
        self.signIns = signIns
        self.masterKey = masterKey
        self.decoyKey = masterKey.derivedKey(label: "passkey stand-in credentials")
        self.configuration = configuration.passkeys
        self.relyingParty = { configuration.relyingParty(publicURL: publicURL()) }
        self.users = UserRepository(database: dependencies.database)
    }

    var userVerification: WebAuthn.UserVerification { configuration.userVerification == "preferred" ? .preferred : .required }

    func party() throws -> Configuration.RelyingParty {
        guard let party = relyingParty() else { throw AuthError.notFound("passkeys are not available on this server: it has no RP ID (set passkeys.rp_id to its domain)") }
        return party
    }

    /// `POST /v1/passkeys/registration/options`: a registration flow for the account, and its
    /// `PublicKeyCredentialCreationOptionsJSON`.
    ///
    /// - Parameter conditional: iOS 18's automatic passkey upgrade after a password sign-in: the
    ///   answer may then carry neither user presence nor user verification, and only this flow
    ///   accepts that.
    func registrationOptions(for principal: Principal, conditional: Bool = false) async throws -> (flowID: String, publicKey: JSONValue) {
        let party = try party()
        let now = dependencies.clock()
        let challenge = SecureRandom.bytes(count: 32)
        let (user, handle, existing, username) = try await dependencies.database.write { connection in
            guard let user = try self.users.find(principal.userID, on: connection) else { throw AuthError.invalidToken("the account is gone") }
            // Given once: a concurrent request that gave one first wins, and both use it.
            guard let handle = try self.passkeys.userHandle(userID: user.id, on: connection)
                ?? self.passkeys.assignUserHandle(SecureRandom.bytes(count: 64), userID: user.id, on: connection)
            else { throw AuthError.invalidToken("the account is gone") }
            let existing = try self.passkeys.list(userID: user.id, on: connection)
            let username = try self.passwords.find(userID: user.id, on: connection)?.username
            return (user, handle, existing, username)
        }
        let flowID = try begin(.registration, challenge, userID: user.id, userHandle: handle, conditional: conditional, now: now)
        let name = username ?? user.email ?? user.id
        let displayName = [user.givenName, user.familyName].compactMap { $0 }.joined(separator: " ")
        let publicKey = creationOptions(
            challenge: challenge, party: party, userHandle: handle, name: name, displayName: displayName.isEmpty ? name : displayName,
            excluding: existing)
        return (flowID, publicKey)
    }

    /// The `flow_id` of a new ceremony of `kind`, which expires after `lifetime` (by default the
    /// configured timeout). Nothing is written.
    func begin(
        _ kind: PasskeyCeremony.Kind, _ challenge: [UInt8], userID: String? = nil, userHandle: [UInt8]? = nil, username: String? = nil,
        givenName: String? = nil, familyName: String? = nil, conditional: Bool = false, lifetime: TimeInterval? = nil, now: Date
    ) throws -> String {
        try PasskeyCeremony(
            id: Identifiers.make("pkc"), kind: kind, challenge: challenge, userID: userID, userHandle: userHandle, username: username,
            givenName: givenName, familyName: familyName, conditional: conditional, createdAt: now,
            expiresAt: now.addingTimeInterval(lifetime ?? TimeInterval(configuration.timeout))
        ).flowID(sealedWith: masterKey)
    }

    /// Compare-and-set: opens `flowID` and spends it, if it is a ceremony of `kind` this server
    /// gave, unexpired and unspent.
    ///
    /// - Returns: The ceremony; nil for a forged, foreign, expired or spent flow, or one of
    ///   another kind.
    func take(_ flowID: String, _ kind: PasskeyCeremony.Kind, at now: Date, on connection: any SQLConnection) throws -> PasskeyCeremony? {
        guard let ceremony = PasskeyCeremony(flowID: flowID, masterKey: masterKey), ceremony.kind == kind, now < ceremony.expiresAt,
            try ceremonies.spend(ceremony, at: now, on: connection)
        else { return nil }
        return ceremony
    }

    /// `PublicKeyCredentialCreationOptionsJSON` for a resident key of `userHandle`.
    func creationOptions(
        challenge: [UInt8], party: Configuration.RelyingParty, userHandle: [UInt8], name: String, displayName: String, excluding existing: [Passkey]
    ) -> JSONValue {
        [
            "challenge": .string(Base64URL.encode(challenge)),
            "rp": ["id": .string(party.id), "name": .string(party.name)],
            "user": ["id": .string(Base64URL.encode(userHandle)), "name": .string(name), "displayName": .string(displayName)],
            "pubKeyCredParams": .array(COSEAlgorithm.supported.map { ["type": "public-key", "alg": .number(Double($0.rawValue))] }),
            "authenticatorSelection": ["residentKey": "required", "requireResidentKey": true, "userVerification": .string(configuration.userVerification)],
            "excludeCredentials": Self.descriptors(existing),
            "attestation": .string(configuration.attestation),
            "hints": ["client-device"],
            "timeout": .number(Double(configuration.timeout * 1000)),
        ]
    }

    /// `PublicKeyCredentialRequestOptionsJSON`: `allowCredentials` empty for a discoverable
    /// sign-in.
    func requestOptions(challenge: [UInt8], party: Configuration.RelyingParty, allowing descriptors: JSONValue) -> JSONValue {
        [
            "challenge": .string(Base64URL.encode(challenge)),
            "rpId": .string(party.id),
            "allowCredentials": descriptors,
            "userVerification": .string(configuration.userVerification),
            "hints": ["client-device"],
            "timeout": .number(Double(configuration.timeout * 1000)),
        ]
    }

    /// `PublicKeyCredentialDescriptorJSON`s of passkeys, with their transports.
    static func descriptors(_ passkeys: [Passkey]) -> JSONValue {
        .array(passkeys.map { passkey in
            var descriptor: [String: JSONValue] = ["type": "public-key", "id": .string(Base64URL.encode(passkey.credentialID))]
            if !passkey.transports.isEmpty { descriptor["transports"] = .array(passkey.transports.map(JSONValue.string)) }
            return .object(descriptor)
        })
    }

    /// `POST /v1/passkeys`: verifies the answer to a registration flow of this account and
    /// stores the passkey.
    ///
    /// - Throws: `invalid_grant` with the failed check's reason (the flow is spent, the refusal
    ///   audited, nothing stored); `conflict` when the credential is registered already.
    func register(
        for principal: Principal, flowID: String, credential: JSONValue, name: String?, context: RequestContext
    ) async throws -> Passkey {
        let party = try party()
        let now = dependencies.clock()
        let userVerification = userVerification
        let attestation = configuration.attestationPolicy(at: now)
        let transports = Self.transports(credential)
        let outcome = try await dependencies.database.write { connection -> Result<Passkey, AuthError> in
            let refuse = { (error: AuthError, reason: String) throws -> Result<Passkey, AuthError> in
                try self.dependencies.record(
                    .passkeyRegistrationFailed, .failure, userID: principal.userID, context: context, now: now, details: ["reason": reason],
                    on: connection)
                return .failure(error)
            }
            guard let ceremony = try self.take(flowID, .registration, at: now, on: connection),
                ceremony.userID == principal.userID
            else {
                return try refuse(.invalidGrant(AuthError.Reason(rawValue: "unknown_flow"), "no such registration flow, or it expired or was used"), "unknown_flow")
            }
            let verified: VerifiedRegistration
            do throws(WebAuthnError) {
                let response = try RegistrationResponse(json: credential)
                verified = try RegistrationCeremony(
                    challenge: ceremony.challenge, origins: Set(party.origins), rpID: party.id, userVerification: userVerification,
                    algorithms: COSEAlgorithm.supported, attestation: attestation, conditional: ceremony.conditional
                ).verify(response)
            } catch {
                return try refuse(.invalidGrant(AuthError.Reason(rawValue: error.reason), error.message), error.reason)
            }
            if try self.passkeys.find(credentialID: verified.credentialID, on: connection) != nil {
                return try refuse(.conflict("this passkey is registered already"), "credential_exists")
            }
            return .success(
                try self.store(
                    verified, userID: principal.userID, name: name, transports: transports, event: .passkeyRegistered, context: context, now: now,
                    on: connection))
        }
        let succeeded = if case .success = outcome { true } else { false }
        dependencies.metrics.increment(.passkeyRegistrations, ["outcome": succeeded ? "success" : "failure"])
        return try outcome.get()
    }

    /// Stores a verified registration as a passkey of `userID`, audited as `event`; named `name`,
    /// else after its authenticator (``KnownAuthenticators``).
    func store(
        _ verified: VerifiedRegistration, userID: String, name: String?, transports: [String], event: AuditEvent, context: RequestContext,
        now: Date, on connection: any SQLConnection
    ) throws -> Passkey {
        let passkey = Passkey(
            id: Identifiers.make("pk"), userID: userID, credentialID: verified.credentialID, publicKey: verified.publicKey,
            algorithm: Int(verified.algorithm.rawValue), signCount: verified.signCount, backupEligible: verified.backupEligible,
            backedUp: verified.backedUp, transports: transports, aaguid: verified.aaguid, attestation: verified.attestationType.storedValue,
            name: KnownAuthenticators.defaultName(given: name, aaguid: verified.aaguid), createdAt: now, lastUsedAt: nil)
        try passkeys.insert(passkey, on: connection)
        try dependencies.record(
            event, .success, userID: userID, context: context, now: now,
            details: [
                "passkey_id": passkey.id, "aaguid": Self.uuid(passkey.aaguid), "backed_up": passkey.backedUp ? "true" : "false",
                "attestation": passkey.attestation, "attestation_format": verified.attestationFormat.rawValue,
            ],
            on: connection)
        return passkey
    }

    /// The account's passkeys, oldest first.
    func list(userID: String) async throws -> [Passkey] {
        try await dependencies.database.read { try self.passkeys.list(userID: userID, on: $0) }
    }

    /// `PATCH /v1/passkeys/{id}`.
    func rename(_ id: String, to name: String, principal: Principal, context: RequestContext) async throws -> Passkey {
        let now = dependencies.clock()
        return try await dependencies.database.write { connection in
            guard try self.passkeys.rename(id: id, userID: principal.userID, to: name, on: connection),
                let passkey = try self.passkeys.list(userID: principal.userID, on: connection).first(where: { $0.id == id })
            else { throw AuthError.notFound("no such passkey") }
            try self.dependencies.record(
                .passkeyRenamed, .success, userID: principal.userID, context: context, now: now, details: ["passkey_id": id], on: connection)
            return passkey
        }
    }

    /// `DELETE /v1/passkeys/{id}`.
    ///
    /// - Throws: `insufficient_authentication` unless the session signed in or proved a second
    ///   factor in the last five minutes; `conflict` when it is the account's last way to sign
    ///   in: no password, no Apple identity, no other passkey.
    func delete(_ id: String, principal: Principal, context: RequestContext) async throws {
        let now = dependencies.clock()
        try await dependencies.database.write { connection in
            let userID = principal.userID
            guard try self.passkeys.list(userID: userID, on: connection).contains(where: { $0.id == id }) else {
                throw AuthError.notFound("no such passkey")
            }
            try self.sessions.requireFreshSignIn(principal, now: now, on: connection)
            let others = try self.passkeys.count(userID: userID, on: connection) - 1
            let password = try self.passwords.find(userID: userID, on: connection) != nil
            let identities = try self.passkeys.identityCount(userID: userID, on: connection)
            guard others > 0 || password || identities > 0 else {
                throw AuthError.conflict("this passkey is the account's last way to sign in; add a password or another passkey first")
            }
            guard try self.passkeys.delete(id: id, userID: userID, on: connection) else { throw AuthError.notFound("no such passkey") }
            try self.dependencies.record(
                .passkeyRemoved, .success, userID: userID, context: context, now: now, details: ["passkey_id": id], on: connection)
        }
    }

    /// `response.transports` of a `RegistrationResponseJSON`: known names only, at most eight.
    static func transports(_ credential: JSONValue) -> [String] {
        guard case .object(let members) = credential, case .object(let response)? = members["response"],
            case .array(let values)? = response["transports"]
        else { return [] }
        let known: Set<String> = ["ble", "hybrid", "internal", "nfc", "smart-card", "usb"]
        return Array(values.compactMap(\.stringValue).filter { known.contains($0) }.prefix(8))
    }

    /// A 16-byte AAGUID as a lowercase UUID string.
    static func uuid(_ bytes: [UInt8]) -> String {
        let hex = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        guard hex.count == 32 else { return hex }
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }
}
