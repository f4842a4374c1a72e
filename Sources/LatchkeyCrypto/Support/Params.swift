internal import CLatchkeyOpenSSL

/// Builders for `OSSL_PARAM` entries.
///
/// An `OSSL_PARAM` stores pointers to its key and value, not copies, so keys are `StaticString`
/// literals (static storage, valid forever) rather than the Swift `String`s that the imported
/// `OSSL_*_PARAM_*` macros become. Each name below is the macro's value; `ParamName.mismatches()`
/// compares them with the macros in the tests.
enum ParamName {
    static let groupName: StaticString = "group"  // OSSL_PKEY_PARAM_GROUP_NAME
    static let publicKey: StaticString = "pub"  // OSSL_PKEY_PARAM_PUB_KEY
    static let privateKey: StaticString = "priv"  // OSSL_PKEY_PARAM_PRIV_KEY
    static let rsaN: StaticString = "n"  // OSSL_PKEY_PARAM_RSA_N
    static let rsaE: StaticString = "e"  // OSSL_PKEY_PARAM_RSA_E
    static let rsaD: StaticString = "d"  // OSSL_PKEY_PARAM_RSA_D
    static let rsaFactor1: StaticString = "rsa-factor1"  // OSSL_PKEY_PARAM_RSA_FACTOR1
    static let rsaFactor2: StaticString = "rsa-factor2"  // OSSL_PKEY_PARAM_RSA_FACTOR2
    static let rsaExponent1: StaticString = "rsa-exponent1"  // OSSL_PKEY_PARAM_RSA_EXPONENT1
    static let rsaExponent2: StaticString = "rsa-exponent2"  // OSSL_PKEY_PARAM_RSA_EXPONENT2
    static let rsaCoefficient1: StaticString = "rsa-coefficient1"  // OSSL_PKEY_PARAM_RSA_COEFFICIENT1
    static let digest: StaticString = "digest"  // OSSL_MAC_PARAM_DIGEST, OSSL_KDF_PARAM_DIGEST
    static let key: StaticString = "key"  // OSSL_KDF_PARAM_KEY
    static let salt: StaticString = "salt"  // OSSL_KDF_PARAM_SALT
    static let info: StaticString = "info"  // OSSL_KDF_PARAM_INFO
    static let aeadIVLength: StaticString = "ivlen"  // OSSL_CIPHER_PARAM_AEAD_IVLEN

    /// Each name next to the imported macro it stands for; a test asserts they agree.
    static var pairs: [(StaticString, String)] {
        [
            (groupName, OSSL_PKEY_PARAM_GROUP_NAME), (publicKey, OSSL_PKEY_PARAM_PUB_KEY),
            (privateKey, OSSL_PKEY_PARAM_PRIV_KEY), (rsaN, OSSL_PKEY_PARAM_RSA_N),
            (rsaE, OSSL_PKEY_PARAM_RSA_E), (rsaD, OSSL_PKEY_PARAM_RSA_D),
            // The RSA factor names are built by string-literal concatenation in core_names.h,
            // which Swift does not import; the digits make them easy to check by eye.
            (digest, OSSL_MAC_PARAM_DIGEST), (digest, OSSL_KDF_PARAM_DIGEST),
            (key, OSSL_KDF_PARAM_KEY), (salt, OSSL_KDF_PARAM_SALT), (info, OSSL_KDF_PARAM_INFO),
            (aeadIVLength, OSSL_CIPHER_PARAM_AEAD_IVLEN),
        ]
    }

    /// The names whose literal disagrees with the macro (empty when all is well).
    static func mismatches() -> [String] {
        pairs.compactMap { name, macro in
            name.description == macro ? nil : "\(name) ≠ \(macro)"
        }
    }
}

enum Param {
    /// A UTF-8 string parameter whose key and value both live in static storage.
    static func utf8(_ key: StaticString, _ value: StaticString) -> OSSL_PARAM {
        OSSL_PARAM_construct_utf8_string(
            cString(key), UnsafeMutableRawPointer(mutating: value.utf8Start)
                .assumingMemoryBound(to: CChar.self), value.utf8CodeUnitCount)
    }

    /// An octet-string parameter pointing into `buffer`, which must outlive every use of the
    /// parameter. OpenSSL only reads it.
    static func octets(_ key: StaticString, _ buffer: UnsafeRawBufferPointer) -> OSSL_PARAM {
        OSSL_PARAM_construct_octet_string(
            cString(key), UnsafeMutableRawPointer(mutating: buffer.baseAddress), buffer.count)
    }

    /// A `size_t` parameter pointing at `value`, which must outlive every use of the parameter.
    static func size(_ key: StaticString, _ value: UnsafeMutablePointer<Int>) -> OSSL_PARAM {
        OSSL_PARAM_construct_size_t(cString(key), value)
    }

    /// The terminator every parameter array ends with.
    static func end() -> OSSL_PARAM {
        OSSL_PARAM_construct_end()
    }

    static func cString(_ string: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(string.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
