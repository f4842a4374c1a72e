package import LatchkeyCrypto
package import LatchkeyWebAuthn

/// A test attestation PKI: two roots and one `packed` attestation certificate issued by the
/// first, valid 2000–2100, made once with `openssl ca` (P-256, SHA-256). The attestation
/// certificate meets WebAuthn §8.2.1: version 3, C, O, CN and OU "Authenticator Attestation",
/// not a CA. Its private key is here on purpose: it attests nothing outside the tests.
package enum TestAttestationPKI {
    /// "Latchkey Test Attestation Root A": issued ``attestationCertificatePEM``.
    package static let rootPEM = """
        -----BEGIN CERTIFICATE-----
        MIIB1DCCAXugAwIBAgIBATAKBggqhkjOPQQDAjBRMQswCQYDVQQGEwJVUzEXMBUG
        A1UECgwOTGF0Y2hrZXkgVGVzdHMxKTAnBgNVBAMMIExhdGNoa2V5IFRlc3QgQXR0
        ZXN0YXRpb24gUm9vdCBBMCAXDTAwMDEwMTAwMDAwMFoYDzIxMDAwMTAxMDAwMDAw
        WjBRMQswCQYDVQQGEwJVUzEXMBUGA1UECgwOTGF0Y2hrZXkgVGVzdHMxKTAnBgNV
        BAMMIExhdGNoa2V5IFRlc3QgQXR0ZXN0YXRpb24gUm9vdCBBMFkwEwYHKoZIzj0C
        AQYIKoZIzj0DAQcDQgAEEYNd4/3TgFCWe0yjRN0RjarRPo88KQBH6oFblDrSxEKa
        iRzaz729j0rfCP/KVX+kIzGGLgPl4udRC1W0yYCRNqNCMEAwDwYDVR0TAQH/BAUw
        AwEB/zAOBgNVHQ8BAf8EBAMCAQYwHQYDVR0OBBYEFFSlUYSV8No71WTAMnqBFjNt
        XHJVMAoGCCqGSM49BAMCA0cAMEQCIGl6HMCFya9OHeK94Y+WpQpldaEhGr3S5RGP
        c39VoefDAiBJWHwQjrNNF1qSMgiWN45J6ZWuyXSamuMbGyVySoAv2g==
        -----END CERTIFICATE-----
        """

    /// "Latchkey Test Attestation Root B": a root that issued nothing here, to trust instead of A.
    package static let otherRootPEM = """
        -----BEGIN CERTIFICATE-----
        MIIB1DCCAXugAwIBAgIBAjAKBggqhkjOPQQDAjBRMQswCQYDVQQGEwJVUzEXMBUG
        A1UECgwOTGF0Y2hrZXkgVGVzdHMxKTAnBgNVBAMMIExhdGNoa2V5IFRlc3QgQXR0
        ZXN0YXRpb24gUm9vdCBCMCAXDTAwMDEwMTAwMDAwMFoYDzIxMDAwMTAxMDAwMDAw
        WjBRMQswCQYDVQQGEwJVUzEXMBUGA1UECgwOTGF0Y2hrZXkgVGVzdHMxKTAnBgNV
        BAMMIExhdGNoa2V5IFRlc3QgQXR0ZXN0YXRpb24gUm9vdCBCMFkwEwYHKoZIzj0C
        AQYIKoZIzj0DAQcDQgAESYGc7Wm6/mIET15KsSfhC+B35amJ1g7MSvb/j0hpQuDz
        CFG/goH1l4sJ9IqQgBqMrZ6rci4HeksmA9qz0wm7B6NCMEAwDwYDVR0TAQH/BAUw
        AwEB/zAOBgNVHQ8BAf8EBAMCAQYwHQYDVR0OBBYEFCq9msLGZCNFHiHYLUFEbtIU
        0cLmMAoGCCqGSM49BAMCA0cAMEQCIDXE6fXixcnITTJxjjs+TYslSbdswE3lp80t
        a/b022VBAiAoDLXGkK7hkvvS8IMVnPYjSDIp6jhJGOf7OC4wp3yTrg==
        -----END CERTIFICATE-----
        """

    /// "Latchkey Test Authenticator", OU "Authenticator Attestation", issued by root A.
    package static let attestationCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIICETCCAbigAwIBAgIBAzAKBggqhkjOPQQDAjBRMQswCQYDVQQGEwJVUzEXMBUG
        A1UECgwOTGF0Y2hrZXkgVGVzdHMxKTAnBgNVBAMMIExhdGNoa2V5IFRlc3QgQXR0
        ZXN0YXRpb24gUm9vdCBBMCAXDTAwMDEwMTAwMDAwMFoYDzIxMDAwMTAxMDAwMDAw
        WjBwMQswCQYDVQQGEwJVUzEXMBUGA1UECgwOTGF0Y2hrZXkgVGVzdHMxIjAgBgNV
        BAsMGUF1dGhlbnRpY2F0b3IgQXR0ZXN0YXRpb24xJDAiBgNVBAMMG0xhdGNoa2V5
        IFRlc3QgQXV0aGVudGljYXRvcjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABKLM
        znu2pG7afp05ZrdNRfaKHVIkNl8t7BI74sYIc7ld2XZxqlZoWn+UcJmEJfid/EAw
        25smAyPGpIGbur08uv+jYDBeMAwGA1UdEwEB/wQCMAAwDgYDVR0PAQH/BAQDAgeA
        MB8GA1UdIwQYMBaAFFSlUYSV8No71WTAMnqBFjNtXHJVMB0GA1UdDgQWBBQdtRWz
        AAy29swadmLkanFC+qw9sTAKBggqhkjOPQQDAgNHADBEAiBjMnl8mRbGTskeLqe9
        ScbcrPSi2rEyXRonLZTmaAiURgIgPWT18cfGJxEL8E0C0bivJeZRTHILgL2IooTS
        wIQ75OM=
        -----END CERTIFICATE-----
        """

    /// The attestation certificate's key (PKCS #8).
    package static let attestationKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgboKuoh0ZRYRoq2WK
        FZ8RKYXbworzdnaPhUSXS5cb6HShRANCAASizM57tqRu2n6dOWa3TUX2ih1SJDZf
        LewSO+LGCHO5Xdl2capWaFp/lHCZhCX4nfxAMNubJgMjxqSBm7q9PLr/
        -----END PRIVATE KEY-----
        """

    /// The attestation certificate's DER bytes, for `x5c`.
    package static func attestationCertificate() throws -> [UInt8] {
        try X509Certificate.certificates(pemRepresentation: attestationCertificatePEM)[0].derRepresentation
    }

    /// The attestation key.
    package static func attestationKey() throws -> P256.Signing.PrivateKey {
        try P256.Signing.PrivateKey(pemRepresentation: attestationKeyPEM)
    }
}

