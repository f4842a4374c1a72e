internal import CLatchkeyArgon2
package import FoundationEssentials

/// Argon2id password hashing (RFC 9106) through the reference implementation, libargon2.
///
/// Hashes are stored as PHC strings, `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`, with
/// salt and hash in unpadded standard base64, as the reference `argon2` tool writes them.
/// Hashing takes tens of milliseconds by design: never call it on an event-loop thread.
package enum Argon2id {
    /// The cost parameters (RFC 9106 §3.1).
    ///
    /// Accepted ranges, which also bound what a stored PHC string can make ``verify(password:phcString:)``
    /// do: memory 8 × parallelism KiB to 4 GiB, 1 to 1024 iterations, parallelism 1 to 64.
    package struct Parameters: Sendable, Hashable {
        /// m, memory in KiB.
        package var memoryKiB: UInt32
        /// t, passes over the memory.
        package var iterations: UInt32
        /// p, lanes computed in parallel (one thread each).
        package var parallelism: UInt32

        /// Creates parameters; they are checked when used.
        ///
        /// - Parameters:
        ///   - memoryKiB: m, memory in KiB.
        ///   - iterations: t, passes over the memory.
        ///   - parallelism: p, lanes.
        package init(memoryKiB: UInt32, iterations: UInt32, parallelism: UInt32) {
            self.memoryKiB = memoryKiB
            self.iterations = iterations
            self.parallelism = parallelism
        }

        /// OWASP's minimum for Argon2id: 19 MiB, 2 iterations, 1 lane (OWASP Password Storage
        /// Cheat Sheet).
        package static let owaspMinimum = Parameters(memoryKiB: 19456, iterations: 2, parallelism: 1)

        static let maximumMemoryKiB: UInt32 = 4 * 1024 * 1024
        static let maximumIterations: UInt32 = 1024
        static let maximumParallelism: UInt32 = 64

        /// Throws unless the parameters are in the accepted ranges.
        func validate(_ code: CryptoError.Code) throws {
            guard (1...Self.maximumParallelism).contains(parallelism) else {
                throw CryptoError(code, "Argon2id parallelism must be 1 to 64")
            }
            guard (8 * parallelism...Self.maximumMemoryKiB).contains(memoryKiB) else {
                throw CryptoError(code, "Argon2id memory must be 8 × parallelism KiB to 4 GiB")
            }
            guard (1...Self.maximumIterations).contains(iterations) else {
                throw CryptoError(code, "Argon2id iterations must be 1 to 1024")
            }
        }
    }

    /// Salt lengths accepted (argon2's minimum is 8; PHC strings rarely exceed 32).
    static let saltByteCounts = 8...64
    /// Output lengths accepted (argon2's minimum is 4).
    static let outputByteCounts = 4...1024
    /// Bytes of a generated salt and of the hash in a PHC string made by ``hash(password:parameters:salt:)``.
    static let defaultSaltByteCount = 16
    static let defaultHashByteCount = 32

    /// Hashes a password into a PHC string.
    ///
    /// - Parameters:
    ///   - password: The password, for example its UTF-8 bytes.
    ///   - parameters: The cost; OWASP's minimum by default.
    ///   - salt: 8 to 64 bytes; nil picks 16 random bytes (the normal case).
    /// - Returns: `$argon2id$v=19$m=…,t=…,p=…$salt$hash` with a 32-byte hash.
    /// - Throws: ``CryptoError/Code-swift.struct/invalidParameter`` for out-of-range parameters
    ///   or salt; ``CryptoError/Code-swift.struct/library`` when argon2 fails (for example out
    ///   of memory).
    package static func hash(
        password: some ContiguousBytes, parameters: Parameters = .owaspMinimum, salt: [UInt8]? = nil
    ) throws -> String {
        let salt = salt ?? SecureRandom.bytes(count: defaultSaltByteCount)
        guard saltByteCounts.contains(salt.count) else {
            throw CryptoError.invalidParameter("Argon2id salts are 8 to 64 bytes")
        }
        let hash = try derive(password: password, salt: salt, parameters: parameters, outputByteCount: defaultHashByteCount)
        return PHCString(parameters: parameters, salt: salt, hash: hash).encoded
    }

    /// Checks a password against a PHC string, in constant time.
    ///
    /// - Parameters:
    ///   - password: The password offered.
    ///   - phcString: A string from ``hash(password:parameters:salt:)`` or another Argon2id
    ///     implementation using the same format.
    /// - Returns: Whether the password matches.
    /// - Throws: ``CryptoError/Code-swift.struct/malformedInput`` when `phcString` is not an
    ///   Argon2id v19 PHC string within the accepted ranges; ``CryptoError/Code-swift.struct/library``
    ///   when argon2 fails.
    package static func verify(password: some ContiguousBytes, phcString: String) throws -> Bool {
        let phc = try PHCString(parsing: phcString)
        let computed = try derive(
            password: password, salt: phc.salt, parameters: phc.parameters, outputByteCount: phc.hash.count)
        return ConstantTime.equals(computed, phc.hash)
    }

    /// The cost parameters a PHC string was made with, so a caller can rehash after a
    /// successful login when they are below the current policy.
    ///
    /// - Parameter ofPHCString: The stored string.
    /// - Returns: Its parameters.
    /// - Throws: ``CryptoError/Code-swift.struct/malformedInput`` as ``verify(password:phcString:)`` does.
    package static func parameters(ofPHCString phcString: String) throws -> Parameters {
        try PHCString(parsing: phcString).parameters
    }

    /// A PHC string that no password verifies against: a random salt and a random tag at
    /// `parameters`. Verifying against it costs exactly what verifying against a real hash at
    /// those parameters costs, which is what checking an unknown user needs (docs/security.md S13),
    /// without hashing anything to make it.
    package static func unmatchablePHCString(parameters: Parameters) -> String {
        PHCString(parameters: parameters, salt: SecureRandom.bytes(count: 16), hash: SecureRandom.bytes(count: 32)).encoded
    }

    /// Computes raw Argon2id output with every input of RFC 9106 §3.1 (`argon2_ctx`).
    ///
    /// - Parameters:
    ///   - password: P, the message.
    ///   - salt: S, at least 8 bytes.
    ///   - secret: K, an optional secret key (pepper).
    ///   - associatedData: X, optional associated data.
    ///   - parameters: The cost.
    ///   - outputByteCount: T, the tag length, 4 to 1024 bytes.
    /// - Returns: The tag.
    /// - Throws: ``CryptoError/Code-swift.struct/invalidParameter`` for out-of-range inputs;
    ///   ``CryptoError/Code-swift.struct/library`` when argon2 fails.
    package static func derive(
        password: some ContiguousBytes, salt: some ContiguousBytes, secret: [UInt8] = [],
        associatedData: [UInt8] = [], parameters: Parameters, outputByteCount: Int = 32
    ) throws -> [UInt8] {
        try parameters.validate(.invalidParameter)
        guard outputByteCounts.contains(outputByteCount) else {
            throw CryptoError.invalidParameter("Argon2id output is 4 to 1024 bytes")
        }
        var passwordBytes = password.byteArray
        defer { passwordBytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        var saltBytes = salt.byteArray
        var secretBytes = secret
        defer { secretBytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        var associatedBytes = associatedData
        guard saltBytes.count >= 8 else {
            throw CryptoError.invalidParameter("Argon2id salts are at least 8 bytes")
        }
        let limit = Int(UInt32.max)
        guard passwordBytes.count <= limit, saltBytes.count <= limit, secretBytes.count <= limit,
            associatedBytes.count <= limit
        else {
            throw CryptoError.invalidParameter("Argon2id inputs are limited to 4 GiB each")
        }
        var output = [UInt8](repeating: 0, count: outputByteCount)
        let status = output.withUnsafeMutableBufferPointer { out in
            passwordBytes.withUnsafeMutableBufferPointer { pwd in
                saltBytes.withUnsafeMutableBufferPointer { salt in
                    secretBytes.withUnsafeMutableBufferPointer { secret in
                        associatedBytes.withUnsafeMutableBufferPointer { ad in
                            var context = argon2_context(
                                out: out.baseAddress, outlen: UInt32(out.count),
                                pwd: pwd.baseAddress, pwdlen: UInt32(pwd.count),
                                salt: salt.baseAddress, saltlen: UInt32(salt.count),
                                secret: secret.baseAddress, secretlen: UInt32(secret.count),
                                ad: ad.baseAddress, adlen: UInt32(ad.count),
                                t_cost: parameters.iterations, m_cost: parameters.memoryKiB,
                                lanes: parameters.parallelism, threads: parameters.parallelism,
                                version: ARGON2_VERSION_13.rawValue,
                                allocate_cbk: Argon2Memory.allocate, free_cbk: Argon2Memory.deallocate, flags: 0)
                            return argon2_ctx(&context, Argon2_id)
                        }
                    }
                }
            }
        }
        guard status == ARGON2_OK.rawValue else {
            throw CryptoError.library("argon2_ctx failed: \(String(cString: argon2_error_message(status)))")
        }
        return output
    }
}
