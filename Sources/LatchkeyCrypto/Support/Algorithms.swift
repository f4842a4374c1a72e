internal import CLatchkeyOpenSSL

/// Algorithm objects fetched from the default provider once per process.
///
/// OpenSSL 3 looks an implementation up in its method store on every implicit fetch (for example
/// `EVP_sha256()` used with `EVP_DigestInit_ex`), which takes locks and costs microseconds per
/// call. An explicitly fetched object skips that, and it is immutable and reference counted, so
/// one per process is shared by all threads. These are never freed: they live as long as the
/// process.
enum Algorithms {
    static let sha256 = FetchedAlgorithm(digest: "SHA256")
    static let sha384 = FetchedAlgorithm(digest: "SHA384")
    static let sha512 = FetchedAlgorithm(digest: "SHA512")
    static let hmac = FetchedAlgorithm(mac: "HMAC")
    static let hkdf = FetchedAlgorithm(kdf: "HKDF")
    static let aes128GCM = FetchedAlgorithm(cipher: "AES-128-GCM")
    static let aes192GCM = FetchedAlgorithm(cipher: "AES-192-GCM")
    static let aes256GCM = FetchedAlgorithm(cipher: "AES-256-GCM")
}

/// One fetched `EVP_MD`, `EVP_MAC`, `EVP_KDF` or `EVP_CIPHER`.
///
/// `@unchecked Sendable`: the object is never modified after the fetch, and OpenSSL 3 documents
/// fetched algorithm objects as safe to share between threads.
final class FetchedAlgorithm: @unchecked Sendable {
    let pointer: OpaquePointer

    /// A missing algorithm means a broken OpenSSL installation, which no caller can handle.
    private static func require(_ pointer: OpaquePointer?, _ name: String) -> OpaquePointer {
        guard let pointer else {
            fatalError("OpenSSL has no \(name) in its default provider: \(OpenSSLErrors.drain())")
        }
        return pointer
    }

    init(digest name: String) {
        pointer = Self.require(EVP_MD_fetch(nil, name, nil), name)
    }

    init(mac name: String) {
        pointer = Self.require(EVP_MAC_fetch(nil, name, nil), name)
    }

    init(kdf name: String) {
        pointer = Self.require(EVP_KDF_fetch(nil, name, nil), name)
    }

    init(cipher name: String) {
        pointer = Self.require(EVP_CIPHER_fetch(nil, name, nil), name)
    }
}
