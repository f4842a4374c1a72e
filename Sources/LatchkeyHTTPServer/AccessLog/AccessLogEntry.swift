package import FoundationEssentials
import Glibc
package import LatchkeyHTTP
import LatchkeyJSON

/// Where the server sends one entry per answered request.
///
/// `record` is called on event-loop threads, so it must not block: buffer and write elsewhere,
/// as ``StandardErrorAccessLog`` does. A metrics collector can be a sink too: the entry has the
/// route pattern, status and duration.
package protocol AccessLogSink: Sendable {
    /// Takes one entry. Must return within microseconds.
    func record(_ entry: AccessLogEntry)

    /// Writes out whatever is buffered, before returning. ``HTTPServer/shutdown()`` calls it once
    /// the last entry is recorded, so that a process that exits right after loses no line.
    func flush()
}

/// One answered request, as the access log shows it.
///
/// It holds no header values other than `User-Agent`, no query and no body (docs/security.md S26):
/// tokens travel in `Authorization`, cookies and OAuth query parameters, and none of those
/// belong in a log.
package struct AccessLogEntry: Sendable {
    /// When the response was handed to the socket.
    package var time: Date
    /// The request id, also sent as `X-Request-Id`.
    package var requestID: String
    /// The method; `-` when the request line could not be read.
    package var method: HTTPMethod
    /// The route pattern that matched (`/v1/sessions/{id}`); `nil` when none did (404, 405, a
    /// request refused before routing). Safe as a metric label, unlike the path.
    package var route: String?
    /// The percent-decoded path, without the query; empty when the request line could not be read.
    package var path: String
    /// The response status.
    package var status: Int
    /// From the complete request to the response handed to the socket.
    package var durationSeconds: Double
    /// The client's IP address.
    package var remoteAddress: String
    /// The `User-Agent` field, if any.
    package var userAgent: String?
    /// Bytes of the request head and body.
    package var requestBytes: Int
    /// Bytes of the response head and body.
    package var responseBytes: Int

    /// Creates an entry.
    package init(
        time: Date, requestID: String, method: HTTPMethod, route: String?, path: String, status: Int,
        durationSeconds: Double, remoteAddress: String, userAgent: String?, requestBytes: Int, responseBytes: Int
    ) {
        self.time = time
        self.requestID = requestID
        self.method = method
        self.route = route
        self.path = path
        self.status = status
        self.durationSeconds = durationSeconds
        self.remoteAddress = remoteAddress
        self.userAgent = userAgent
        self.requestBytes = requestBytes
        self.responseBytes = responseBytes
    }

    /// The entry as one line of JSON without the newline, members sorted by name.
    ///
    /// Path and user agent are cut to 256 characters so that a hostile client cannot make one
    /// line arbitrarily long.
    package var jsonLine: String {
        var output = [UInt8]()
        writeJSONLine(into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends ``jsonLine`` to `output`, written straight into the bytes: the log writer formats
    /// every request this way, and a dictionary of values, a string per number and one per
    /// part of the time cost the writer thread 13% of the server's CPU under load.
    package func writeJSONLine(into output: inout [UInt8]) {
        // In name order, as JSON objects are serialized everywhere else.
        let microseconds = Int((max(0, durationSeconds) * 1_000_000).rounded())
        output += #"{"duration_seconds":"#.utf8
        ResponseWriter.appendDecimal(microseconds / 1_000_000, to: &output)
        output.append(UInt8(ascii: "."))
        Self.append(microseconds % 1_000_000, digits: 6, to: &output)
        output += #","method":"#.utf8
        JSONValue.string(String(method.rawValue.prefix(32))).serialize(into: &output)
        output += #","path":"#.utf8
        JSONValue.string(path.utf8.count <= 256 ? path : String(path.prefix(256))).serialize(into: &output)
        output += #","remote_address":"#.utf8
        JSONValue.string(remoteAddress).serialize(into: &output)
        output += #","request_bytes":"#.utf8
        ResponseWriter.appendDecimal(requestBytes, to: &output)
        output += #","request_id":"#.utf8
        JSONValue.string(requestID).serialize(into: &output)
        output += #","response_bytes":"#.utf8
        ResponseWriter.appendDecimal(responseBytes, to: &output)
        output += #","route":"#.utf8
        (route.map(JSONValue.string) ?? .null).serialize(into: &output)
        output += #","status":"#.utf8
        ResponseWriter.appendDecimal(status, to: &output)
        output += #","time":""#.utf8
        Self.appendRFC3339(time, to: &output)
        output += #"","user_agent":"#.utf8
        (userAgent.map { JSONValue.string($0.utf8.count <= 256 ? $0 : String($0.prefix(256))) } ?? .null).serialize(into: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// `2026-11-30T18:00:00.123Z`.
    static func appendRFC3339(_ date: Date, to output: inout [UInt8]) {
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        let milliseconds = Int((interval - Double(seconds)) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        append(Int(parts.tm_year) + 1900, digits: 4, to: &output)
        output.append(UInt8(ascii: "-"))
        append(Int(parts.tm_mon) + 1, digits: 2, to: &output)
        output.append(UInt8(ascii: "-"))
        append(Int(parts.tm_mday), digits: 2, to: &output)
        output.append(UInt8(ascii: "T"))
        append(Int(parts.tm_hour), digits: 2, to: &output)
        output.append(UInt8(ascii: ":"))
        append(Int(parts.tm_min), digits: 2, to: &output)
        output.append(UInt8(ascii: ":"))
        append(Int(parts.tm_sec), digits: 2, to: &output)
        output.append(UInt8(ascii: "."))
        append(milliseconds, digits: 3, to: &output)
        output.append(UInt8(ascii: "Z"))
    }

    /// The last `digits` decimal digits of a non-negative value, zero-padded.
    private static func append(_ value: Int, digits: Int, to output: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<digits { divisor *= 10 }
        while divisor > 0 {
            output.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }
}
