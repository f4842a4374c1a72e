internal import FoundationEssentials
internal import LatchkeyCrypto

/// Verifies attestation statements (WebAuthn §8) when the policy is `direct`.
enum AttestationVerifier {
    /// id-fido-gen-ce-aaguid (§8.2.1).
    static let aaguidExtension = "1.3.6.1.4.1.45724.1.1.4"
    /// Apple's nonce extension (§8.8).
    static let appleNonceExtension = "1.2.840.113635.100.8.2"

    /// Verifies the statement of `object` for its format and returns what it proved.
    static func verify(
        _ object: AttestationObject, clientDataHash: [UInt8], credentialKey: COSEKey, trust: AttestationTrust
    ) throws(WebAuthnError) -> AttestationType {
        switch object.format {
        case .none:
            guard object.statement.mapValue?.isEmpty == true else {
                throw WebAuthnError(.invalidAttestation, "a none statement is not empty")
            }
            return .none
        case .packed:
            return try packed(object, clientDataHash: clientDataHash, credentialKey: credentialKey, trust: trust)
        case .fidoU2F:
            return try fidoU2F(object, clientDataHash: clientDataHash, credentialKey: credentialKey, trust: trust)
        case .apple:
            return try apple(object, clientDataHash: clientDataHash, credentialKey: credentialKey, trust: trust)
        default:
            throw WebAuthnError(.unsupportedAttestation, "attestation format \(object.format) is not supported")
        }
    }

    /// `x5c`: a non-empty array of DER certificates, the leaf first.
    static func certificates(_ statement: CBORValue) throws(WebAuthnError) -> [X509Certificate]? {
        guard let member = statement["x5c"] else { return nil }
        guard let items = member.arrayValue, !items.isEmpty, items.count <= 8 else {
            throw WebAuthnError(.invalidAttestation, "x5c is not an array of 1 to 8 certificates")
        }
        var certificates: [X509Certificate] = []
        for item in items {
            guard let der = item.bytesValue, let certificate = try? X509Certificate(derRepresentation: der) else {
                throw WebAuthnError(.invalidAttestation, "an x5c entry is not a DER certificate")
            }
            certificates.append(certificate)
        }
        return certificates
    }

    /// Verifies the chain to the format's roots.
    static func checkChain(_ chain: [X509Certificate], format: AttestationFormat, trust: AttestationTrust) throws(WebAuthnError) {
        let roots = trust.roots[format] ?? []
        if let failure = chain[0].chainFailure(intermediates: Array(chain.dropFirst()), roots: roots, at: trust.verificationTime) {
            throw WebAuthnError(.untrustedAttestation, "the \(format) certificate chain does not verify: \(failure)")
        }
    }

