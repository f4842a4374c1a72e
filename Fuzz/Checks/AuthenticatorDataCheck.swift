import LatchkeyWebAuthn

extension FuzzTarget {
    /// Authenticator data (WebAuthn §6.1) and the COSE key inside it.
    ///
    /// Properties: accepted authenticator data rebuilt from its parsed fields (RP ID hash, flags,
    /// sign count, AAGUID, credential id, key, extensions) is exactly the input; the AT and ED
    /// flags match what was parsed; the credential id is 1 to 1,023 bytes; a refusal is
    /// `malformed` or `invalid_credential_id`. A key the COSE reader accepts reads back from its
    /// stored bytes with the same algorithm; it refuses only as `malformed`,
    /// `unsupported_algorithm` or `invalid_public_key`.
    public static let authenticatorData = FuzzTarget(name: "authenticator-data") { (input) throws(PropertyFailure) in
        let data: AuthenticatorData
        switch Result(catching: { () throws(WebAuthnError) in try AuthenticatorData(bytes: input) }) {
        case .success(let parsed):
            data = parsed
        case .failure(let error):
            try require(error.code == .malformed || error.code == .invalidCredentialID, "authenticator data refused with \(error.code)")
            return .refused
        }
        var rebuilt = data.rpIDHash + [data.flags.rawValue]
        rebuilt += (0..<4).reversed().map { UInt8(truncatingIfNeeded: data.signCount >> (8 * $0)) }
        try require(data.flags.contains(.attestedCredentialData) == (data.attestedCredential != nil), "AT does not match the parse")
        try require(data.flags.contains(.extensionData) == (data.extensions != nil), "ED does not match the parse")
        if let credential = data.attestedCredential {
            let count = credential.credentialID.count
            try require(count >= 1 && count <= AuthenticatorData.maximumCredentialIDLength, "a credential id of \(count) bytes was accepted")
            try require(CBOREncoder.encode(credential.publicKey) == credential.publicKeyBytes, "the key's bytes are not its encoding")
            rebuilt += credential.aaguid + [UInt8(count >> 8), UInt8(count & 0xFF)] + credential.credentialID + credential.publicKeyBytes
            switch Result(catching: { () throws(WebAuthnError) in try COSEKey(value: credential.publicKey, bytes: credential.publicKeyBytes) }) {
            case .success(let key):
                let again = try? COSEKey(bytes: key.bytes)
                try require(again?.algorithm == key.algorithm, "a stored COSE key does not read back")
            case .failure(let error):
                try require(
                    [.malformed, .unsupportedAlgorithm, .invalidPublicKey].contains(error.code), "a COSE key refused with \(error.code)")
            }
        }
        if let extensions = data.extensions {
            rebuilt += CBOREncoder.encode(extensions)
        }
        try require(rebuilt == input, "authenticator data rebuilt from its fields differs from the input")
        return .accepted
    }
}
