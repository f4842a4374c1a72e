public import FoundationEssentials
import Glibc
import LatchkeyJOSE

/// Where the server sends one entry per answered request.
///
/// `record` is called on event-loop threads, so it must not block: buffer and write elsewhere,
/// as ``StandardErrorAccessLog`` does. A metrics collector can be a sink too: the entry has the
/// route pattern, status and duration.
public protocol AccessLogSink: Sendable {
    /// Takes one entry. Must return within microseconds.
    func record(_ entry: AccessLogEntry)
}

/// One answered request, as the access log shows it.
///
/// It holds no header values other than `User-Agent`, no query and no body (SECURITY.md S26):
/// tokens travel in `Authorization`, cookies and OAuth query parameters, and none of those
/// belong in a log.
public struct AccessLogEntry: Sendable {
    /// When the response was handed to the socket.
    public var time: Date
    /// The request id, also sent as `X-Request-Id`.
    public var requestID: String
    /// The method; `-` when the request line could not be read.
    public var method: HTTPMethod
    /// The route pattern that matched (`/v1/sessions/{id}`); `nil` when none did (404, 405, a
    /// request refused before routing). Safe as a metric label, unlike the path.
    public var route: String?
    /// The percent-decoded path, without the query; empty when the request line could not be read.
    public var path: String
    /// The response status.
    public var status: Int
    /// From the complete request to the response handed to the socket.
    public var durationSeconds: Double
    /// The client's IP address.
    public var remoteAddress: String
    /// The `User-Agent` field, if any.
    public var userAgent: String?
    /// Bytes of the request head and body.
    public var requestBytes: Int
    /// Bytes of the response head and body.
    public var responseBytes: Int

    /// Creates an entry.
    public init(
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
    public var jsonLine: String {
        var output = [UInt8]()
        writeJSONLine(into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends ``jsonLine`` to `output` without a dictionary or a string in between: the log
    /// writer formats every request this way.
    public func writeJSONLine(into output: inout [UInt8]) {
        // In name order, as JSON objects are serialized everywhere else.
        let members: KeyValuePairs<String, JSONValue> = [
            "duration_seconds": .number((durationSeconds * 1_000_000).rounded() / 1_000_000),
            "method": .string(String(method.rawValue.prefix(32))),
            "path": .string(String(path.prefix(256))),
            "remote_address": .string(remoteAddress),
            "request_bytes": .number(Double(requestBytes)),
            "request_id": .string(requestID),
            "response_bytes": .number(Double(responseBytes)),
            "route": route.map { .string($0) } ?? .null,
            "status": .number(Double(status)),
            "time": .string(Self.rfc3339(time)),
            "user_agent": userAgent.map { .string(String($0.prefix(256))) } ?? .null,
        ]
        output.append(UInt8(ascii: "{"))
        for (offset, member) in members.enumerated() {
            if offset > 0 { output.append(UInt8(ascii: ",")) }
            JSONValue.string(member.key).serialize(into: &output)
            output.append(UInt8(ascii: ":"))
            member.value.serialize(into: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// `2026-11-30T18:00:00.123Z`.
    static func rfc3339(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        let milliseconds = Int((interval - Double(seconds)) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(milliseconds), 3))Z"
    }
}
