internal import CLatchkeyOpenSSL
import Synchronization

/// An `EVP_PKEY` owned by Swift: freed when the last reference goes.
///
/// `@unchecked Sendable`: the key is never modified after `init`, and OpenSSL 3 supports
/// concurrent read-only use of one `EVP_PKEY` (creating operation contexts, signing, verifying,
/// reading parameters) from many threads.
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of a key the caller received from OpenSSL.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// Builds a key from `OSSL_PARAM`s (`EVP_PKEY_fromdata`).
    ///
    /// - Parameters:
    ///   - type: The key type, "EC" or "RSA".
    ///   - selection: `EVP_PKEY_PUBLIC_KEY` or `EVP_PKEY_KEYPAIR`.
    ///   - parameters: The parameter array, ending with `Param.end()`; OpenSSL copies what it
    ///     needs.
    ///   - code: The error code to throw when OpenSSL rejects the parameters.
    /// - Throws: `code` with OpenSSL's reason when the data does not make a key.
    static func fromData(
        type: String, selection: Int32, parameters: UnsafeMutablePointer<OSSL_PARAM>, code: CryptoError.Code
    ) throws -> EVPKey {
        OpenSSLErrors.clear()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else {
            throw CryptoError.openSSL(.library, "EVP_PKEY_CTX_new_from_name")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_fromdata_init(context) == 1 else {
            throw CryptoError.openSSL(.library, "EVP_PKEY_fromdata_init")
        }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata(context, &key, selection, parameters) == 1, let key else {
            throw CryptoError.openSSL(code, "EVP_PKEY_fromdata")
        }
        return EVPKey(taking: key)
    }

    /// Builds a key from big-endian integers (`OSSL_PARAM_BLD_push_BN`, then
    /// `EVP_PKEY_fromdata`); the temporary `BIGNUM`s are cleared before they are freed.
    ///
    /// - Parameters:
    ///   - type: The key type, "RSA".
    ///   - selection: `KeySelection.publicKey` or `.keyPair`.
    ///   - numbers: Parameter names and big-endian magnitudes.
    ///   - code: The error code to throw when OpenSSL rejects the numbers.
    /// - Throws: `code` with OpenSSL's reason, or ``CryptoError/Code-swift.struct/library``.
    static func fromBigNumbers(
        type: String, selection: Int32, numbers: [(StaticString, [UInt8])], code: CryptoError.Code
    ) throws -> EVPKey {
        OpenSSLErrors.clear()
        guard let builder = OSSL_PARAM_BLD_new() else {
            throw CryptoError.openSSL(.library, "OSSL_PARAM_BLD_new")
        }
        defer { OSSL_PARAM_BLD_free(builder) }
        var bigNumbers: [OpaquePointer] = []
        defer { bigNumbers.forEach { BN_clear_free($0) } }
        for (name, bytes) in numbers {
            guard bytes.count <= Int(Int32.max),
                let number = bytes.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) })
            else {
                throw CryptoError.openSSL(.library, "BN_bin2bn")
            }
            bigNumbers.append(number)
            guard OSSL_PARAM_BLD_push_BN(builder, Param.cString(name), number) == 1 else {
                throw CryptoError.openSSL(.library, "OSSL_PARAM_BLD_push_BN")
            }
        }
        guard let parameters = OSSL_PARAM_BLD_to_param(builder) else {
            throw CryptoError.openSSL(.library, "OSSL_PARAM_BLD_to_param")
        }
        defer { OSSL_PARAM_free(parameters) }
        return try fromData(type: type, selection: selection, parameters: parameters, code: code)
    }

    /// Generates a key (`EVP_PKEY_generate`) after `configure` has set the key-generation
    /// parameters on the context.
    ///
    /// - Throws: ``CryptoError/Code-swift.struct/library`` when OpenSSL fails, or what
    ///   `configure` throws.
    static func generate(
        type: String, configure: (OpaquePointer) throws -> Void
    ) throws -> EVPKey {
        OpenSSLErrors.clear()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else {
            throw CryptoError.openSSL(.library, "EVP_PKEY_CTX_new_from_name")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else {
            throw CryptoError.openSSL(.library, "EVP_PKEY_keygen_init")
        }
        try configure(context)
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else {
            throw CryptoError.openSSL(.library, "EVP_PKEY_generate")
        }
        return EVPKey(taking: key)
    }

    /// An octet-string parameter of the key, such as the encoded EC public point.
    ///
    /// - Parameters:
    ///   - name: The parameter name.
    ///   - capacity: The largest length expected.
    /// - Throws: ``CryptoError/Code-swift.struct/library`` when the key has no such parameter.
    func octetString(_ name: StaticString, capacity: Int) throws -> [UInt8] {
        OpenSSLErrors.clear()
        var length = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            if EVP_PKEY_get_octet_string_param(pointer, Param.cString(name), buffer.baseAddress, capacity, &length) != 1 {
                length = -1
            }
            initialized = max(0, min(length, capacity))
        }
        guard length >= 0 else { throw CryptoError.openSSL(.library, "EVP_PKEY_get_octet_string_param(\(name))") }
        return bytes
    }

    /// A big-number parameter of the key as big-endian bytes, left-padded to `minimumCount`.
    ///
    /// The temporary `BIGNUM` is cleared before it is freed, since it may hold a private value.
    ///
    /// - Throws: ``CryptoError/Code-swift.struct/library`` when the key has no such parameter.
    func bigNumber(_ name: StaticString, minimumCount: Int = 0) throws -> [UInt8] {
        OpenSSLErrors.clear()
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pointer, Param.cString(name), &number) == 1, let number else {
            throw CryptoError.openSSL(.library, "EVP_PKEY_get_bn_param(\(name))")
        }
        defer { BN_clear_free(number) }
        let count = max(minimumCount, (Int(BN_num_bits(number)) + 7) / 8)
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = BN_bn2binpad(number, buffer.baseAddress, Int32(count)) == count ? count : 0
        }
    }
}

