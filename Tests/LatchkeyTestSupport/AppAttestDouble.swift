import Foundation
package import LatchkeyCrypto
package import LatchkeyWebAuthn

/// A Linux stand-in for App Attest: a test PKI made when it is created (a root and an
/// intermediate, P-256) that issues a credential certificate per attestation, the way Apple's
/// servers do, and builds real attestation objects and assertions around it.
///
/// Every piece of an attestation can be changed through ``Tampering``, so each check of the
/// verifier has a test that changes just that piece. Trust its root with ``rootPEM`` (the
/// server's `app_attest.root_ca_file`) or ``root``.
package final class AppAttestDouble: Sendable {
    private let rootKey = P256.Signing.PrivateKey()
    private let intermediateKey = P256.Signing.PrivateKey()
    /// The root certificate.
    package let root: X509Certificate
    private let intermediate: [UInt8]

    /// Makes a fresh PKI; two doubles never trust each other's attestations.
    package init() {
        let rootDER = TestCertificate.make(
            subject: "Latchkey Test App Attestation Root CA", issuer: "Latchkey Test App Attestation Root CA",
            key: rootKey.publicKey, signer: rootKey, isCA: true)
        root = try! X509Certificate(derRepresentation: rootDER)
        intermediate = TestCertificate.make(
            subject: "Latchkey Test App Attestation CA 1", issuer: "Latchkey Test App Attestation Root CA",
            key: intermediateKey.publicKey, signer: rootKey, isCA: true)
    }

    /// The root as PEM text, for `app_attest.root_ca_file`.
    package var rootPEM: String {
        let body = Data(root.derRepresentation).base64EncodedString(options: .lineLength64Characters)
        return "-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n"
    }

    /// What to change in an attestation, one piece per refusal test.
    package struct Tampering: Sendable {
        /// The nonce the certificate carries instead of SHA-256(authData ‖ clientDataHash).
        package var nonce: [UInt8]?
        /// The counter (Apple's is 0).
        package var counter: UInt32 = 0
        /// The AAGUID instead of the environment's.
        package var aaguid: [UInt8]?
        /// The credential id instead of the key id.
        package var credentialID: [UInt8]?
        /// Extension outputs after the credential key (ED set): a CBOR map.
        package var extensions: CBORValue?

        package init() {}
    }

    /// One attestation: what the app sends and the key it keeps.
    package struct Attestation: Sendable {
        /// The device key.
        package var key: P256.Signing.PrivateKey
        /// SHA-256 of the key's uncompressed point.
        package var keyID: [UInt8]
        /// The CBOR attestation object.
        package var object: [UInt8]

        package init(key: P256.Signing.PrivateKey, keyID: [UInt8], object: [UInt8]) {
            self.key = key
            self.keyID = keyID
            self.object = object
        }
    }

    /// The key id App Attest gives a key: SHA-256 of its uncompressed point.
    package static func keyID(of key: P256.Signing.PrivateKey) -> [UInt8] {
        HashFunction.sha256.hash(key.publicKey.x963Representation)
    }

    /// Attests `key` (a new one by default) for `appID` in `environment`.
    ///
    /// - Parameters:
    ///   - appID: `TEAMID.bundle.id`; its SHA-256 is the `rpIdHash`.
    ///   - environment: Picks the AAGUID.
    ///   - clientDataHash: What the app passes to `attestKey`: SHA-256 of the challenge.
    ///   - key: The device key.
    ///   - tampering: What to get wrong.
    /// - Returns: The attestation.
    package func attest(
        appID: String, environment: AppAttestEnvironment = .production, clientDataHash: [UInt8],
        key: P256.Signing.PrivateKey = P256.Signing.PrivateKey(), tampering: Tampering = Tampering()
    ) -> Attestation {
        let keyID = Self.keyID(of: key)
        let point = key.publicKey.x963Representation
        let coseKey = CBOREncoder.encode(
            .map([
                CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(3), .integer(-7)), CBORMapEntry(.integer(-1), .integer(1)),
                CBORMapEntry(.integer(-2), .bytes(Array(point[1...32]))), CBORMapEntry(.integer(-3), .bytes(Array(point[33...64]))),
            ]))
        let credentialID = tampering.credentialID ?? keyID
        var flags: UInt8 = 0x40
        var trailer: [UInt8] = []
        if let extensions = tampering.extensions {
            flags |= 0x80
            trailer = CBOREncoder.encode(extensions)
        }
        let authenticatorData =
            HashFunction.sha256.hash(Array(appID.utf8)) + [flags] + Self.bigEndian(tampering.counter)
            + (tampering.aaguid ?? environment.aaguid) + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID
            + coseKey + trailer
        let nonce = tampering.nonce ?? HashFunction.sha256.hash(authenticatorData + clientDataHash)
        let nonceExtension = DER.encode(0x30, DER.encode(0xA1, DER.encode(0x04, nonce)))
        let credentialCertificate = TestCertificate.make(
            subject: Self.hex(keyID), issuer: "Latchkey Test App Attestation CA 1", key: key.publicKey, signer: intermediateKey,
            isCA: false, extensions: [("1.2.840.113635.100.8.2", nonceExtension)])
        let statement = CBORValue.map([
            CBORMapEntry(.text("x5c"), .array([.bytes(credentialCertificate), .bytes(intermediate)])),
            CBORMapEntry(.text("receipt"), .bytes(Array("test receipt".utf8))),
        ])
        let object = CBOREncoder.encode(
            .map([
                CBORMapEntry(.text("fmt"), .text("apple-appattest")), CBORMapEntry(.text("attStmt"), statement),
                CBORMapEntry(.text("authData"), .bytes(authenticatorData)),
            ]))
        return Attestation(key: key, keyID: keyID, object: object)
    }

    /// An assertion by `key`: `{signature, authenticatorData}`, the signature ECDSA-SHA256 over
    /// SHA-256(authenticatorData ‖ clientDataHash), as a device makes it.
    ///
    /// - Parameters:
    ///   - key: The attested key.
    ///   - appID: Its app; SHA-256 of it is the `rpIdHash`.
    ///   - counter: The counter the device writes.
    ///   - clientDataHash: What the app passes to `generateAssertion`.
    /// - Returns: The CBOR assertion.
    package static func assertion(key: P256.Signing.PrivateKey, appID: String, counter: UInt32, clientDataHash: [UInt8]) -> [UInt8] {
        // Devices set AT (0x40) in assertions, with no credential data after the counter.
        let authenticatorData = HashFunction.sha256.hash(Array(appID.utf8)) + [0x40] + bigEndian(counter)
        let nonce = HashFunction.sha256.hash(authenticatorData + clientDataHash)
        let signature = try! key.signature(for: nonce).derRepresentation
        return CBOREncoder.encode(
            .map([CBORMapEntry(.text("signature"), .bytes(signature)), CBORMapEntry(.text("authenticatorData"), .bytes(authenticatorData))]))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}

