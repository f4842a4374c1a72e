import LatchkeyCrypto
import LatchkeyJSON
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// Every check of the registration and authentication ceremonies, each refused by its own
/// hostile variant made with the software authenticator.
@Suite("WebAuthn ceremonies: every check refused with its reason")
struct CeremonyTests {
    typealias Authenticator = SoftwareAuthenticator
    let challenge = SecureRandom.bytes(count: 32)

    func registration(
        userVerification: WebAuthn.UserVerification = .required, algorithms: [COSEAlgorithm] = COSEAlgorithm.supported,
        attestation: AttestationPolicy = .none, conditional: Bool = false
    ) -> RegistrationCeremony {
        RegistrationCeremony(
            challenge: challenge, origins: [Authenticator.origin, "https://other.example.com"], rpID: Authenticator.rpID,
            userVerification: userVerification, algorithms: algorithms, attestation: attestation, conditional: conditional)
    }

    func authentication(userVerification: WebAuthn.UserVerification = .required, allowed: [[UInt8]] = []) -> AuthenticationCeremony {
        AuthenticationCeremony(
            challenge: challenge, origins: [Authenticator.origin], rpID: Authenticator.rpID, userVerification: userVerification,
            allowedCredentialIDs: allowed)
    }

    static let direct = AttestationPolicy.direct(AttestationTrust(roots: [:]))

