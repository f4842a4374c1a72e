import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

/// Every decoder gets at least 100,000 mutated inputs per family (seeded, so failures
/// reproduce; set LATCHKEY_FUZZ_VERBOSE=1 to print each input before it is tried). An input
/// may be accepted or refused, but a refusal must be a `CryptoError` with the decoder's code,
/// never another error, a crash or a hang.
@Suite("Hostile input", .timeLimit(.minutes(1)))
struct HostileInputTests {
    static let iterations = 100_000

    /// Counts outcomes and checks that every refusal carries the expected code.
    final class Tally {
        var accepted = 0
        var refused = 0
        var unexpected: [String] = []

        func record(_ expected: CryptoError.Code, _ label: String, _ body: () throws -> Void) {
            do {
                try body()
                accepted += 1
            } catch let error as CryptoError where error.code == expected {
                refused += 1
            } catch {
                if unexpected.count < 10 { unexpected.append("\(label): \(error)") }
            }
        }

        func check(total: Int, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(unexpected == [], sourceLocation: sourceLocation)
            #expect(accepted + refused == total, sourceLocation: sourceLocation)
            // Both paths ran: the mutations are neither all harmless nor all fatal.
            #expect(refused > total / 2, sourceLocation: sourceLocation)
            #expect(accepted > 0, sourceLocation: sourceLocation)
        }
    }

    /// Wraps DER in PEM under `label`.
    static func pem(_ label: String, _ der: [UInt8]) -> String {
        "-----BEGIN \(label)-----\n\(Data(der).base64EncodedString(options: .lineLength64Characters))\n-----END \(label)-----\n"
    }

    @Test("P-256 public keys: X9.63, raw, x/y, SPKI DER, PEM")
    func p256PublicKeys() {
        let keys = (0..<4).map { _ in P256.Signing.PrivateKey().publicKey }
        var mutator = Mutator(seed: 0x5032_3536_5055_42)
        let tally = Tally()
        let share = Self.iterations / 5
        let code = CryptoError.Code.malformedKey
        mutator.run(share, seeds: keys.map(\.x963Representation), label: "x963") { input in
            tally.record(code, "x963") { _ = try P256.Signing.PublicKey(x963Representation: input) }
        }
        mutator.run(share, seeds: keys.map(\.rawRepresentation), label: "raw") { input in
            tally.record(code, "raw") { _ = try P256.Signing.PublicKey(rawRepresentation: input) }
        }
        mutator.run(share, seeds: keys.map(\.rawRepresentation), label: "x/y") { input in
            let split = min(input.count, 32)
            tally.record(code, "x/y") { _ = try P256.Signing.PublicKey(x: input.prefix(split), y: input.dropFirst(split)) }
        }
        mutator.run(share, seeds: keys.map(\.derRepresentation), label: "spki") { input in
            tally.record(code, "spki") { _ = try P256.Signing.PublicKey(derRepresentation: input) }
        }
        // Half the PEM inputs mutate the text, half mutate the DER inside valid base64.
        mutator.run(share / 2, seeds: keys.map { Array($0.pemRepresentation.utf8) }, label: "pem text") { input in
            tally.record(code, "pem text") { _ = try P256.Signing.PublicKey(pemRepresentation: String(decoding: input, as: UTF8.self)) }
        }
        mutator.run(share - share / 2, seeds: keys.map(\.derRepresentation), label: "pem der") { input in
            tally.record(code, "pem der") { _ = try P256.Signing.PublicKey(pemRepresentation: Self.pem("PUBLIC KEY", input)) }
        }
        tally.check(total: Self.iterations)
    }

