/// The PHC string format for Argon2 (as the reference implementation's `encoding.c` writes it).
struct PHCString {
    var parameters: Argon2id.Parameters
    var salt: [UInt8]
    var hash: [UInt8]

    /// Longer input cannot be a PHC string within the accepted ranges.
    static let maximumLength = 2048

    var encoded: String {
        "$argon2id$v=19$m=\(parameters.memoryKiB),t=\(parameters.iterations),p=\(parameters.parallelism)$"
            + Base64.encode(salt, padded: false) + "$" + Base64.encode(hash, padded: false)
    }

    init(parameters: Argon2id.Parameters, salt: [UInt8], hash: [UInt8]) {
        self.parameters = parameters
        self.salt = salt
        self.hash = hash
    }

    /// Parses `$argon2id$v=19$m=<m>,t=<t>,p=<p>$<salt>$<hash>` strictly: that field order,
    /// decimal numbers without signs or leading zeros, canonical unpadded base64, no optional
    /// `keyid` or `data` fields.
    ///
    /// - Throws: ``CryptoError/Code-swift.struct/malformedInput`` for anything else, including
    ///   parameters, salt or hash lengths outside the accepted ranges.
    init(parsing text: String) throws {
        let malformed = { (reason: String) in CryptoError.malformedInput("PHC string: \(reason)") }
        let utf8 = Array(text.utf8)
        guard utf8.count <= Self.maximumLength else { throw malformed("too long") }
        let fields = utf8.split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)
        guard fields.count == 6, fields[0].isEmpty else { throw malformed("expected six $-separated fields") }
        guard fields[1].elementsEqual("argon2id".utf8) else { throw malformed("only argon2id is supported") }
        guard fields[2].elementsEqual("v=19".utf8) else { throw malformed("only version 19 is supported") }
        let costs = fields[3].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard costs.count == 3,
            let memory = Self.number(costs[0], name: "m"),
            let iterations = Self.number(costs[1], name: "t"),
            let parallelism = Self.number(costs[2], name: "p")
        else { throw malformed("expected m=<KiB>,t=<iterations>,p=<lanes>") }
        parameters = Argon2id.Parameters(memoryKiB: memory, iterations: iterations, parallelism: parallelism)
        try parameters.validate(.malformedInput)
        guard let salt = Base64.decode(fields[4], padded: false), Argon2id.saltByteCounts.contains(salt.count) else {
            throw malformed("the salt must be unpadded base64 of 8 to 64 bytes")
        }
        guard let hash = Base64.decode(fields[5], padded: false), Argon2id.outputByteCounts.contains(hash.count) else {
            throw malformed("the hash must be unpadded base64 of 4 to 1024 bytes")
        }
        self.salt = salt
        self.hash = hash
    }

    /// Reads `name=<decimal>` with a value that fits 32 bits.
    private static func number(_ field: ArraySlice<UInt8>, name: String) -> UInt32? {
        let prefix = Array((name + "=").utf8)
        guard field.starts(with: prefix) else { return nil }
        let digits = field.dropFirst(prefix.count)
        guard (1...10).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }),
            digits.first != 0x30 || digits.count == 1
        else { return nil }
        let value = digits.reduce(UInt64(0)) { $0 * 10 + UInt64($1 - 0x30) }
        return UInt32(exactly: value)
    }
}
