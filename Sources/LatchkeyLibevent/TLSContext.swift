internal import CLatchkeyEvent
internal import CLatchkeyShims
import Glibc

/// The OpenSSL settings every outbound TLS connection of one client shares: the HTTP client's
/// (identity providers) and the SMTP client's.
///
/// TLS 1.2 at least; the peer's chain is verified (`SSL_VERIFY_PEER`) against the system's trust
/// store (`SSL_CTX_set_default_verify_paths`: Debian's `/etc/ssl/certs`) plus, when given, the
/// CA certificates of one PEM file; the certificate must name the host of the URL
/// (`SSL_set1_host`, or its IP address for an IP literal), and the host name goes in SNI. There
/// is deliberately no way to turn verification off.
package final class TLSContext: @unchecked Sendable {
    // @unchecked: the SSL_CTX is configured in init and never changed after; OpenSSL lets several
    // threads make SSL objects from one SSL_CTX at once (it is reference counted and locked).
    private let context: OpaquePointer

    /// Why a context could not be made: a sentence that names the file when it is the cause.
    package struct SetupFailure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Makes the context.
    ///
    /// - Parameter additionalCAFile: A PEM file of CA certificates trusted besides the system's.
    /// - Throws: ``SetupFailure`` when OpenSSL cannot make the context or read the file.
    package init(additionalCAFile: String?) throws(SetupFailure) {
        ERR_clear_error()
        guard let method = TLS_client_method(), let context = SSL_CTX_new(method) else {
            throw SetupFailure(description: "cannot set up TLS: \(Self.drainErrors() ?? "SSL_CTX_new failed")")
        }
        self.context = context
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        guard CLatchkeyShims_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw SetupFailure(description: "cannot set up TLS: \(Self.drainErrors() ?? "no TLS 1.2")")
        }
        guard SSL_CTX_set_default_verify_paths(context) == 1 else {
            throw SetupFailure(description: "cannot set up TLS: the system trust store: \(Self.drainErrors() ?? "not found")")
        }
        if let additionalCAFile {
            guard SSL_CTX_load_verify_file(context, additionalCAFile) == 1 else {
                throw SetupFailure(
                    description: "cannot load the CA file \(additionalCAFile): \(Self.drainErrors() ?? "no certificate in it")")
            }
        }
        ERR_clear_error()
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// A fresh `SSL` for a connection to `host`, set to verify that the certificate names it; the
    /// caller owns it (a bufferevent made with `BEV_OPT_CLOSE_ON_FREE` takes it over).
    ///
    /// - Returns: `nil` when OpenSSL cannot make it (out of memory).
    package func makeSSL(host: String) -> OpaquePointer? {
        ERR_clear_error()
        guard let ssl = SSL_new(context) else {
            ERR_clear_error()
            return nil
        }
        let configured: Bool
        if Self.isIPLiteral(host) {
            // RFC 6066 §3: no SNI for an address; the certificate must carry it as an IP SAN.
            configured = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1
        } else {
            X509_VERIFY_PARAM_set_hostflags(SSL_get0_param(ssl), UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            configured =
                SSL_set1_host(ssl, host) == 1
                && host.withCString { name in CLatchkeyShims_SSL_set_tlsext_host_name(ssl, name) } == 1
        }
        ERR_clear_error()
        guard configured else {
            SSL_free(ssl)
            return nil
        }
        return ssl
    }

    /// Why the handshake on `bufferEvent` failed, or `nil` when OpenSSL recorded nothing: the
    /// verification result first (it says which check refused the certificate), then the errors
    /// the bufferevent collected from OpenSSL's queue.
    package static func failure(of bufferEvent: OpaquePointer) -> String? {
        var reasons: [String] = []
        if let ssl = bufferevent_openssl_get_ssl(bufferEvent) {
            let verification = SSL_get_verify_result(ssl)
            if verification != X509_V_OK {
                reasons.append("certificate rejected: \(String(cString: X509_verify_cert_error_string(verification)))")
            }
        }
        while case let code = bufferevent_get_openssl_error(bufferEvent), code != 0 {
            // The bufferevent also records SSL_get_error's small codes (SSL_ERROR_SSL, ...),
            // which are not entries of the error queue and have no text.
            guard code > 0xFF, let reason = ERR_reason_error_string(code) else { continue }
            let text = String(cString: reason)
            if !reasons.contains(text) { reasons.append(text) }
        }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }

    /// Empties this thread's OpenSSL error queue and returns its first reason.
    private static func drainErrors() -> String? {
        var first: String?
        while case let code = ERR_get_error(), code != 0 {
            if first == nil, let reason = ERR_reason_error_string(code) { first = String(cString: reason) }
        }
        return first
    }

    /// Whether `host` is an IPv4 or IPv6 address rather than a name.
    package static func isIPLiteral(_ host: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1
    }
}
