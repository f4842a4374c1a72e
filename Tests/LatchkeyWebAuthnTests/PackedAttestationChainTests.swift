import FoundationEssentials
import LatchkeyCrypto
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// `packed` basic attestation (§8.2) with a chain the tests made (``TestAttestationPKI``), so
/// the chain check runs at any time and against a root that is, and one that is not, trusted;
/// the recorded vectors check real authenticators' statements at their recorded times.
@Suite("WebAuthn packed attestation to configured roots")
struct PackedAttestationChainTests {
    typealias Authenticator = SoftwareAuthenticator
    let challenge = SecureRandom.bytes(count: 32)

    func verify(_ response: RegistrationResponse, rootPEM: String, at time: Date? = nil) throws -> VerifiedRegistration {
        let roots = try X509Certificate.certificates(pemRepresentation: rootPEM)
        return try RegistrationCeremony(
            challenge: challenge, origins: [Authenticator.origin], rpID: Authenticator.rpID, userVerification: .required,
            attestation: .direct(AttestationTrust(roots: [.packed: roots], verificationTime: time))
        ).verify(response)
    }

    func reason(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as WebAuthnError {
            return error.reason
        } catch {
            return "\(error)"
        }
    }

    @Test("S34: a packed statement whose chain leads to the configured root is verified; the policy none takes it as none")
    func verified() throws {
        let response = try Authenticator.es256().packedAttestationRegistration(challenge: challenge)
        let result = try verify(response, rootPEM: TestAttestationPKI.rootPEM)
        #expect(result.attestationType == .verified)
        #expect(result.attestationFormat == .packed)
        let unverified = try RegistrationCeremony(
            challenge: challenge, origins: [Authenticator.origin], rpID: Authenticator.rpID, userVerification: .required
        ).verify(response)
        #expect(unverified.attestationType == .none)
    }

    @Test("S34: a chain to another root, a certificate out of its validity, a wrong signature and a key not the certificate's are each refused")
    func refused() throws {
        let authenticator = Authenticator.es256()
        let good = try authenticator.packedAttestationRegistration(challenge: challenge)
        #expect(reason { _ = try verify(good, rootPEM: TestAttestationPKI.otherRootPEM) } == "untrusted_attestation")
        // The test certificates are valid from 2000 to 2100.
        #expect(reason { _ = try verify(good, rootPEM: TestAttestationPKI.rootPEM, at: Date(timeIntervalSince1970: 4_200_000_000)) } == "untrusted_attestation")
        let altered = try authenticator.packedAttestationRegistration(challenge: challenge, signedData: { $0 + [1] })
        #expect(reason { _ = try verify(altered, rootPEM: TestAttestationPKI.rootPEM) } == "invalid_attestation")
        let otherKey = try authenticator.packedAttestationRegistration(challenge: challenge, attestationKey: P256.Signing.PrivateKey())
        #expect(reason { _ = try verify(otherKey, rootPEM: TestAttestationPKI.rootPEM) } == "invalid_attestation")
    }
}
