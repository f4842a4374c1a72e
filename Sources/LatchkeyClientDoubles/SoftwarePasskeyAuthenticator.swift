import FoundationEssentials
package import LatchkeyClient
package import LatchkeyCrypto
import LatchkeyJSON
import LatchkeyWebAuthn
import Synchronization

/// A passkey manager in software, for the SDK's tests, the py_webauthn cross-check and
/// `latchkey demo` on Linux: what `PlatformPasskeyAuthenticator` does on an iPhone, with real
/// ES256 keys (LatchkeyCrypto's P-256), real attestation objects (`none` format, CBOR) and real
/// assertions.
///
/// Like iCloud Keychain it makes discoverable, synced passkeys (flags BE and BS), verifies the
/// user (UP and UV; a conditional registration has neither, as no one was asked), refuses a
/// registration that `excludeCredentials` names one of its passkeys for, and answers a sign-in
/// without `allowCredentials` with its passkey for the relying party. Unlike Apple's passkeys,
/// whose sign count stays 0, each passkey counts its signatures, so the server's clone check
/// has something to compare.
package final class SoftwarePasskeyAuthenticator: PasskeyAuthenticator {
    /// One passkey the authenticator holds.
    package struct Credential: Sendable {
        package var id: [UInt8]
        package var relyingPartyID: String
        package var userHandle: [UInt8]
        package var userName: String
        package var key: P256.Signing.PrivateKey
        package var signCount: UInt32
    }

    /// Authenticator data flags (WebAuthn Level 3 §6.1).
    package enum Flag {
        package static let userPresent: UInt8 = 0x01
        package static let userVerified: UInt8 = 0x04
        package static let backupEligible: UInt8 = 0x08
        package static let backedUp: UInt8 = 0x10
        package static let attestedCredentialData: UInt8 = 0x40
    }

    private let held = Mutex<[Credential]>([])
    private let origin: String?
    private let declinesConditionalRegistration: Bool

    /// An authenticator with no passkey yet.
    ///
    /// - Parameters:
    ///   - origin: the client data's `origin`; by default `https://` + the RP ID, what an iOS app
    ///     with the `webcredentials:` association presents.
    ///   - declinesConditionalRegistration: answer an automatic upgrade as a passkey manager
    ///     whose conditions are not met does (an error, nothing shown).
    package init(origin: String? = nil, declinesConditionalRegistration: Bool = false) {
        self.origin = origin
        self.declinesConditionalRegistration = declinesConditionalRegistration
    }

    /// The passkeys it holds, oldest first.
    package var credentials: [Credential] { held.withLock { $0 } }

    /// Forgets every passkey (a user deleting them in the Passwords app).
    package func removeAll() { held.withLock { $0.removeAll() } }

    package func makeCredential(_ options: PasskeyCreationOptions, style: PasskeyRequestStyle) async throws -> PasskeyRegistration {
        try Task.checkCancellation()
        if style == .conditional, declinesConditionalRegistration {
            throw LatchkeyError(.canceled, "the passkey manager declined the automatic upgrade")
        }
        guard options.algorithms.isEmpty || options.algorithms.contains(-7) else {
            throw LatchkeyError(.invalidResponse, "the server accepts no ES256 key")
        }
        let excluded = Set(options.excludedCredentialIDs.map { [UInt8]($0) })
        let rpID = options.relyingPartyID
        if held.withLock({ $0.contains { $0.relyingPartyID == rpID && excluded.contains($0.id) } }) {
            throw LatchkeyError(.passkeyAlreadyRegistered, "this authenticator holds a passkey of the account already")
        }
        let credential = Credential(
            id: SecureRandom.bytes(count: 16), relyingPartyID: rpID, userHandle: [UInt8](options.userID), userName: options.userName,
            key: P256.Signing.PrivateKey(), signCount: 0)
        let clientData = clientDataJSON(type: "webauthn.create", challenge: options.challenge, rpID: rpID)
        let presence = style == .standard ? Flag.userPresent | Flag.userVerified : 0
        let flags = presence | Flag.backupEligible | Flag.backedUp | Flag.attestedCredentialData
        let authenticatorData = Self.authenticatorData(rpID: rpID, flags: flags, signCount: 0) + Self.attestedCredentialData(credential)
        let attestationObject = CBOREncoder.encode(
            .map([
                CBORMapEntry(.text("fmt"), .text("none")), CBORMapEntry(.text("attStmt"), .map([])),
                CBORMapEntry(.text("authData"), .bytes(authenticatorData)),
            ]))
        held.withLock { credentials in
            // A passkey manager keeps one passkey per account and relying party: a new one replaces the old.
            credentials.removeAll { $0.relyingPartyID == rpID && $0.userHandle == credential.userHandle }
            credentials.append(credential)
        }
        return PasskeyRegistration(credentialID: Data(credential.id), clientDataJSON: Data(clientData), attestationObject: Data(attestationObject))
    }

    package func getAssertion(_ options: PasskeyAssertionOptions, style: PasskeyRequestStyle) async throws -> PasskeyAssertion {
        try Task.checkCancellation()
        let allowed = Set(options.allowedCredentialIDs.map { [UInt8]($0) })
        let rpID = options.relyingPartyID
        let chosen = held.withLock { credentials -> Credential? in
            // The newest of the passkeys the request allows: the one a user would pick first.
            guard let index = credentials.lastIndex(where: { $0.relyingPartyID == rpID && (allowed.isEmpty || allowed.contains($0.id)) }) else {
                return nil
            }
            credentials[index].signCount += 1
            return credentials[index]
        }
        guard let chosen else { throw LatchkeyError(.noPasskey, "this authenticator holds no passkey the request allows") }
        let clientData = clientDataJSON(type: "webauthn.get", challenge: options.challenge, rpID: rpID)
        let flags = Flag.userPresent | Flag.userVerified | Flag.backupEligible | Flag.backedUp
        let authenticatorData = Self.authenticatorData(rpID: rpID, flags: flags, signCount: chosen.signCount)
        let signature = try chosen.key.signature(for: authenticatorData + HashFunction.sha256.hash(clientData)).derRepresentation
        return PasskeyAssertion(
            credentialID: Data(chosen.id), clientDataJSON: Data(clientData), authenticatorData: Data(authenticatorData), signature: Data(signature),
            userHandle: Data(chosen.userHandle))
    }

    // MARK: The bytes

    /// `CollectedClientData` (WebAuthn Level 3 §5.8.1), as a platform serializes it.
    private func clientDataJSON(type: String, challenge: Data, rpID: String) -> [UInt8] {
        JSONValue.object([
            "type": .string(type), "challenge": .string(Base64.encode([UInt8](challenge), alphabet: .urlSafe, padded: false)),
            "origin": .string(origin ?? "https://" + rpID), "crossOrigin": .bool(false),
        ]).serialized
    }

    /// RP ID hash ‖ flags ‖ sign count (big-endian) (WebAuthn Level 3 §6.1).
    private static func authenticatorData(rpID: String, flags: UInt8, signCount: UInt32) -> [UInt8] {
        HashFunction.sha256.hash(Array(rpID.utf8)) + [flags] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: signCount >> (8 * $0)) }
    }

    /// AAGUID (zeros, as Apple's passkeys) ‖ id length ‖ id ‖ the COSE ES256 key (RFC 9053).
    private static func attestedCredentialData(_ credential: Credential) -> [UInt8] {
        let publicKey = credential.key.publicKey
        let coseKey = CBOREncoder.encode(
            .map([
                CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(3), .integer(-7)), CBORMapEntry(.integer(-1), .integer(1)),
                CBORMapEntry(.integer(-2), .bytes(publicKey.x)), CBORMapEntry(.integer(-3), .bytes(publicKey.y)),
            ]))
        let id = credential.id
        return [UInt8](repeating: 0, count: 16) + [UInt8(id.count >> 8), UInt8(id.count & 0xFF)] + id + coseKey
    }
}
