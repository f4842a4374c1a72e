internal import CLatchkeyOpenSSL

/// OpenSSL's error queue, which is per thread.
///
/// Every operation clears the queue, makes its calls, and on failure drains the queue into a
/// ``CryptoError`` — all in one synchronous function, so no other work can interleave on this
/// thread (STYLE §2).
enum OpenSSLErrors {
    /// Forgets errors left by earlier calls on this thread.
    ///
    /// `ERR_clear_error` resets all sixteen slots of the queue every time, which showed up at
    /// 2% of an RSA verification in profiles; peeking first makes the usual empty case cheap.
    @inline(__always)
    static func clear() {
        if ERR_peek_error() != 0 {
            ERR_clear_error()
        }
    }

    /// Empties the queue and returns its reason strings, oldest first, joined with "; ".
    ///
    /// - Returns: The reasons, or "no reason given" when the queue was empty.
    static func drain() -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            // A failing call can push dozens of entries (the decoder tries every format); the
            // first few say what happened.
            if reasons.count < 4 { reasons.append(reasonString(code)) }
        }
        return reasons.isEmpty ? "no reason given" : reasons.joined(separator: "; ")
    }

    /// The library's reason string for one packed error code.
    private static func reasonString(_ code: UInt) -> String {
        if let reason = ERR_reason_error_string(code) {
            return String(cString: reason)
        }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension CryptoError {
    /// An error for a failed OpenSSL call, carrying the drained error queue.
    ///
    /// - Parameters:
    ///   - code: The code to report; ``Code/library`` unless the input explains the failure.
    ///   - call: What was being done, for example "EVP_PKEY_fromdata".
    /// - Returns: The error; the queue is empty afterwards.
    static func openSSL(_ code: Code = .library, _ call: String) -> CryptoError {
        CryptoError(code, "\(call) failed: \(OpenSSLErrors.drain())")
    }
}
