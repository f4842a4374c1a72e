internal import CLatchkeyOpenSSL
package import FoundationEssentials

/// An X.509 certificate (RFC 5280), parsed by OpenSSL and read through a few accessors.
///
/// For attestation certificates (WebAuthn §8): their version, subject attributes, extensions,
/// public key, and whether a chain of them leads to a trusted root. The certificate is immutable
/// after `init`. Nothing here decides trust on its own: callers name the roots.
///
/// `@unchecked Sendable`: the `X509` is never modified after `init`; OpenSSL 3 caches decoded
/// extensions under its own lock, so concurrent readers are safe.
package final class X509Certificate: @unchecked Sendable {
    private let pointer: OpaquePointer
    /// The DER bytes the certificate was read from.
    package let derRepresentation: [UInt8]

    /// The most bytes a certificate may have here; attestation certificates are a few kilobytes.
    package static let maximumByteCount = 16 * 1024

    /// Reads a DER certificate.
    ///
    /// - Parameter derRepresentation: The DER bytes, with nothing after them.
    /// - Throws: ``CryptoError/Code-swift.struct/malformedInput`` when OpenSSL cannot parse the
    ///   bytes, they are longer than ``maximumByteCount``, or bytes follow the certificate.
    package init(derRepresentation: some ContiguousBytes) throws {
        let der = derRepresentation.byteArray
        guard !der.isEmpty, der.count <= Self.maximumByteCount else {
            throw CryptoError.malformedInput("a certificate is 1 to \(Self.maximumByteCount) bytes")
        }
        OpenSSLErrors.clear()
        let (certificate, consumed): (OpaquePointer?, Int) = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let certificate = d2i_X509(nil, &cursor, buffer.count)
            let consumed = cursor.map { $0 - buffer.baseAddress! } ?? 0
            return (certificate, consumed)
        }
        guard let certificate else {
            throw CryptoError.openSSL(.malformedInput, "d2i_X509")
        }
        guard consumed == der.count else {
            X509_free(certificate)
            throw CryptoError.malformedInput("bytes follow the certificate")
        }
        self.pointer = certificate
        self.derRepresentation = der
    }

    deinit {
        X509_free(pointer)
    }

    /// Reads every `CERTIFICATE` block of a PEM text, in order.
    ///
    /// - Parameter pemRepresentation: Text with one or more `-----BEGIN CERTIFICATE-----` blocks.
    /// - Returns: The certificates.
    /// - Throws: ``CryptoError/Code-swift.struct/malformedInput`` when there is no block or a
    ///   block does not hold a certificate.
    package static func certificates(pemRepresentation: String) throws -> [X509Certificate] {
        let end = "-----END CERTIFICATE-----"
        var certificates: [X509Certificate] = []
        var start = pemRepresentation.startIndex
        for range in pemRepresentation.ranges(of: end) {
            let block = String(pemRepresentation[start..<range.upperBound])
            start = range.upperBound
            guard let (_, der) = PEM.decode(block, labels: ["CERTIFICATE"]) else {
                throw CryptoError.malformedInput("a PEM CERTIFICATE block does not decode")
            }
            certificates.append(try X509Certificate(derRepresentation: der))
        }
        guard !certificates.isEmpty else {
            throw CryptoError.malformedInput("no PEM CERTIFICATE block")
        }
        return certificates
    }

    /// The version as written in certificates: 1, 2 or 3 (the encoded value plus one).
    package var version: Int { Int(X509_get_version(pointer)) + 1 }

    /// The DER SubjectPublicKeyInfo of the certificate's key.
    ///
    /// Read it with the key type the caller expects (`P256.Signing.PublicKey(derRepresentation:)`,
    /// `RSA.Signing.PublicKey(derRepresentation:)`), which applies that type's import policy.
    ///
    /// - Throws: ``CryptoError/Code-swift.struct/malformedKey`` when OpenSSL cannot decode the
    ///   key (an unknown algorithm or a bad point).
    package func subjectPublicKeyInfo() throws -> [UInt8] {
        OpenSSLErrors.clear()
        guard let key = X509_get0_pubkey(pointer) else {
            throw CryptoError.openSSL(.malformedKey, "X509_get0_pubkey")
        }
        let length = i2d_PUBKEY(key, nil)
        guard length > 0 else { throw CryptoError.openSSL(.malformedKey, "i2d_PUBKEY") }
        var output = [UInt8](repeating: 0, count: Int(length))
        let written = output.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PUBKEY(key, &cursor)
        }
        guard written == length else { throw CryptoError.openSSL(.library, "i2d_PUBKEY") }
        return output
    }

    /// One extension of the certificate.
    package struct Extension: Sendable, Hashable {
        /// The extension's OID in dotted form, e.g. "2.5.29.19".
        package var oid: String
        /// Whether the extension is marked critical.
        package var isCritical: Bool
        /// The contents of `extnValue` (the DER inside the OCTET STRING).
        package var value: [UInt8]
    }

    /// The certificate's extensions, in order.
    package var extensions: [Extension] {
        let count = X509_get_ext_count(pointer)
        guard count > 0 else { return [] }
        return (0..<count).compactMap { index in
            guard let item = X509_get_ext(pointer, index), let object = X509_EXTENSION_get_object(item),
                let data = X509_EXTENSION_get_data(item)
            else { return nil }
            return Extension(
                oid: Self.dottedOID(object), isCritical: X509_EXTENSION_get_critical(item) == 1,
                value: Self.bytes(of: data))
        }
    }

    /// The extension with this OID, if the certificate has one.
    ///
    /// - Parameter oid: A dotted OID.
    /// - Returns: The first extension with that OID, or nil.
    package func `extension`(_ oid: String) -> Extension? {
        extensions.first { $0.oid == oid }
    }

    /// The subject's attributes, in order: (dotted OID, value as text); e.g. OU is "2.5.4.11".
    package var subjectAttributes: [(oid: String, value: String)] {
        guard let name = X509_get_subject_name(pointer) else { return [] }
        let count = X509_NAME_entry_count(name)
        guard count > 0 else { return [] }
        return (0..<count).compactMap { index in
            guard let entry = X509_NAME_get_entry(name, index), let object = X509_NAME_ENTRY_get_object(entry),
                let data = X509_NAME_ENTRY_get_data(entry)
            else { return nil }
            return (Self.dottedOID(object), String(decoding: Self.bytes(of: data), as: UTF8.self))
        }
    }

    /// Whether the basic constraints extension says this is a CA certificate (RFC 5280 §4.2.1.9).
    package var isCertificateAuthority: Bool {
        X509_get_extension_flags(pointer) & UInt32(EXFLAG_CA) != 0
    }

    /// Verifies that this certificate chains to one of `roots` through `intermediates`.
    ///
    /// OpenSSL's path building and checks (RFC 5280 §6): signatures, validity periods at `time`,
    /// basic constraints and key usage of the issuers. No purpose is required of the leaf.
    ///
    /// - Parameters:
    ///   - intermediates: Untrusted certificates that may complete the path.
    ///   - roots: The trust anchors.
    ///   - time: The moment the validity periods are checked at; nil for now. Tests pass the
    ///     recorded time of a fixture so that its expired certificates still verify.
    /// - Returns: nil when the chain verifies, else OpenSSL's reason in words.
    package func chainFailure(intermediates: [X509Certificate], roots: [X509Certificate], at time: Date?) -> String? {
        guard !roots.isEmpty else { return "no trusted root certificate is configured" }
        OpenSSLErrors.clear()
        guard let store = X509_STORE_new() else { return "X509_STORE_new failed" }
        defer { X509_STORE_free(store) }
        for root in roots where X509_STORE_add_cert(store, root.pointer) != 1 {
            OpenSSLErrors.clear()
        }
        guard let untrusted = OPENSSL_sk_new_null() else { return "OPENSSL_sk_new_null failed" }
        defer { OPENSSL_sk_free(untrusted) }
        for intermediate in intermediates {
            _ = OPENSSL_sk_push(untrusted, UnsafeRawPointer(intermediate.pointer))
        }
        guard let context = X509_STORE_CTX_new() else { return "X509_STORE_CTX_new failed" }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, pointer, untrusted) == 1 else {
            return "X509_STORE_CTX_init failed: \(OpenSSLErrors.drain())"
        }
        if let time {
            X509_STORE_CTX_set_time(context, 0, time_t(time.timeIntervalSince1970.rounded(.down)))
        }
        let verified = withExtendedLifetime((roots, intermediates)) { X509_verify_cert(context) }
        defer { OpenSSLErrors.clear() }
        if verified == 1 { return nil }
        let code = X509_STORE_CTX_get_error(context)
        guard let text = X509_verify_cert_error_string(Int(code)) else { return "verification failed (\(code))" }
        return String(cString: text)
    }

    private static func dottedOID(_ object: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        guard length > 0, Int(length) < buffer.count else { return "" }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func bytes(of string: UnsafeMutablePointer<ASN1_STRING>) -> [UInt8] {
        let length = Int(ASN1_STRING_length(string))
        guard length > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }
}
