/// The attestation object (WebAuthn §6.5.4): a CBOR map of `fmt` (text), `attStmt` (map) and
/// `authData` (bytes), nothing else required; other members are refused as malformed.
package struct AttestationObject: Sendable {
    /// The longest attestation object accepted; with a certificate chain it is a few KiB.
    package static let maximumByteCount = 64 * 1024

    /// The statement's format.
    package let format: AttestationFormat
    /// The statement, a map.
    package let statement: CBORValue
    /// The authenticator data, parsed.
    package let authenticatorData: AuthenticatorData

    /// Parses an attestation object.
    ///
    /// - Parameter bytes: The CBOR bytes.
    /// - Throws: ``WebAuthnError/Code-swift.struct/malformed`` (or what ``AuthenticatorData``
    ///   throws).
    package init(bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count <= Self.maximumByteCount else { throw .malformed("the attestation object is longer than 64 KiB") }
        let value: CBORValue
        do {
            value = try CBORDecoder.decode(bytes)
        } catch {
            throw .malformed("the attestation object is not CBOR: \(error.message)")
        }
        guard let entries = value.mapValue, entries.count == 3,
            let format = value["fmt"]?.textValue,
            let statement = value["attStmt"], statement.mapValue != nil,
            let data = value["authData"]?.bytesValue
        else {
            throw .malformed("the attestation object is not {fmt, attStmt, authData}")
        }
        self.format = AttestationFormat(rawValue: format)
        self.statement = statement
        self.authenticatorData = try AuthenticatorData(bytes: data)
    }
}