    func expect(_ reason: WebAuthnError.Code, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("accepted; expected \(reason)", sourceLocation: sourceLocation)
        } catch let error as WebAuthnError {
            #expect(error.code == reason, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Round trips

    @Test("ES256, EdDSA and RS256 credentials register (none and packed self) and sign in", arguments: ["ES256", "EdDSA", "RS256"])
    func roundTrip(algorithm: String) throws {
        let authenticator = switch algorithm {
        case "ES256": Authenticator.es256()
        case "EdDSA": try Authenticator.edDSA()
        default: try Authenticator.rs256()
        }
        for (statement, policy, type) in [
            (Authenticator.Statement.none, AttestationPolicy.none, AttestationType.none),
            (.none, Self.direct, .none), (.packedSelf, Self.direct, .selfAttestation), (.packedSelf, .none, .none),
        ] {
            let flags = Authenticator.up | Authenticator.uv | Authenticator.at | Authenticator.be
            let response = try authenticator.registration(challenge: challenge, flags: flags, signCount: 3, statement: statement)
            let verified = try registration(attestation: policy).verify(response)
            #expect(verified.credentialID == authenticator.credentialID)
            #expect(verified.publicKey == CBOREncoder.encode(authenticator.coseKey))
            #expect(verified.algorithm == authenticator.algorithm)
            #expect(verified.signCount == 3)
            #expect(verified.userVerified && verified.backupEligible && !verified.backedUp)
            #expect(verified.aaguid == authenticator.aaguid)
            #expect(verified.attestationType == type)
        }
        let assertion = try authenticator.assertion(challenge: challenge, flags: Authenticator.up | Authenticator.uv | Authenticator.be | Authenticator.bs, signCount: 4)
        let verified = try authentication(allowed: [authenticator.credentialID]).verify(assertion, credential: authenticator.stored(signCount: 3))
        #expect(verified.signCount == 4)
        #expect(verified.userVerified && verified.backupEligible && verified.backedUp)
        #expect(verified.credentialID == authenticator.credentialID)
    }

    // MARK: - Registration

    @Test("registration: client data checks")
    func registrationClientData() throws {
        let authenticator = Authenticator.es256()
        let ceremony = registration()
        expect(.typeMismatch) { _ = try ceremony.verify(try authenticator.registration(challenge: challenge, type: "webauthn.get")) }
        expect(.challengeMismatch) { _ = try ceremony.verify(try authenticator.registration(challenge: SecureRandom.bytes(count: 32))) }
        expect(.challengeMismatch) { _ = try ceremony.verify(try authenticator.registration(challenge: Array(challenge.dropLast()))) }
        expect(.originMismatch) { _ = try ceremony.verify(try authenticator.registration(challenge: challenge, origin: "https://evil.example")) }
        expect(.originMismatch) { _ = try ceremony.verify(try authenticator.registration(challenge: challenge, origin: "https://example.com:443")) }
        expect(.originMismatch) { _ = try ceremony.verify(try authenticator.registration(challenge: challenge, origin: "http://example.com")) }
        expect(.crossOrigin) { _ = try ceremony.verify(try authenticator.registration(challenge: challenge, clientDataExtra: ",\"crossOrigin\":true")) }
        expect(.crossOrigin) {
            _ = try ceremony.verify(try authenticator.registration(challenge: challenge, clientDataExtra: ",\"topOrigin\":\"https://example.com\""))
        }
        expect(.malformed) { _ = try ceremony.verify(try authenticator.registration(challenge: challenge, clientDataExtra: ",\"crossOrigin\":\"no\"")) }
        expect(.malformed) { _ = try ceremony.verify(try authenticator.registration(challenge: challenge, clientDataExtra: ",\"type\":\"webauthn.create\"")) }
        var response = try authenticator.registration(challenge: challenge)
        response.clientDataJSON = Array("not json".utf8)
        expect(.malformed) { _ = try ceremony.verify(response) }
        // Another allowed origin is fine; unknown members (tokenBinding, dropped in Level 3) are ignored.
        _ = try ceremony.verify(try authenticator.registration(challenge: challenge, origin: "https://other.example.com"))
        _ = try ceremony.verify(try authenticator.registration(challenge: challenge, clientDataExtra: ",\"tokenBinding\":{\"status\":\"present\"}"))
    }

    @Test("registration: authenticator data checks")
    func registrationAuthenticatorData() throws {
        let authenticator = Authenticator.es256()
        let (up, uv, at, be, bs) = (Authenticator.up, Authenticator.uv, Authenticator.at, Authenticator.be, Authenticator.bs)
        expect(.rpIDMismatch) { _ = try registration().verify(try authenticator.registration(challenge: challenge, rpID: "evil.example")) }
        expect(.userNotPresent) { _ = try registration().verify(try authenticator.registration(challenge: challenge, flags: uv | at)) }
        expect(.userNotVerified) { _ = try registration().verify(try authenticator.registration(challenge: challenge, flags: up | at)) }
        _ = try registration(userVerification: .preferred).verify(try authenticator.registration(challenge: challenge, flags: up | at))
        expect(.invalidBackupState) { _ = try registration().verify(try authenticator.registration(challenge: challenge, flags: up | uv | at | bs)) }
        _ = try registration().verify(try authenticator.registration(challenge: challenge, flags: up | uv | at | be | bs))
        expect(.missingCredentialData) { _ = try registration().verify(try authenticator.registration(challenge: challenge, flags: up | uv)) }
        // Trailing bytes after the key without ED, and ED without extensions.
        let attested = authenticator.attestedCredentialData()
        let trailing = Authenticator.authenticatorData(flags: up | uv | at, signCount: 0, attested: attested, extensions: [0xA0])
        expect(.malformed) { _ = try registration().verify(try authenticator.registration(challenge: challenge, authenticatorData: trailing)) }
        let noExtensions = Authenticator.authenticatorData(flags: up | uv | at | Authenticator.ed, signCount: 0, attested: attested)
        expect(.malformed) { _ = try registration().verify(try authenticator.registration(challenge: challenge, authenticatorData: noExtensions)) }
        // Extension data is parsed and ignored.
        let extensions = CBOREncoder.encode(.map([CBORMapEntry(.text("credProtect"), .unsigned(2))]))
        let withExtensions = Authenticator.authenticatorData(flags: up | uv | at | Authenticator.ed, signCount: 0, attested: attested, extensions: extensions)
        _ = try registration().verify(try authenticator.registration(challenge: challenge, authenticatorData: withExtensions))
        let badExtensions = Authenticator.authenticatorData(flags: up | uv | at | Authenticator.ed, signCount: 0, attested: attested, extensions: [0xA1, 0x01])
        expect(.malformed) { _ = try registration().verify(try authenticator.registration(challenge: challenge, authenticatorData: badExtensions)) }
        expect(.malformed) {
            _ = try registration().verify(try authenticator.registration(challenge: challenge, authenticatorData: Array(trailing.prefix(36))))
        }
    }

    @Test("conditional registration: UP and UV may be clear only on a flow that asked for it")
    func conditional() throws {
        let authenticator = Authenticator.es256()
        let response = try authenticator.registration(challenge: challenge, flags: Authenticator.at)
        let verified = try registration(conditional: true).verify(response)
        #expect(!verified.userVerified)
        expect(.userNotPresent) { _ = try registration().verify(response) }
        expect(.userNotPresent) { _ = try registration(userVerification: .preferred).verify(response) }
    }

    @Test("registration: credential id and public key checks")
    func registrationCredential() throws {
        var authenticator = Authenticator.es256()
        expect(.invalidCredentialID) {
            _ = try registration().verify(try authenticator.registration(challenge: challenge, responseCredentialID: SecureRandom.bytes(count: 32)))
        }
        authenticator.credentialID = SecureRandom.bytes(count: 1023)
        _ = try registration().verify(try authenticator.registration(challenge: challenge))
        authenticator.credentialID = SecureRandom.bytes(count: 1024)
        expect(.invalidCredentialID) { _ = try registration().verify(try authenticator.registration(challenge: challenge)) }
        authenticator.credentialID = SecureRandom.bytes(count: 16)

        expect(.unsupportedAlgorithm) { _ = try registration(algorithms: [.edDSA, .rs256]).verify(try authenticator.registration(challenge: challenge)) }
        func register(coseKey: CBORValue) throws {
            let data = Authenticator.authenticatorData(
                flags: Authenticator.up | Authenticator.uv | Authenticator.at, signCount: 0,
                attested: authenticator.attestedCredentialData(coseKey: CBOREncoder.encode(coseKey)))
            _ = try registration().verify(try authenticator.registration(challenge: challenge, authenticatorData: data))
        }
        guard case .map(let entries) = authenticator.coseKey else { return }
        func replacing(_ label: Int64, with value: CBORValue?) -> CBORValue {
            var copy = entries.filter { $0.key != .integer(label) }
            if let value { copy.append(CBORMapEntry(.integer(label), value)) }
            return .map(copy)
        }
        expect(.unsupportedAlgorithm) { try register(coseKey: replacing(-1, with: .integer(2))) }  // P-384 curve
        expect(.unsupportedAlgorithm) { try register(coseKey: replacing(3, with: .integer(-35))) }  // ES384
        expect(.unsupportedAlgorithm) { try register(coseKey: replacing(3, with: .integer(-8))) }  // EdDSA on an EC2 key
        expect(.unsupportedAlgorithm) { try register(coseKey: replacing(1, with: .integer(4))) }  // symmetric kty
        expect(.malformed) { try register(coseKey: replacing(3, with: nil)) }
        expect(.malformed) { try register(coseKey: replacing(-3, with: .bool(true))) }  // compressed point
        expect(.malformed) { try register(coseKey: replacing(-2, with: .bytes(Array(repeating: 1, count: 31)))) }
        var offCurve = authenticator.coseKey[label: -3]!.bytesValue!
        offCurve[31] ^= 1
        expect(.invalidPublicKey) { try register(coseKey: replacing(-3, with: .bytes(offCurve))) }
        expect(.invalidPublicKey) { try register(coseKey: replacing(-4, with: .bytes(SecureRandom.bytes(count: 32)))) }
        expect(.malformed) { try register(coseKey: .array([])) }

        // An RSA key below 2048 bits, and a 2048-bit one with an even modulus.
        let small = CBORValue.map([
            CBORMapEntry(.integer(1), .integer(3)), CBORMapEntry(.integer(3), .integer(-257)),
            CBORMapEntry(.integer(-1), .bytes([0xC1] + SecureRandom.bytes(count: 126) + [0x01])), CBORMapEntry(.integer(-2), .bytes([1, 0, 1])),
        ])
        expect(.unsupportedAlgorithm) { try register(coseKey: small) }
        let even = CBORValue.map([
            CBORMapEntry(.integer(1), .integer(3)), CBORMapEntry(.integer(3), .integer(-257)),
            CBORMapEntry(.integer(-1), .bytes([0xC1] + SecureRandom.bytes(count: 254) + [0x02])), CBORMapEntry(.integer(-2), .bytes([1, 0, 1])),
        ])
        expect(.invalidPublicKey) { try register(coseKey: even) }
        // An Ed25519 key with a wrong curve.
        let okp = CBORValue.map([
            CBORMapEntry(.integer(1), .integer(1)), CBORMapEntry(.integer(3), .integer(-8)),
            CBORMapEntry(.integer(-1), .integer(4)), CBORMapEntry(.integer(-2), .bytes(SecureRandom.bytes(count: 32))),
        ])
        expect(.unsupportedAlgorithm) { try register(coseKey: okp) }  // X25519 is not a signature curve
    }

    @Test("registration: attestation statements under the direct policy")
    func attestation() throws {
        let authenticator = Authenticator.es256()
        let other = Authenticator.es256()
        let direct = registration(attestation: Self.direct)
        // Policy none accepts any statement as none; direct refuses what it cannot verify.
        let unknown = try authenticator.registration(challenge: challenge, statement: .custom("tpm", .map([])))
        #expect(try registration().verify(unknown).attestationType == .none)
        #expect(try registration().verify(unknown).attestationFormat == AttestationFormat(rawValue: "tpm"))
        expect(.unsupportedAttestation) { _ = try direct.verify(unknown) }
        expect(.invalidAttestation) {
            _ = try direct.verify(try authenticator.registration(challenge: challenge, statement: .custom("none", .map([CBORMapEntry(.text("x"), .null)]))))
        }
        // Packed self attestation signed by another key, or naming another algorithm.
        let forged = try other.sign(Array("anything".utf8))
        let badSelf = CBORValue.map([CBORMapEntry(.text("alg"), .integer(-7)), CBORMapEntry(.text("sig"), .bytes(forged))])
        expect(.invalidAttestation) { _ = try direct.verify(try authenticator.registration(challenge: challenge, statement: .custom("packed", badSelf))) }
        let response = try authenticator.registration(challenge: challenge, statement: .packedSelf)
        let object = try CBORDecoder.decode(response.attestationObject)
        let signature = object["attStmt"]!["sig"]!
        let wrongAlg = CBORValue.map([CBORMapEntry(.text("alg"), .integer(-257)), CBORMapEntry(.text("sig"), signature)])
        expect(.invalidAttestation) { _ = try direct.verify(try authenticator.registration(challenge: challenge, statement: .custom("packed", wrongAlg))) }
        expect(.invalidAttestation) {
            _ = try direct.verify(try authenticator.registration(challenge: challenge, statement: .custom("packed", .map([CBORMapEntry(.text("alg"), .integer(-7))]))))
        }
        // An x5c entry that is not a certificate; a fido-u2f or apple statement without one.
        let junk = CBORValue.map([
            CBORMapEntry(.text("alg"), .integer(-7)), CBORMapEntry(.text("sig"), signature), CBORMapEntry(.text("x5c"), .array([.bytes([0x30, 0x00])])),
        ])
        expect(.invalidAttestation) { _ = try direct.verify(try authenticator.registration(challenge: challenge, statement: .custom("packed", junk))) }
        expect(.invalidAttestation) { _ = try direct.verify(try authenticator.registration(challenge: challenge, statement: .custom("fido-u2f", .map([])))) }
        expect(.invalidAttestation) { _ = try direct.verify(try authenticator.registration(challenge: challenge, statement: .custom("apple", .map([])))) }
        // The attestation object itself: extra members, wrong types, not CBOR.
        var extra = response
        extra.attestationObject = CBOREncoder.encode(.map((object.mapValue ?? []) + [CBORMapEntry(.text("epAtt"), .bool(true))]))
        expect(.malformed) { _ = try registration().verify(extra) }
        var truncated = response
        truncated.attestationObject.removeLast()
        expect(.malformed) { _ = try registration().verify(truncated) }
    }

    @Test("a stored COSE key must be exactly one map; client data over 16 KiB is refused")
    func storedKeyAndSizes() throws {
        let authenticator = Authenticator.es256()
        var stored = authenticator.stored()
        stored.publicKey += [0x00]
        expect(.malformed) { _ = try authentication().verify(try authenticator.assertion(challenge: challenge), credential: stored) }
        let padding = ",\"pad\":\"" + String(repeating: "x", count: 16 * 1024) + "\""
        expect(.malformed) { _ = try registration().verify(try authenticator.registration(challenge: challenge, clientDataExtra: padding)) }
    }

    // MARK: - Authentication

    @Test("authentication: credential and user handle checks")
    func authenticationCredential() throws {
        let authenticator = Authenticator.es256()
        let stored = authenticator.stored()
        expect(.credentialNotAllowed) {
            _ = try authentication(allowed: [SecureRandom.bytes(count: 32)]).verify(try authenticator.assertion(challenge: challenge), credential: stored)
        }
        var otherStored = stored
        otherStored.credentialID = SecureRandom.bytes(count: 32)
        expect(.credentialNotAllowed) { _ = try authentication().verify(try authenticator.assertion(challenge: challenge), credential: otherStored) }
        expect(.userHandleMismatch) {
            _ = try authentication().verify(try authenticator.assertion(challenge: challenge, userHandle: .some(SecureRandom.bytes(count: 64))), credential: stored)
        }
        // Discoverable sign-in needs the user handle; with allowCredentials it may be absent.
        expect(.userHandleMismatch) { _ = try authentication().verify(try authenticator.assertion(challenge: challenge, userHandle: .some(nil)), credential: stored) }
        _ = try authentication(allowed: [authenticator.credentialID]).verify(try authenticator.assertion(challenge: challenge, userHandle: .some(nil)), credential: stored)
    }

    @Test("authentication: client data and authenticator data checks")
    func authenticationData() throws {
        let authenticator = try Authenticator.edDSA()
        let stored = authenticator.stored()
        let ceremony = authentication()
        let (up, uv, be, bs) = (Authenticator.up, Authenticator.uv, Authenticator.be, Authenticator.bs)
        expect(.typeMismatch) { _ = try ceremony.verify(try authenticator.assertion(challenge: challenge, type: "webauthn.create"), credential: stored) }
        expect(.challengeMismatch) { _ = try ceremony.verify(try authenticator.assertion(challenge: SecureRandom.bytes(count: 32)), credential: stored) }
        expect(.originMismatch) { _ = try ceremony.verify(try authenticator.assertion(challenge: challenge, origin: "https://example.com.evil"), credential: stored) }
        expect(.crossOrigin) { _ = try ceremony.verify(try authenticator.assertion(challenge: challenge, clientDataExtra: ",\"crossOrigin\":true"), credential: stored) }
        expect(.crossOrigin) {
            _ = try ceremony.verify(try authenticator.assertion(challenge: challenge, clientDataExtra: ",\"topOrigin\":\"https://evil.example\""), credential: stored)
        }
        expect(.rpIDMismatch) { _ = try ceremony.verify(try authenticator.assertion(challenge: challenge, rpID: "sub.example.com"), credential: stored) }
        expect(.userNotPresent) { _ = try ceremony.verify(try authenticator.assertion(challenge: challenge, flags: uv), credential: stored) }
        expect(.userNotPresent) { _ = try authentication(userVerification: .preferred).verify(try authenticator.assertion(challenge: challenge, flags: 0), credential: stored) }
        expect(.userNotVerified) { _ = try ceremony.verify(try authenticator.assertion(challenge: challenge, flags: up), credential: stored) }
        #expect(try !authentication(userVerification: .preferred).verify(try authenticator.assertion(challenge: challenge, flags: up), credential: stored).userVerified)
        expect(.invalidBackupState) { _ = try ceremony.verify(try authenticator.assertion(challenge: challenge, flags: up | uv | bs), credential: stored) }
        // BE may change after registration (iCloud Keychain): recorded, not refused.
        #expect(try ceremony.verify(try authenticator.assertion(challenge: challenge, flags: up | uv | be), credential: stored).backupEligible)
        expect(.malformed) {
            _ = try ceremony.verify(try authenticator.assertion(challenge: challenge, authenticatorData: Array(repeating: 0, count: 36)), credential: stored)
        }
        let trailing = Authenticator.authenticatorData(flags: up | uv, signCount: 0) + [0]
        expect(.malformed) { _ = try ceremony.verify(try authenticator.assertion(challenge: challenge, authenticatorData: trailing), credential: stored) }
    }

    @Test("authentication: the signature verifies for each algorithm, and nothing else does", arguments: ["ES256", "EdDSA", "RS256"])
    func signature(algorithm: String) throws {
        let authenticator = switch algorithm {
        case "ES256": Authenticator.es256()
        case "EdDSA": try Authenticator.edDSA()
        default: try Authenticator.rs256()
        }
        let stored = authenticator.stored()
        let ceremony = authentication()
        _ = try ceremony.verify(try authenticator.assertion(challenge: challenge), credential: stored)
        expect(.badSignature) { _ = try ceremony.verify(try authenticator.assertion(challenge: challenge, signedData: { $0 + [0] }), credential: stored) }
        expect(.badSignature) { _ = try ceremony.verify(try authenticator.assertion(challenge: challenge, signedData: { Array($0.dropLast(32)) }), credential: stored) }
        var flipped = try authenticator.assertion(challenge: challenge)
        flipped.signature[flipped.signature.count / 2] ^= 0x01
        expect(.badSignature) { _ = try ceremony.verify(flipped, credential: stored) }
        var truncated = try authenticator.assertion(challenge: challenge)
        truncated.signature.removeLast()
        expect(.badSignature) { _ = try ceremony.verify(truncated, credential: stored) }
        var empty = try authenticator.assertion(challenge: challenge)
        empty.signature = []
        expect(.badSignature) { _ = try ceremony.verify(empty, credential: stored) }
        // Another credential's key.
        var other = stored
        other.publicKey = CBOREncoder.encode(Authenticator.es256().coseKey)
        expect(.badSignature) { _ = try ceremony.verify(try authenticator.assertion(challenge: challenge), credential: other) }
        if algorithm == "ES256" {
            // WebAuthn's ES256 signatures are DER; raw r‖s is refused.
            var raw = try authenticator.assertion(challenge: challenge)
            raw.signature = try P256.Signing.ECDSASignature(derRepresentation: raw.signature).rawRepresentation
            expect(.badSignature) { _ = try ceremony.verify(raw, credential: stored) }
        }
    }

    @Test("authentication: sign counts: a regression is a cloned authenticator, zero always passes")
    func signCounts() throws {
        let authenticator = Authenticator.es256()
        let ceremony = authentication()
        expect(.clonedAuthenticator) { _ = try ceremony.verify(try authenticator.assertion(challenge: challenge, signCount: 5), credential: authenticator.stored(signCount: 5)) }
        expect(.clonedAuthenticator) { _ = try ceremony.verify(try authenticator.assertion(challenge: challenge, signCount: 4), credential: authenticator.stored(signCount: 5)) }
        #expect(try ceremony.verify(try authenticator.assertion(challenge: challenge, signCount: 6), credential: authenticator.stored(signCount: 5)).signCount == 6)
        #expect(try ceremony.verify(try authenticator.assertion(challenge: challenge, signCount: 0), credential: authenticator.stored(signCount: 5)).signCount == 0)
        #expect(try ceremony.verify(try authenticator.assertion(challenge: challenge, signCount: 0), credential: authenticator.stored(signCount: 0)).signCount == 0)
        #expect(try ceremony.verify(try authenticator.assertion(challenge: challenge, signCount: 1), credential: authenticator.stored(signCount: 0)).signCount == 1)
        #expect(try ceremony.verify(try authenticator.assertion(challenge: challenge, signCount: .max), credential: authenticator.stored(signCount: .max - 1)).signCount == .max)
        // A forged count with a bad signature is a bad signature, not a clone signal.
        expect(.badSignature) {
            _ = try ceremony.verify(
                try authenticator.assertion(challenge: challenge, signCount: 1, signedData: { $0 + [1] }), credential: authenticator.stored(signCount: 5))
        }
    }
}

/// The `RegistrationResponseJSON` and `AuthenticationResponseJSON` readers.
@Suite("WebAuthn response JSON")
struct ResponseJSONTests {
    static func encoded(_ bytes: [UInt8]) -> JSONValue { .string(Base64.encode(bytes, alphabet: .urlSafe, padded: false)) }

