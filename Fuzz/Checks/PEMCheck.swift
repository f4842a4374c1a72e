import LatchkeyCrypto

extension FuzzTarget {
    /// The PEM decoder and the PEM key imports.
    ///
    /// Properties: a block the decoder accepts survives encode-then-decode unchanged; any bytes
    /// wrapped as PEM decode back to themselves; every key a PEM import accepts re-imports from
    /// its own PEM as the same key.
    public static let pem = FuzzTarget(name: "pem") { (input) throws(PropertyFailure) in
        let text = String(decoding: input, as: UTF8.self)
        let labels: Set<String> = ["PUBLIC KEY", "PRIVATE KEY", "EC PRIVATE KEY", "RSA PUBLIC KEY", "RSA PRIVATE KEY"]
        let block = PEM.decode(text, labels: labels)
        if let (label, der) = block {
            let again = PEM.decode(PEM.encode(label: label, der: der), labels: [label])
            try require(again?.label == label && again?.der == der, "a decoded PEM block does not survive a round trip")
        }
        if !input.isEmpty {
            let wrapped = PEM.decode(PEM.encode(label: "PUBLIC KEY", der: input), labels: ["PUBLIC KEY"])
            try require(wrapped?.der == input, "bytes wrapped as PEM do not decode back")
        }

        if let key = try? P256.Signing.PublicKey(pemRepresentation: text) {
            let again = try? P256.Signing.PublicKey(pemRepresentation: key.pemRepresentation)
            try require(again == key, "a P-256 public key does not re-import from its own PEM")
        }
        if let key = try? P256.Signing.PrivateKey(pemRepresentation: text) {
            let again = try? P256.Signing.PrivateKey(pemRepresentation: key.pemRepresentation)
            try require(again?.rawRepresentation == key.rawRepresentation, "a P-256 private key does not re-import from its own PEM")
        }
        if let key = try? RSA.Signing.PublicKey(pemRepresentation: text) {
            let again = try? RSA.Signing.PublicKey(pemRepresentation: key.pemRepresentation)
            try require(again == key, "an RSA public key does not re-import from its own PEM")
        }
        if let key = try? RSA.Signing.PrivateKey(pemRepresentation: text) {
            let again = try? RSA.Signing.PrivateKey(pemRepresentation: key.pemRepresentation)
            try require(again?.publicKey == key.publicKey, "an RSA private key does not re-import from its own PEM")
        }
        return block != nil ? .accepted : .refused
    }
}
