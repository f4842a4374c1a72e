import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

@Suite("Ed25519 (RFC 8032)")
struct Ed25519Tests {
    /// RFC 8032 §7.1, TEST 1 and TEST 2: (public key, message, signature).
    static let vectors: [(String, String, String)] = [
        (
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        ),
        (
            "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
        ),
    ]

    @Test("RFC 8032 §7.1 signatures verify; a changed message, signature or key does not")
    func rfc8032() throws {
        for (key, message, signature) in Self.vectors {
            let publicKey = try Ed25519.Signing.PublicKey(rawRepresentation: [UInt8](hex: key))
            let signature = [UInt8](hex: signature)
            #expect(publicKey.isValidSignature(signature, for: [UInt8](hex: message)))
            #expect(!publicKey.isValidSignature(signature, for: [UInt8](hex: message) + [0]))
            var flipped = signature
            flipped[10] ^= 1
            #expect(!publicKey.isValidSignature(flipped, for: [UInt8](hex: message)))
            #expect(!publicKey.isValidSignature(signature.dropLast(), for: [UInt8](hex: message)))
            // S + L (not reduced) must be refused: a signature has one valid form.
            var sPlusL = signature
            let order: [UInt8] = [UInt8](hex: "edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")
            var carry = 0
            for index in 0..<32 {
                let sum = Int(sPlusL[32 + index]) + Int(order[index]) + carry
                sPlusL[32 + index] = UInt8(sum & 0xFF)
                carry = sum >> 8
            }
            #expect(!publicKey.isValidSignature(sPlusL, for: [UInt8](hex: message)))
        }
    }

    @Test("a generated key signs and verifies; keys of another length are refused")
    func roundTrip() throws {
        let key = try Ed25519.Signing.PrivateKey()
        let signature = try key.signature(for: [1, 2, 3])
        #expect(signature.count == 64)
        #expect(key.publicKey.isValidSignature(signature, for: [1, 2, 3]))
        #expect(!key.publicKey.isValidSignature(signature, for: [1, 2]))
        #expect(throws: CryptoError.malformedKey()) { try Ed25519.Signing.PublicKey(rawRepresentation: [UInt8](repeating: 1, count: 31)) }
        #expect(throws: CryptoError.malformedKey()) { try Ed25519.Signing.PublicKey(rawRepresentation: [UInt8](repeating: 1, count: 33)) }
    }
}