    func registrationJSON(_ response: RegistrationResponse, change: (inout [String: JSONValue]) -> Void = { _ in }) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": Self.encoded(response.credentialID), "rawId": Self.encoded(response.credentialID), "type": "public-key",
            "response": .object([
                "clientDataJSON": Self.encoded(response.clientDataJSON), "attestationObject": Self.encoded(response.attestationObject),
                "transports": ["internal", "hybrid"],
            ]),
            "clientExtensionResults": .object([:]), "authenticatorAttachment": "platform",
        ]
        change(&object)
        return .object(object)
    }

    @Test("RegistrationResponseJSON: the toJSON() form reads; id ≠ rawId, another type, padding or a missing member is malformed")
    func registration() throws {
        let response = try SoftwareAuthenticator.es256().registration(challenge: [1, 2, 3])
        let read = try RegistrationResponse(json: registrationJSON(response))
        #expect(read.credentialID == response.credentialID && read.attestationObject == response.attestationObject)
        #expect(read.clientDataJSON == response.clientDataJSON)
        for change: (inout [String: JSONValue]) -> Void in [
            { $0["id"] = Self.encoded([9]) }, { $0["type"] = "password" }, { $0["rawId"] = nil },
            { $0["rawId"] = .string(Base64.encode(response.credentialID, alphabet: .urlSafe, padded: true)) },
            { $0["response"] = .object(["clientDataJSON": Self.encoded(response.clientDataJSON)]) },
            { $0["response"] = "x" }, { $0["rawId"] = .string("not base64url!") },
        ] {
            #expect(throws: WebAuthnError(.malformed)) { try RegistrationResponse(json: registrationJSON(response, change: change)) }
        }
        #expect(throws: WebAuthnError(.malformed)) { try RegistrationResponse(json: ["id": "a"]) }
        #expect(throws: WebAuthnError(.malformed)) { try RegistrationResponse(json: "a string") }
    }

    @Test("AuthenticationResponseJSON: userHandle may be absent, null or empty (all: none)")
    func authentication() throws {
        let authenticator = SoftwareAuthenticator.es256()
        let response = try authenticator.assertion(challenge: [1, 2, 3])
        func json(userHandle: JSONValue?) -> JSONValue {
            var inner: [String: JSONValue] = [
                "clientDataJSON": Self.encoded(response.clientDataJSON), "authenticatorData": Self.encoded(response.authenticatorData),
                "signature": Self.encoded(response.signature),
            ]
            inner["userHandle"] = userHandle
            return .object([
                "id": Self.encoded(response.credentialID), "rawId": Self.encoded(response.credentialID), "type": "public-key",
                "response": .object(inner),
            ])
        }
        #expect(try AuthenticationResponse(json: json(userHandle: Self.encoded(authenticator.userHandle))).userHandle == authenticator.userHandle)
        #expect(try AuthenticationResponse(json: json(userHandle: nil)).userHandle == nil)
        #expect(try AuthenticationResponse(json: json(userHandle: .null)).userHandle == nil)
        #expect(try AuthenticationResponse(json: json(userHandle: "")).userHandle == nil)
        #expect(throws: WebAuthnError(.malformed)) { try AuthenticationResponse(json: json(userHandle: 5)) }
        let read = try AuthenticationResponse(json: json(userHandle: nil))
        #expect(read.signature == response.signature && read.authenticatorData == response.authenticatorData)
    }
}