extension SoftwareAuthenticator {
    /// A registration whose statement is `packed` basic attestation (§8.2): `alg` ES256, `sig`
    /// by the attestation key over authenticator data ‖ SHA-256(client data), and `x5c` with the
    /// attestation certificate first. `certificates` and `attestationKey` default to
    /// ``TestAttestationPKI``'s; `signedData` may alter what is signed, for the hostile variant.
    package func packedAttestationRegistration(
        challenge: [UInt8], origin: String = origin, rpID: String = rpID, flags: UInt8 = up | uv | at,
        attestationKey: P256.Signing.PrivateKey? = nil, certificates: [[UInt8]]? = nil, signedData: (([UInt8]) -> [UInt8])? = nil
    ) throws -> RegistrationResponse {
        let clientData = Self.clientDataJSON(type: "webauthn.create", challenge: challenge, origin: origin)
        let data = Self.authenticatorData(rpID: rpID, flags: flags, signCount: 0, attested: attestedCredentialData())
        let message = data + HashFunction.sha256.hash(clientData)
        let key = try attestationKey ?? TestAttestationPKI.attestationKey()
        let signature = try key.signature(for: signedData?(message) ?? message).derRepresentation
        let chain = try certificates ?? [TestAttestationPKI.attestationCertificate()]
        let statement = CBORValue.map([
            CBORMapEntry(.text("alg"), .integer(-7)), CBORMapEntry(.text("sig"), .bytes(signature)),
            CBORMapEntry(.text("x5c"), .array(chain.map(CBORValue.bytes))),
        ])
        let object = CBOREncoder.encode(
            .map([CBORMapEntry(.text("fmt"), .text("packed")), CBORMapEntry(.text("attStmt"), statement), CBORMapEntry(.text("authData"), .bytes(data))]))
        return RegistrationResponse(credentialID: credentialID, clientDataJSON: clientData, attestationObject: object)
    }
}