/// `EVP_PKEY_CTX`s for one key, each set up for one operation and reused across calls.
///
/// OpenSSL 3 fetches the signature implementation and builds provider state in
/// `EVP_PKEY_sign_init`/`EVP_PKEY_verify_init`: measured on the development machine, creating
/// and setting up an RSA verification context costs 4–7 µs, against about 21 µs for the
/// RSA-2048 verification itself. A context, once set up, can sign or verify any number of times
/// but is not thread-safe, so the pool hands each one to a single caller at a time. Contexts are
/// created on demand; at most ``capacity`` idle ones are kept.
final class OperationContextPool: Sendable {
    /// Enough for every core of a large machine to have one in flight.
    static let capacity = 16

    private let key: EVPKey
    private let setUp: @Sendable (OpaquePointer) -> Bool
    private let operation: String
    private let idle = Mutex<[OperationContext]>([])

    /// - Parameters:
    ///   - key: The key every context works with.
    ///   - operation: A name for errors, for example "ECDSA verify".
    ///   - setUp: Initialises a fresh context (`EVP_PKEY_verify_init`, padding, digest) and
    ///     says whether that worked.
    init(key: EVPKey, operation: String, setUp: @escaping @Sendable (OpaquePointer) -> Bool) {
        self.key = key
        self.operation = operation
        self.setUp = setUp
    }

    /// Runs `body` with a context nobody else is using, then keeps the context for reuse.
    ///
    /// A context whose `body` threw is dropped rather than reused, in case the failure left it in
    /// an odd state.
    ///
    /// - Throws: ``CryptoError/Code-swift.struct/library`` when a new context cannot be set up,
    ///   or what `body` throws.
    func withContext<Result>(_ body: (OpaquePointer) throws -> Result) throws -> Result {
        let context = try idle.withLock { $0.popLast() } ?? makeContext()
        let result = try body(context.pointer)
        idle.withLock { contexts in
            if contexts.count < Self.capacity { contexts.append(context) }
        }
        return result
    }

    private func makeContext() throws -> OperationContext {
        OpenSSLErrors.clear()
        guard let pointer = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
            throw CryptoError.openSSL(.library, "EVP_PKEY_CTX_new_from_pkey")
        }
        let context = OperationContext(taking: pointer)
        guard setUp(pointer) else {
            throw CryptoError.openSSL(.library, "setting up \(operation)")
        }
        return context
    }
}

/// One `EVP_PKEY_CTX`, freed with the object.
///
/// `@unchecked Sendable` although a context is mutable and not thread-safe: this breaks the
/// STYLE §6 rule on purpose, because moving contexts between threads is the point of the pool.
/// It is sound because a context is only ever reachable from one place at a time, either the
/// pool's locked array or the single `withContext` call that took it out.
final class OperationContext: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_CTX_free(pointer)
    }
}

/// `EVP_PKEY_fromdata` selections. The `EVP_PKEY_PUBLIC_KEY` and `EVP_PKEY_KEYPAIR` macros are
/// parenthesised combinations of other macros, which Swift does not import; these spell out the
/// same combinations from the single bits it does import.
enum KeySelection {
    static let parameters = Int32(OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS)
    static let publicKey = parameters | Int32(OSSL_KEYMGMT_SELECT_PUBLIC_KEY)
    static let keyPair = publicKey | Int32(OSSL_KEYMGMT_SELECT_PRIVATE_KEY)
}
