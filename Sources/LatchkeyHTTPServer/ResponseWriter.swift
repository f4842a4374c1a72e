import Glibc
import LatchkeyHTTP

/// Serializes responses into a reused byte buffer (RFC 9112 §4, §6).
enum ResponseWriter {
    enum ConnectionField {
        case none
        case close
        case keepAlive
    }

    /// Appends `response` to `output`.
    ///
    /// Fields the server owns (`Content-Length`, `Transfer-Encoding`, `Connection`, `Date`,
    /// `X-Request-Id`) are taken from the arguments, not from `response`. A field whose name is
    /// not a token or whose value holds CR, LF or NUL is dropped, so no value can split the
    /// response.
    static func write(
        _ response: HTTPResponse, requestID: String, date: [UInt8], connection: ConnectionField, omitBody: Bool,
        into output: inout [UInt8]
    ) {
        let status = (100...999).contains(response.status) ? response.status : 500
        output.append(contentsOf: "HTTP/1.1 ".utf8)
        appendDecimal(status, to: &output)
        output.append(0x20)
        let reason = reasonPhrase(status)
        output.append(contentsOf: UnsafeBufferPointer(start: reason.utf8Start, count: reason.utf8CodeUnitCount))
        output.append(contentsOf: "\r\n".utf8)
        output.append(contentsOf: date)
        response.headers.forEachRaw { name, value in
            guard isWritable(name: name, value: value) else { return }
            output.append(contentsOf: name)
            output.append(contentsOf: ": ".utf8)
            output.append(contentsOf: value)
            output.append(contentsOf: "\r\n".utf8)
        }
        output.append(contentsOf: "X-Request-Id: ".utf8)
        output.append(contentsOf: requestID.utf8)
        output.append(contentsOf: "\r\n".utf8)
        switch connection {
        case .none: break
        case .close: output.append(contentsOf: "Connection: close\r\n".utf8)
        case .keepAlive: output.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        let bodyAllowed = status >= 200 && status != 204 && status != 304
        if bodyAllowed {
            output.append(contentsOf: "Content-Length: ".utf8)
            appendDecimal(response.body.count, to: &output)
            output.append(contentsOf: "\r\n".utf8)
        }
        output.append(contentsOf: "\r\n".utf8)
        if bodyAllowed && !omitBody { output.append(contentsOf: response.body) }
    }

    private static func isWritable(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !name.isEmpty, name.allSatisfy(ASCII.isToken),
            !value.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 })
        else { return false }
        switch name.count {
        case 4: return !ASCII.equalsIgnoringCase(name, "date")
        case 10: return !ASCII.equalsIgnoringCase(name, "connection")
        case 12: return !ASCII.equalsIgnoringCase(name, "x-request-id")
        case 14: return !ASCII.equalsIgnoringCase(name, "content-length")
        case 17: return !ASCII.equalsIgnoringCase(name, "transfer-encoding")
        default: return true
        }
    }

    static func appendDecimal(_ value: Int, to output: inout [UInt8]) {
        if value < 10 {
            output.append(UInt8(truncatingIfNeeded: value) + 0x30)
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
            UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var remaining = value.magnitude
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while remaining > 0 {
                buffer[19 - count] = UInt8(truncatingIfNeeded: remaining % 10) + 0x30
                remaining /= 10
                count += 1
            }
            output.append(contentsOf: buffer[(20 - count)...])
        }
    }

    static func reasonPhrase(_ status: Int) -> StaticString {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status"
        }
    }
}

/// The `Date` field (RFC 9110 §6.6.1), formatted at most once a second per loop.
struct DateField {
    private(set) var bytes: [UInt8] = []
    private var second: time_t = -1

    mutating func refresh() {
        var now = time(nil)
        guard now != second else { return }
        second = now
        var parts = tm()
        gmtime_r(&now, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let text =
            "Date: \(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT\r\n"
        bytes = Array(text.utf8)
    }
}

/// Request ids: 128 bits from a per-loop xoshiro256** generator seeded from the system CSPRNG.
///
/// Request ids are correlation handles that are printed in logs and sent to clients, not
/// secrets, so a fast generator is enough; a `getrandom` call per request would cost a syscall
/// on the hot path.
struct RequestIDGenerator {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    init() {
        var system = SystemRandomNumberGenerator()
        state = (system.next(), system.next(), system.next(), system.next() | 1)
    }

    mutating func next() -> UInt64 {
        let result = rotate(state.1 &* 5, 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotate(state.3, 45)
        return result
    }

    private func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 { (value << count) | (value >> (64 - count)) }

    /// 32 lowercase hex digits.
    mutating func makeID() -> String {
        let high = next()
        let low = next()
        return String(unsafeUninitializedCapacity: 32) { buffer in
            let digits: StaticString = "0123456789abcdef"
            for index in 0..<16 {
                buffer[index] = digits.utf8Start[Int((high >> (60 - UInt64(index) * 4)) & 0xF)]
                buffer[16 + index] = digits.utf8Start[Int((low >> (60 - UInt64(index) * 4)) & 0xF)]
            }
            return 32
        }
    }

    /// Whether an incoming `X-Request-Id` may be reused: 1–64 bytes of `[A-Za-z0-9._-]`, so it
    /// is safe in a header, a log line and a JSON string.
    static func isSafe(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !bytes.isEmpty, bytes.count <= 64 else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default: false
            }
        }
    }
}
