import Foundation
import LatchkeyCrypto
import Testing

@Suite("X.509 certificates and chain verification")
struct X509CertificateTests {
    /// Apple WebAuthn Root CA: P-384, valid 2020-03-18 to 2045-03-15.
    static let appleRoot = """
        -----BEGIN CERTIFICATE-----
        MIICEjCCAZmgAwIBAgIQaB0BbHo84wIlpQGUKEdXcTAKBggqhkjOPQQDAzBLMR8w
        HQYDVQQDDBZBcHBsZSBXZWJBdXRobiBSb290IENBMRMwEQYDVQQKDApBcHBsZSBJ
        bmMuMRMwEQYDVQQIDApDYWxpZm9ybmlhMB4XDTIwMDMxODE4MjEzMloXDTQ1MDMx
        NTAwMDAwMFowSzEfMB0GA1UEAwwWQXBwbGUgV2ViQXV0aG4gUm9vdCBDQTETMBEG
        A1UECgwKQXBwbGUgSW5jLjETMBEGA1UECAwKQ2FsaWZvcm5pYTB2MBAGByqGSM49
        AgEGBSuBBAAiA2IABCJCQ2pTVhzjl4Wo6IhHtMSAzO2cv+H9DQKev3//fG59G11k
        xu9eI0/7o6V5uShBpe1u6l6mS19S1FEh6yGljnZAJ+2GNP1mi/YK2kSXIuTHjxA/
        pcoRf7XkOtO4o1qlcaNCMEAwDwYDVR0TAQH/BAUwAwEB/zAdBgNVHQ4EFgQUJtdk
        2cV4wlpn0afeaxLQG2PxxtcwDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMDA2cA
        MGQCMFrZ+9DsJ1PW9hfNdBywZDsWDbWFp28it1d/5w2RPkRX3Bbn/UbDTNLx7Jr3
        jAGGiQIwHFj+dJZYUJR786osByBelJYsVZd2GbHQu209b5RCmGQ21gpSAk9QZW4B
        1bWeT0vT
        -----END CERTIFICATE-----

        """

    @Test("a root reads with its version, subject, extensions and CA flag, and verifies to itself within its validity")
    func root() throws {
        let certificates = try X509Certificate.certificates(pemRepresentation: Self.appleRoot + Self.appleRoot)
        #expect(certificates.count == 2)
        let root = certificates[0]
        #expect(root.version == 3)
        #expect(root.isCertificateAuthority)
        #expect(root.subjectAttributes.first { $0.oid == "2.5.4.3" }?.value == "Apple WebAuthn Root CA")
        let basicConstraints = try #require(root.extension("2.5.29.19"))
        #expect(basicConstraints.isCritical)
        #expect(basicConstraints.value == [0x30, 0x03, 0x01, 0x01, 0xFF])
        #expect(root.extension("1.2.840.113635.100.8.2") == nil)
        #expect(try root.subjectPublicKeyInfo().count == 120)  // a P-384 SubjectPublicKeyInfo
        let inside = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(root.chainFailure(intermediates: [], roots: [root], at: inside) == nil)
        #expect(root.chainFailure(intermediates: [], roots: [root], at: Date(timeIntervalSince1970: 1_500_000_000)) != nil)
        #expect(root.chainFailure(intermediates: [], roots: [], at: inside) != nil)
    }

    @Test("bytes that are not one DER certificate are refused")
    func hostile() throws {
        let der = try X509Certificate.certificates(pemRepresentation: Self.appleRoot)[0].derRepresentation
        #expect(throws: CryptoError.malformedInput()) { try X509Certificate(derRepresentation: der + [0]) }
        #expect(throws: CryptoError.malformedInput()) { try X509Certificate(derRepresentation: Array(der.dropLast())) }
        #expect(throws: CryptoError.malformedInput()) { try X509Certificate(derRepresentation: [UInt8]()) }
        #expect(throws: CryptoError.malformedInput()) { try X509Certificate(derRepresentation: [0x30, 0x03, 0x02, 0x01, 0x00]) }
        #expect(throws: CryptoError.malformedInput()) { try X509Certificate(derRepresentation: [UInt8](repeating: 0x30, count: 20_000)) }
        #expect(throws: CryptoError.malformedInput()) { try X509Certificate.certificates(pemRepresentation: "no certificate here") }
    }
}
