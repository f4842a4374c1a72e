package import LatchkeyCrypto
package import LatchkeyWebAuthn

/// A test-only authenticator: makes registrations and assertions with a real key, and lets a
/// test change any part of them to build the hostile variant of one check. The WebAuthn tests
/// use it against the verifier, the server tests over HTTP.
package struct SoftwareAuthenticator {
    package enum Key {
        case p256(P256.Signing.PrivateKey)
        case ed25519(Ed25519.Signing.PrivateKey)
        case rsa(RSA.Signing.PrivateKey)
    }

    /// Authenticator data flags, as the tests set them.
    package static let up: UInt8 = 0x01
    package static let uv: UInt8 = 0x04
    package static let be: UInt8 = 0x08
    package static let bs: UInt8 = 0x10
    package static let at: UInt8 = 0x40
    package static let ed: UInt8 = 0x80

    package static let rpID = "example.com"
    package static let origin = "https://example.com"

    package let key: Key
    package var credentialID: [UInt8] = SecureRandom.bytes(count: 32)
    package var aaguid: [UInt8] = Array(repeating: 0xA1, count: 16)
    package var userHandle: [UInt8] = SecureRandom.bytes(count: 64)

    package init(key: Key) { self.key = key }

    package static func es256() -> SoftwareAuthenticator { SoftwareAuthenticator(key: .p256(P256.Signing.PrivateKey())) }
    package static func edDSA() throws -> SoftwareAuthenticator { SoftwareAuthenticator(key: .ed25519(try Ed25519.Signing.PrivateKey())) }
    package static func rs256() throws -> SoftwareAuthenticator { SoftwareAuthenticator(key: .rsa(try RSA.Signing.PrivateKey())) }

    package var algorithm: COSEAlgorithm {
        switch key {
        case .p256: .es256
        case .ed25519: .edDSA
        case .rsa: .rs256
        }
    }

    /// The COSE key map (RFC 9053), canonical order.
    package var coseKey: CBORValue {
        switch key {
        case .p256(let key):
            .map([
                CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(3), .integer(-7)),
                CBORMapEntry(.integer(-1), .integer(1)), CBORMapEntry(.integer(-2), .bytes(key.publicKey.x)),
                CBORMapEntry(.integer(-3), .bytes(key.publicKey.y)),
            ])
        case .ed25519(let key):
            .map([
                CBORMapEntry(.integer(1), .integer(1)), CBORMapEntry(.integer(3), .integer(-8)),
                CBORMapEntry(.integer(-1), .integer(6)), CBORMapEntry(.integer(-2), .bytes(key.publicKey.rawRepresentation)),
            ])
        case .rsa(let key):
            .map([
                CBORMapEntry(.integer(1), .integer(3)), CBORMapEntry(.integer(3), .integer(-257)),
                CBORMapEntry(.integer(-1), .bytes(key.publicKey.modulus)), CBORMapEntry(.integer(-2), .bytes(key.publicKey.exponent)),
            ])
        }
    }

    package func sign(_ data: [UInt8]) throws -> [UInt8] {
        switch key {
        case .p256(let key): try key.signature(for: data).derRepresentation
        case .ed25519(let key): try key.signature(for: data)
        case .rsa(let key): try key.signature(for: data, padding: .pkcs1v1_5)
        }
    }

    package static func clientDataJSON(type: String, challenge: [UInt8], origin: String = origin, extra: String = ",\"crossOrigin\":false") -> [UInt8] {
        let encoded = Base64.encode(challenge, alphabet: .urlSafe, padded: false)
        return Array("{\"type\":\"\(type)\",\"challenge\":\"\(encoded)\",\"origin\":\"\(origin)\"\(extra)}".utf8)
    }

    package static func authenticatorData(
        rpID: String = rpID, flags: UInt8, signCount: UInt32, attested: [UInt8] = [], extensions: [UInt8] = []
    ) -> [UInt8] {
        HashFunction.sha256.hash(Array(rpID.utf8)) + [flags] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: signCount >> (8 * $0)) }
            + attested + extensions
    }

    /// AAGUID ‖ length ‖ id ‖ key.
    package func attestedCredentialData(credentialID: [UInt8]? = nil, coseKey: [UInt8]? = nil) -> [UInt8] {
        let id = credentialID ?? self.credentialID
        return aaguid + [UInt8(id.count >> 8), UInt8(id.count & 0xFF)] + id + (coseKey ?? CBOREncoder.encode(self.coseKey))
    }

    package enum Statement {
        case none
        case packedSelf
        case custom(String, CBORValue)
    }

    /// A registration; every part can be replaced.
    package func registration(
        challenge: [UInt8], type: String = "webauthn.create", origin: String = origin, clientDataExtra: String = ",\"crossOrigin\":false",
        rpID: String = rpID, flags: UInt8 = up | uv | at, signCount: UInt32 = 0, authenticatorData: [UInt8]? = nil,
        statement: Statement = .none, responseCredentialID: [UInt8]? = nil
    ) throws -> RegistrationResponse {
        let clientData = Self.clientDataJSON(type: type, challenge: challenge, origin: origin, extra: clientDataExtra)
        let data = authenticatorData
            ?? Self.authenticatorData(rpID: rpID, flags: flags, signCount: signCount, attested: flags & Self.at != 0 ? attestedCredentialData() : [])
        let format: String
        let attStmt: CBORValue
        switch statement {
        case .none:
            (format, attStmt) = ("none", .map([]))
        case .packedSelf:
            let signature = try sign(data + HashFunction.sha256.hash(clientData))
            (format, attStmt) = ("packed", .map([CBORMapEntry(.text("alg"), .integer(algorithm.rawValue)), CBORMapEntry(.text("sig"), .bytes(signature))]))
        case .custom(let name, let value):
            (format, attStmt) = (name, value)
        }
        let object = CBOREncoder.encode(
            .map([CBORMapEntry(.text("fmt"), .text(format)), CBORMapEntry(.text("attStmt"), attStmt), CBORMapEntry(.text("authData"), .bytes(data))]))
        return RegistrationResponse(credentialID: responseCredentialID ?? credentialID, clientDataJSON: clientData, attestationObject: object)
    }

    /// An assertion; every part can be replaced.
    package func assertion(
        challenge: [UInt8], type: String = "webauthn.get", origin: String = origin, clientDataExtra: String = ",\"crossOrigin\":false",
        rpID: String = rpID, flags: UInt8 = up | uv, signCount: UInt32 = 0, authenticatorData: [UInt8]? = nil,
        userHandle: [UInt8]?? = .none, signedData: (([UInt8]) -> [UInt8])? = nil, credentialID: [UInt8]? = nil
    ) throws -> AuthenticationResponse {
        let clientData = Self.clientDataJSON(type: type, challenge: challenge, origin: origin, extra: clientDataExtra)
        let data = authenticatorData ?? Self.authenticatorData(rpID: rpID, flags: flags, signCount: signCount)
        let message = data + HashFunction.sha256.hash(clientData)
        let signature = try sign(signedData?(message) ?? message)
        let handle: [UInt8]? = switch userHandle {
        case .none: self.userHandle
        case .some(let value): value
        }
        return AuthenticationResponse(
            credentialID: credentialID ?? self.credentialID, clientDataJSON: clientData, authenticatorData: data, signature: signature,
            userHandle: handle)
    }

    /// The stored form of this credential after a registration.
    package func stored(signCount: UInt32 = 0) -> StoredCredential {
        StoredCredential(credentialID: credentialID, publicKey: CBOREncoder.encode(coseKey), signCount: signCount, userHandle: userHandle)
    }
}