    @Test("P-256 private keys: PKCS#8 DER and PEM, SEC1 PEM, raw")
    func p256PrivateKeys() throws {
        let keys = [
            try P256.Signing.PrivateKey(pemRepresentation: fixtures.text("p256-genpkey.p8")),
            P256.Signing.PrivateKey(),
        ]
        let sec1 = [UInt8](try #require(Data(base64Encoded: fixtures.text("p256-genpkey-sec1.pem")
            .split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined())))
        var mutator = Mutator(seed: 0x5032_3536_5052_49)
        let tally = Tally()
        let code = CryptoError.Code.malformedKey
        let share = Self.iterations / 4
        mutator.run(share, seeds: keys.map(\.derRepresentation), label: "pkcs8") { input in
            tally.record(code, "pkcs8") { _ = try P256.Signing.PrivateKey(derRepresentation: input) }
        }
        mutator.run(share, seeds: keys.map(\.derRepresentation), label: "pkcs8 pem") { input in
            tally.record(code, "pkcs8 pem") { _ = try P256.Signing.PrivateKey(pemRepresentation: Self.pem("PRIVATE KEY", input)) }
        }
        mutator.run(share / 2, seeds: [sec1], label: "sec1 pem") { input in
            tally.record(code, "sec1 pem") { _ = try P256.Signing.PrivateKey(pemRepresentation: Self.pem("EC PRIVATE KEY", input)) }
        }
        mutator.run(share - share / 2, seeds: keys.map { Array($0.pemRepresentation.utf8) }, label: "pem text") { input in
            tally.record(code, "pem text") { _ = try P256.Signing.PrivateKey(pemRepresentation: String(decoding: input, as: UTF8.self)) }
        }
        mutator.run(share, seeds: keys.map(\.rawRepresentation), label: "raw") { input in
            tally.record(code, "raw") { _ = try P256.Signing.PrivateKey(rawRepresentation: input) }
        }
        tally.check(total: Self.iterations)
    }

    @Test("ECDSA signatures: DER and raw, verified when they parse")
    func ecdsaSignatures() throws {
        let key = P256.Signing.PrivateKey()
        let message = Array("hostile".utf8)
        let signatures = try (0..<8).map { _ in try key.signature(for: message) }
        var mutator = Mutator(seed: 0x4543_4453_41)
        let tally = Tally()
        var verified = 0
        let code = CryptoError.Code.malformedSignature
        mutator.run(Self.iterations / 2, seeds: signatures.map(\.derRepresentation), label: "der") { input in
            tally.record(code, "der") {
                let signature = try P256.Signing.ECDSASignature(derRepresentation: input)
                if key.publicKey.isValidSignature(signature, for: message) { verified += 1 }
            }
        }
        mutator.run(Self.iterations / 2, seeds: signatures.map(\.rawRepresentation), label: "raw") { input in
            tally.record(code, "raw") {
                let signature = try P256.Signing.ECDSASignature(rawRepresentation: input)
                if key.publicKey.isValidSignature(signature, for: message) { verified += 1 }
            }
        }
        tally.check(total: Self.iterations)
        // Only unchanged signatures verify (a truncation to full length changes nothing).
        #expect(verified < Self.iterations / 100)
    }

    @Test("RSA public keys: SPKI DER, PKCS#1 DER, PEM, modulus and exponent")
    func rsaPublicKeys() throws {
        let key = try RSA.Signing.PublicKey(pemRepresentation: fixtures.text("rsa2048-public.pem"))
        let pkcs1 = [UInt8](try #require(Data(base64Encoded: fixtures.text("rsa2048-rsapublickey.pem")
            .split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined())))
        var mutator = Mutator(seed: 0x5253_4150_5542)
        let tally = Tally()
        let code = CryptoError.Code.malformedKey
        let share = Self.iterations / 4
        let signature = try RSA.Signing.PrivateKey(pemRepresentation: fixtures.text("rsa2048-pkcs8.pem"))
            .signature(for: [1] as [UInt8], padding: .pkcs1v1_5)
        mutator.run(share, seeds: [key.derRepresentation], label: "spki") { input in
            tally.record(code, "spki") { _ = try RSA.Signing.PublicKey(derRepresentation: input) }
        }
        mutator.run(share, seeds: [pkcs1], label: "pkcs1") { input in
            tally.record(code, "pkcs1") { _ = try RSA.Signing.PublicKey(derRepresentation: input) }
        }
        mutator.run(share / 2, seeds: [Array(key.pemRepresentation.utf8)], label: "pem text") { input in
            tally.record(code, "pem text") { _ = try RSA.Signing.PublicKey(pemRepresentation: String(decoding: input, as: UTF8.self)) }
        }
        mutator.run(share - share / 2, seeds: [pkcs1], label: "pem der") { input in
            tally.record(code, "pem der") { _ = try RSA.Signing.PublicKey(pemRepresentation: Self.pem("RSA PUBLIC KEY", input)) }
        }
        // Mutated moduli mostly still make a key; verifying with one must simply say no.
        var iteration = 0
        mutator.run(share, seeds: [key.modulus, key.exponent], label: "n/e") { input in
            iteration += 1
            let (modulus, exponent) = iteration % 2 == 0 ? (input, key.exponent) : (key.modulus, input)
            tally.record(code, "n/e") {
                let mutated = try RSA.Signing.PublicKey(modulus: modulus, exponent: exponent)
                if iteration % 16 == 0 {
                    _ = mutated.isValidSignature(signature, for: [1] as [UInt8], padding: .pkcs1v1_5)
                }
            }
        }
        tally.check(total: Self.iterations)
    }

    @Test("AES-GCM sealed boxes: combined form, opened when it parses")
    func sealedBoxes() throws {
        let key = SecureRandom.bytes(count: 32)
        let boxes = try [0, 1, 16, 100].map { try AESGCM.seal(SecureRandom.bytes(count: $0), key: key).combined }
        var mutator = Mutator(seed: 0x4145_5347_434D)
        var opened = 0
        var refused = 0
        var unexpected: [String] = []
        mutator.run(Self.iterations, seeds: boxes, label: "combined") { input in
            do {
                let box = try AESGCM.SealedBox(combined: input)
                _ = try AESGCM.open(box, key: key)
                opened += 1
            } catch let error as CryptoError where error.code == .malformedInput || error.code == .authenticationFailure {
                refused += 1
            } catch {
                if unexpected.count < 10 { unexpected.append("\(error)") }
            }
        }
        #expect(unexpected == [])
        #expect(opened + refused == Self.iterations)
        // Only unchanged boxes open.
        #expect(opened < Self.iterations / 100)
    }

    @Test("PHC strings: parsed, and verified when cheap")
    func phcStrings() throws {
        let small = Argon2id.Parameters(memoryKiB: 8, iterations: 1, parallelism: 1)
        let seeds = try [
            Argon2id.hash(password: Array("pw".utf8), parameters: small),
            Argon2id.hash(password: Array("pw".utf8), parameters: small, salt: Array("12345678".utf8)),
            "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHQxNmJ5dGVzIQ$tPXA8KRaMxUDqoVFOkz5qceiysamiMSLxBrcC5sAtmo",
        ].map { Array($0.utf8) }
        var mutator = Mutator(seed: 0x5048_43)
        let tally = Tally()
        var verifications = 0
        mutator.run(Self.iterations, seeds: seeds, label: "phc") { input in
            let text = String(decoding: input, as: UTF8.self)
            tally.record(.malformedInput, "phc") {
                let parameters = try Argon2id.parameters(ofPHCString: text)
                // Verifying runs Argon2 with the string's own cost, so only the cheap ones.
                if parameters.memoryKiB <= 64, parameters.iterations <= 2, parameters.parallelism <= 2 {
                    verifications += 1
                    _ = try Argon2id.verify(password: Array("pw".utf8), phcString: text)
                }
            }
        }
        tally.check(total: Self.iterations)
        #expect(verifications > 0)
    }
}