    /// Checks `sig` by the key of a certificate for algorithm `alg`.
    static func isValid(signature: [UInt8], data: [UInt8], certificate: X509Certificate, algorithm: COSEAlgorithm) throws(WebAuthnError) -> Bool {
        guard let spki = try? certificate.subjectPublicKeyInfo() else {
            throw WebAuthnError(.invalidAttestation, "the attestation certificate's key does not decode")
        }
        switch algorithm {
        case .es256:
            guard let key = try? P256.Signing.PublicKey(derRepresentation: spki) else {
                throw WebAuthnError(.invalidAttestation, "ES256 needs a P-256 attestation key")
            }
            guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: data)
        case .rs256:
            guard let key = try? RSA.Signing.PublicKey(derRepresentation: spki) else {
                throw WebAuthnError(.invalidAttestation, "RS256 needs an acceptable RSA attestation key")
            }
            return key.isValidSignature(signature, for: data, padding: .pkcs1v1_5, hash: .sha256)
        default:
            throw WebAuthnError(.unsupportedAttestation, "attestation algorithm \(algorithm) is not supported")
        }
    }

    /// §8.2 `packed`: `alg`, `sig`, and `x5c` (basic) or not (self).
    static func packed(
        _ object: AttestationObject, clientDataHash: [UInt8], credentialKey: COSEKey, trust: AttestationTrust
    ) throws(WebAuthnError) -> AttestationType {
        let statement = object.statement
        guard let alg = statement["alg"]?.integerValue, let signature = statement["sig"]?.bytesValue else {
            throw WebAuthnError(.invalidAttestation, "a packed statement needs alg and sig")
        }
        guard statement["ecdaaKeyId"] == nil else {
            throw WebAuthnError(.unsupportedAttestation, "ECDAA was removed from WebAuthn")
        }
        let algorithm = COSEAlgorithm(rawValue: alg)
        let signed = object.authenticatorData.bytes + clientDataHash
        guard let chain = try certificates(statement) else {
            guard algorithm == credentialKey.algorithm else {
                throw WebAuthnError(.invalidAttestation, "a self attestation's alg is not the credential key's")
            }
            guard credentialKey.isValidSignature(signature, for: signed) else {
                throw WebAuthnError(.invalidAttestation, "the self attestation signature does not verify")
            }
            return .selfAttestation
        }
        guard try isValid(signature: signature, data: signed, certificate: chain[0], algorithm: algorithm) else {
            throw WebAuthnError(.invalidAttestation, "the packed attestation signature does not verify")
        }
        try checkPackedCertificate(chain[0], aaguid: object.authenticatorData.attestedCredential?.aaguid ?? [])
        try checkChain(chain, format: .packed, trust: trust)
        return .verified
    }

    /// §8.2.1: the attestation certificate's requirements.
    static func checkPackedCertificate(_ certificate: X509Certificate, aaguid: [UInt8]) throws(WebAuthnError) {
        guard certificate.version == 3 else {
            throw WebAuthnError(.invalidAttestation, "the packed attestation certificate is not version 3")
        }
        let subject = certificate.subjectAttributes
        func value(_ oid: String) -> String? { subject.first { $0.oid == oid }?.value }
        guard let country = value("2.5.4.6"), country.utf8.count == 2, value("2.5.4.10")?.isEmpty == false,
            value("2.5.4.3")?.isEmpty == false
        else {
            throw WebAuthnError(.invalidAttestation, "the packed attestation certificate's subject lacks C, O or CN")
        }
        guard value("2.5.4.11") == "Authenticator Attestation" else {
            throw WebAuthnError(.invalidAttestation, "the packed attestation certificate's OU is not Authenticator Attestation")
        }
        if let item = certificate.extension(aaguidExtension) {
            var rest = item.value[...]
            guard !item.isCritical, let octets = DER.read(&rest), octets.tag == 0x04, rest.isEmpty,
                Array(octets.content) == aaguid
            else {
                throw WebAuthnError(.invalidAttestation, "the certificate's AAGUID extension is critical or not the AAGUID")
            }
        }
        guard !certificate.isCertificateAuthority else {
            throw WebAuthnError(.invalidAttestation, "the packed attestation certificate is a CA")
        }
    }

    /// §8.6 `fido-u2f`: one P-256 certificate signing the U2F registration data.
    static func fidoU2F(
        _ object: AttestationObject, clientDataHash: [UInt8], credentialKey: COSEKey, trust: AttestationTrust
    ) throws(WebAuthnError) -> AttestationType {
        let statement = object.statement
        guard let signature = statement["sig"]?.bytesValue, let chain = try certificates(statement), chain.count == 1 else {
            throw WebAuthnError(.invalidAttestation, "a fido-u2f statement needs sig and exactly one x5c certificate")
        }
        guard let point = credentialKey.x963Representation, let credential = object.authenticatorData.attestedCredential else {
            throw WebAuthnError(.invalidAttestation, "a fido-u2f credential key must be P-256")
        }
        let signed = [0x00] + object.authenticatorData.rpIDHash + clientDataHash + credential.credentialID + point
        guard try isValid(signature: signature, data: signed, certificate: chain[0], algorithm: .es256) else {
            throw WebAuthnError(.invalidAttestation, "the fido-u2f attestation signature does not verify")
        }
        try checkChain(chain, format: .fidoU2F, trust: trust)
        return .verified
    }

    /// §8.8 `apple`: the leaf's nonce extension is SHA-256(authData ‖ clientDataHash) and its
    /// key is the credential's.
    static func apple(
        _ object: AttestationObject, clientDataHash: [UInt8], credentialKey: COSEKey, trust: AttestationTrust
    ) throws(WebAuthnError) -> AttestationType {
        guard let chain = try certificates(object.statement) else {
            throw WebAuthnError(.invalidAttestation, "an apple statement needs x5c")
        }
        let nonce = HashFunction.sha256.hash(object.authenticatorData.bytes + clientDataHash)
        guard ConstantTime.equals(try appleNonce(of: chain[0]), nonce) else {
            throw WebAuthnError(.invalidAttestation, "the apple nonce is not SHA-256(authData ‖ clientDataHash)")
        }
        guard let spki = credentialKey.subjectPublicKeyInfo, (try? chain[0].subjectPublicKeyInfo()) == spki else {
            throw WebAuthnError(.invalidAttestation, "the credential key is not the apple certificate's key")
        }
        try checkChain(chain, format: .apple, trust: trust)
        return .verified
    }

    /// The nonce in Apple's extension 1.2.840.113635.100.8.2 of `certificate`, read as DER:
    /// SEQUENCE { [1] EXPLICIT OCTET STRING nonce }, nothing before or after any part. Both
    /// Apple's `apple` passkey statements and App Attest credential certificates carry it.
    static func appleNonce(of certificate: X509Certificate) throws(WebAuthnError) -> [UInt8] {
        guard let item = certificate.extension(appleNonceExtension) else {
            throw WebAuthnError(.invalidAttestation, "the apple certificate has no nonce extension")
        }
        var outer = item.value[...]
        guard let sequence = DER.read(&outer), sequence.tag == 0x30, outer.isEmpty else {
            throw WebAuthnError(.invalidAttestation, "the apple nonce extension is not a SEQUENCE")
        }
        var inner = sequence.content
        guard let tagged = DER.read(&inner), tagged.tag == 0xA1, inner.isEmpty else {
            throw WebAuthnError(.invalidAttestation, "the apple nonce extension lacks [1]")
        }
        var octets = tagged.content
        guard let string = DER.read(&octets), string.tag == 0x04, octets.isEmpty else {
            throw WebAuthnError(.invalidAttestation, "the apple nonce is not an OCTET STRING")
        }
        return Array(string.content)
    }
}