/// Just enough of an X.509 v3 writer (RFC 5280 §4.1) for the double's PKI: ECDSA-SHA256
/// signatures, a common name for subject and issuer, validity 2000–2049, basic constraints and
/// key usage, and extra non-critical extensions.
enum TestCertificate {
    static func make(
        subject: String, issuer: String, key: P256.Signing.PublicKey, signer: P256.Signing.PrivateKey, isCA: Bool,
        extensions: [(oid: String, value: [UInt8])] = []
    ) -> [UInt8] {
        let ecdsaWithSHA256 = sequence([oid("1.2.840.10045.4.3.2")])
        var serial = SecureRandom.bytes(count: 8)
        serial[0] &= 0x7F
        serial[0] |= 0x01
        let basicConstraints = isCA ? sequence([DER.encode(0x01, [0xFF])]) : sequence([])
        var all: [[UInt8]] = [
            sequence([oid("2.5.29.19"), DER.encode(0x01, [0xFF]), DER.encode(0x04, basicConstraints)]),
            sequence([oid("2.5.29.15"), DER.encode(0x01, [0xFF]), DER.encode(0x04, DER.encode(0x03, isCA ? [0x01, 0x06] : [0x07, 0x80]))]),
        ]
        all += extensions.map { sequence([oid($0.oid), DER.encode(0x04, $0.value)]) }
        let tbs = sequence([
            DER.encode(0xA0, DER.encode(0x02, [0x02])),
            DER.encode(0x02, serial),
            ecdsaWithSHA256,
            name(issuer),
            sequence([DER.encode(0x17, Array("000101000000Z".utf8)), DER.encode(0x17, Array("491231235959Z".utf8))]),
            name(subject),
            key.derRepresentation,
            DER.encode(0xA3, sequence(all)),
        ])
        let signature = try! signer.signature(for: tbs).derRepresentation
        return sequence([tbs, ecdsaWithSHA256, DER.encode(0x03, [0x00] + signature)])
    }

    private static func sequence(_ items: [[UInt8]]) -> [UInt8] { DER.encode(0x30, items.flatMap { $0 }) }

    private static func name(_ commonName: String) -> [UInt8] {
        sequence([DER.encode(0x31, sequence([oid("2.5.4.3"), DER.encode(0x0C, Array(commonName.utf8))]))])
    }

    private static func oid(_ dotted: String) -> [UInt8] {
        let arcs = dotted.split(separator: ".").map { UInt64($0)! }
        var content: [UInt8] = [UInt8(arcs[0] * 40 + arcs[1])]
        for arc in arcs.dropFirst(2) {
            var chunk: [UInt8] = [UInt8(arc & 0x7F)]
            var rest = arc >> 7
            while rest > 0 {
                chunk.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                rest >>= 7
            }
            content += chunk
        }
        return DER.encode(0x06, content)
    }
}
