/// Authenticator data (WebAuthn §6.1): what the authenticator signs about itself.
///
/// Layout: rpIdHash (32) ‖ flags (1) ‖ signCount (4, big-endian) ‖ attested credential data
/// (when AT is set: AAGUID 16 ‖ credentialIdLength 2 ‖ credentialId ‖ COSE key) ‖ extensions
/// (a CBOR map, when ED is set). Parsing is strict: AT and ED must match what follows, the
/// credential id is at most 1,023 bytes (§5.8.3 `credentialId` limit), and nothing may follow
/// the extensions.
package struct AuthenticatorData: Sendable {
    /// The flags byte (§6.1 "flags").
    package struct Flags: OptionSet, Sendable, Hashable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Bit 0: user present.
        package static let userPresent = Flags(rawValue: 1 << 0)
        /// Bit 2: user verified.
        package static let userVerified = Flags(rawValue: 1 << 2)
        /// Bit 3: backup eligible.
        package static let backupEligible = Flags(rawValue: 1 << 3)
        /// Bit 4: backed up.
        package static let backedUp = Flags(rawValue: 1 << 4)
        /// Bit 6: attested credential data included.
        package static let attestedCredentialData = Flags(rawValue: 1 << 6)
        /// Bit 7: extension data included.
        package static let extensionData = Flags(rawValue: 1 << 7)
    }

    /// The attested credential data (§6.5.2).
    package struct AttestedCredential: Sendable {
        /// The authenticator's model, 16 bytes (zero for many `none` attestations, not for all).
        package var aaguid: [UInt8]
        /// The credential id, 1 to 1,023 bytes.
        package var credentialID: [UInt8]
        /// The credential public key as encoded.
        package var publicKeyBytes: [UInt8]
        /// The decoded key map (not yet checked as a COSE key).
        package var publicKey: CBORValue
    }

    /// The longest credential id accepted (§5.8.3: at most 1,023 bytes).
    package static let maximumCredentialIDLength = 1023

    /// The bytes parsed, which signatures cover.
    package let bytes: [UInt8]
    /// SHA-256 of the RP ID the authenticator scoped the credential to.
    package let rpIDHash: [UInt8]
    /// The flags.
    package let flags: Flags
    /// The signature counter.
    package let signCount: UInt32
    /// Present when AT is set.
    package let attestedCredential: AttestedCredential?
    /// The extension outputs when ED is set; parsed, never acted on.
    package let extensions: CBORValue?

    /// Parses authenticator data.
    ///
    /// - Parameter bytes: The raw authenticator data.
    /// - Throws: ``WebAuthnError/Code-swift.struct/malformed`` for any breach of the layout;
    ///   ``WebAuthnError/Code-swift.struct/invalidCredentialID`` for a credential id longer than
    ///   1,023 bytes.
    package init(bytes: some Collection<UInt8>) throws(WebAuthnError) {
        let bytes = Array(bytes)
        guard bytes.count >= 37 else { throw .malformed("authenticator data is shorter than 37 bytes") }
        self.bytes = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var index = 37
        if flags.contains(.attestedCredentialData) {
            guard bytes.count - index >= 18 else { throw .malformed("attested credential data is truncated") }
            let aaguid = Array(bytes[index..<index + 16])
            let length = Int(bytes[index + 16]) << 8 | Int(bytes[index + 17])
            index += 18
            guard length >= 1 else { throw .malformed("the credential id is empty") }
            guard length <= Self.maximumCredentialIDLength else {
                throw WebAuthnError(.invalidCredentialID, "the credential id has \(length) bytes; at most 1023 are allowed")
            }
            guard bytes.count - index >= length else { throw .malformed("the credential id is truncated") }
            let credentialID = Array(bytes[index..<index + length])
            index += length
            let key: (value: CBORValue, consumed: Int)
            do {
                key = try CBORDecoder.decodePrefix(bytes[index...])
            } catch {
                throw .malformed("the credential public key is not CBOR: \(error.message)")
            }
            attestedCredential = AttestedCredential(
                aaguid: aaguid, credentialID: credentialID,
                publicKeyBytes: Array(bytes[index..<index + key.consumed]), publicKey: key.value)
            index += key.consumed
        } else {
            attestedCredential = nil
        }
        if flags.contains(.extensionData) {
            guard index < bytes.count else { throw .malformed("ED is set but no extensions follow") }
            let value: CBORValue
            do {
                value = try CBORDecoder.decode(bytes[index...])
            } catch {
                throw .malformed("the extensions are not CBOR: \(error.message)")
            }
            guard value.mapValue != nil else { throw .malformed("the extensions are not a map") }
            extensions = value
        } else {
            guard index == bytes.count else {
                throw .malformed("\(bytes.count - index) bytes follow the authenticator data")
            }
            extensions = nil
        }
    }

    /// Whether UP is set.
    package var userPresent: Bool { flags.contains(.userPresent) }
    /// Whether UV is set.
    package var userVerified: Bool { flags.contains(.userVerified) }
    /// Whether BE is set.
    package var backupEligible: Bool { flags.contains(.backupEligible) }
    /// Whether BS is set.
    package var backedUp: Bool { flags.contains(.backedUp) }
}
