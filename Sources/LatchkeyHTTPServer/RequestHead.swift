import LatchkeyHTTP

/// A parsed request line and header section (RFC 9112 §3, §5), before the body.
///
/// The parser is strict where leniency lets two HTTP implementations read one byte stream as
/// different requests (request smuggling): no whitespace before a field's colon, no obs-fold, no
/// control bytes, exactly one `Host` in HTTP/1.1 and one that is a valid `host[:port]`, one
/// `Content-Length` of digits only, and `Transfer-Encoding` only as `chunked` alone, in HTTP/1.1,
/// without `Content-Length` (RFC 9112 §6.1, §6.3). At most one `Authorization` field: two would
/// leave the choice of credentials to whichever code reads first (RFC 6750 §3.1).
struct RequestHead {
    var method: HTTPMethod
    /// The path as sent, percent-encoded, without the query.
    var encodedPath: Substring
    var path: String
    var query: [String: String]
    var headers: HTTPHeaders
    var contentLength: Int
    /// Whether the body comes in the chunked transfer coding (RFC 9112 §7.1); `contentLength`
    /// is then 0.
    var isChunked: Bool
    /// Whether the client allows another request on the connection (RFC 9112 §9.3).
    var keepAlive: Bool
    /// `Expect: 100-continue` (RFC 9110 §10.1.1).
    var expectsContinue: Bool
    var isHTTP10: Bool

    /// Where the head ends: the index just past the empty line, or `nil` while it is incomplete.
    ///
    /// - Parameters:
    ///   - buffer: The bytes received so far for this request.
    ///   - start: Where to resume scanning; bytes before it were already scanned.
    static func end(in buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var index = max(start, 1)
        let count = buffer.count
        while index < count {
            // Look for LF, then check whether it closes an empty line (LF or CR LF before it).
            guard let newline = UnsafeRawBufferPointer(rebasing: buffer[index..<count]).firstIndex(of: 0x0A) else {
                return nil
            }
            let position = index + newline
            if buffer[position - 1] == 0x0A { return position + 1 }
            if buffer[position - 1] == 0x0D && position >= 2 && buffer[position - 2] == 0x0A { return position + 1 }
            index = position + 1
        }
        return nil
    }

    /// Parses a complete head (as delimited by ``end(in:from:)``).
    ///
    /// - Throws: ``HTTPError`` with the status to answer before closing the connection: 400 for
    ///   anything malformed or ambiguous, 417 for an unknown expectation, 501 for a transfer
    ///   coding other than `chunked`, 505 for an HTTP version other than 1.0 and 1.1.
    static func parse(_ head: UnsafeRawBufferPointer) throws(HTTPError) -> RequestHead {
        var lines = LineReader(buffer: head)
        guard let requestLine = try lines.next() else { throw malformed("missing request line") }

        // method SP request-target SP HTTP-version (RFC 9112 §3), single spaces only.
        guard let firstSpace = requestLine.firstIndex(of: 0x20) else { throw malformed("malformed request line") }
        let methodBytes = UnsafeRawBufferPointer(rebasing: requestLine[requestLine.startIndex..<firstSpace])
        guard !methodBytes.isEmpty, methodBytes.count <= 32, methodBytes.allSatisfy(ASCII.isToken) else {
            throw malformed("malformed method")
        }
        let afterMethod = UnsafeRawBufferPointer(rebasing: requestLine[(firstSpace + 1)...])
        guard let secondSpace = afterMethod.firstIndex(of: 0x20) else { throw malformed("malformed request line") }
        let target = UnsafeRawBufferPointer(rebasing: afterMethod[0..<secondSpace])
        let version = UnsafeRawBufferPointer(rebasing: afterMethod[(secondSpace + 1)...])
        let isHTTP10: Bool
        if version.elementsEqual("HTTP/1.1".utf8) {
            isHTTP10 = false
        } else if version.elementsEqual("HTTP/1.0".utf8) {
            isHTTP10 = true
        } else if version.count == 8, version.starts(with: "HTTP/".utf8) {
            throw HTTPError(status: 505, code: "invalid_request", description: "only HTTP/1.1 and HTTP/1.0 are supported")
        } else {
            throw malformed("malformed request line")
        }
        guard !target.isEmpty, target.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") }) else {
            throw malformed("malformed request target")
        }
        let method = HTTPMethod(bytes: methodBytes)
        let (encodedPath, path, query) = try parseTarget(target, method: method)

        // Header fields (RFC 9112 §5).
        var storage = [UInt8]()
        storage.reserveCapacity(head.count)
        var fields = [HTTPHeaders.Field]()
        var contentLength: Int? = nil
        var hostCount = 0
        var authorizationCount = 0
        var keepAlive = !isHTTP10
        var expectsContinue = false
        var transferCodings = TransferCodings()
        while let line = try lines.next() {
            if line.isEmpty { break }
            let (name, value) = try field(line)
            let nameStart = UInt32(storage.count)
            storage.append(contentsOf: name)
            let nameEnd = UInt32(storage.count)
            storage.append(contentsOf: value)
            fields.append(
                HTTPHeaders.Field(nameStart: nameStart, nameEnd: nameEnd, valueStart: nameEnd, valueEnd: UInt32(storage.count)))

            let nameView = name.assumingMemoryBound(to: UInt8.self)
            let valueView = value.assumingMemoryBound(to: UInt8.self)
            switch name.count {
            case 4 where ASCII.equalsIgnoringCase(nameView, "host"):
                hostCount += 1
                guard isValidHost(valueView) else { throw malformed("malformed Host field") }
            case 6 where ASCII.equalsIgnoringCase(nameView, "expect"):
                guard ASCII.equalsIgnoringCase(valueView, "100-continue") else {
                    throw HTTPError(status: 417, code: "invalid_request", description: "unsupported expectation")
                }
                expectsContinue = !isHTTP10
            case 10 where ASCII.equalsIgnoringCase(nameView, "connection"):
                if ASCII.listContains(valueView, "close") { keepAlive = false }
                if isHTTP10 && ASCII.listContains(valueView, "keep-alive") { keepAlive = true }
            case 13 where ASCII.equalsIgnoringCase(nameView, "authorization"):
                authorizationCount += 1
            case 14 where ASCII.equalsIgnoringCase(nameView, "content-length"):
                guard contentLength == nil else { throw malformed("more than one Content-Length") }
                guard !value.isEmpty, value.count <= 15, value.allSatisfy({ $0 &- 0x30 < 10 }) else {
                    throw malformed("malformed Content-Length")
                }
                contentLength = value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            case 17 where ASCII.equalsIgnoringCase(nameView, "transfer-encoding"):
                ASCII.forEachListElement(valueView) { transferCodings.add($0) }
                transferCodings.isPresent = true
            default:
                break
            }
        }
        if transferCodings.isPresent {
            if contentLength != nil { throw malformed("both Content-Length and Transfer-Encoding") }
            // RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing.
            if isHTTP10 { throw malformed("Transfer-Encoding is not accepted in HTTP/1.0") }
            // RFC 9112 §6.3: without chunked last the body's end cannot be found.
            guard transferCodings.lastIsChunked, transferCodings.chunked == 1 else {
                throw malformed("chunked must be the last transfer coding, and appear once")
            }
            guard transferCodings.count == 1 else {
                throw HTTPError(
                    status: 501, code: "invalid_request", description: "chunked is the only transfer coding accepted")
            }
        }
        guard hostCount == 1 || (isHTTP10 && hostCount == 0) else {
            throw malformed("HTTP/1.1 requests carry exactly one Host field")
        }
        guard authorizationCount <= 1 else { throw malformed("more than one Authorization field") }
        let isChunked = transferCodings.isPresent
        return RequestHead(
            method: method, encodedPath: encodedPath, path: path, query: query,
            headers: HTTPHeaders(bytes: storage, fields: fields), contentLength: contentLength ?? 0, isChunked: isChunked,
            keepAlive: keepAlive, expectsContinue: expectsContinue && (isChunked || (contentLength ?? 0) > 0),
            isHTTP10: isHTTP10)
    }

    /// Splits a field line (RFC 9112 §5) into its name and its value without surrounding
    /// whitespace; the header section and the trailer section of a chunked body both use it.
    static func field(_ line: Slice<UnsafeRawBufferPointer>) throws(HTTPError) -> (UnsafeRawBufferPointer, UnsafeRawBufferPointer) {
        guard line[line.startIndex] != 0x20 && line[line.startIndex] != 0x09 else {
            throw malformed("obsolete line folding is not accepted")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw malformed("malformed header field") }
        let name = UnsafeRawBufferPointer(rebasing: line[line.startIndex..<colon])
        guard !name.isEmpty, name.allSatisfy(ASCII.isToken) else { throw malformed("malformed header field name") }
        var valueStart = colon + 1
        var valueEnd = line.endIndex
        while valueStart < valueEnd && (line[valueStart] == 0x20 || line[valueStart] == 0x09) { valueStart += 1 }
        while valueEnd > valueStart && (line[valueEnd - 1] == 0x20 || line[valueEnd - 1] == 0x09) { valueEnd -= 1 }
        let value = UnsafeRawBufferPointer(rebasing: line[valueStart..<valueEnd])
        guard value.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else {
            throw malformed("control character in a header field")
        }
        return (name, value)
    }

    /// The transfer codings named by every `Transfer-Encoding` field, in order.
    private struct TransferCodings {
        var isPresent = false
        var count = 0
        var chunked = 0
        var lastIsChunked = false

        mutating func add(_ coding: UnsafeBufferPointer<UInt8>) {
            count += 1
            lastIsChunked = ASCII.equalsIgnoringCase(coding, "chunked")
            if lastIsChunked { chunked += 1 }
        }
    }

    /// `uri-host [":" port]` (RFC 9110 §7.2, RFC 3986 §3.2.2), or empty. RFC 9112 §3.2: a Host
    /// field with an invalid value is answered 400.
    static func isValidHost(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        if value.first == UInt8(ascii: "[") {
            // IP-literal: IPv6address or IPvFuture; both draw on unreserved, sub-delims and ":".
            guard let close = value.firstIndex(of: UInt8(ascii: "]")), close > 1,
                value[1..<close].allSatisfy({ ASCII.isHostByte($0) && $0 != UInt8(ascii: "%") || $0 == UInt8(ascii: ":") })
            else { return false }
            index = close + 1
        } else {
            while index < value.count && ASCII.isHostByte(value[index]) { index += 1 }
        }
        guard index < value.count else { return true }
        guard value[index] == UInt8(ascii: ":") else { return false }
        return value[(index + 1)...].allSatisfy { $0 &- 0x30 < 10 }
    }

    /// Splits origin-form, absolute-form (RFC 9112 §3.2.2) and `*` targets into path and query.
    private static func parseTarget(_ target: UnsafeRawBufferPointer, method: HTTPMethod) throws(HTTPError)
        -> (Substring, String, [String: String])
    {
        var pathStart = 0
        if target[0] != UInt8(ascii: "/") {
            if target.count == 1 && target[0] == UInt8(ascii: "*") && method == .options {
                return ("*", "*", [:])
            }
            let lowered = target.prefix(8).map(ASCII.lowercased)
            let schemeLength =
                lowered.starts(with: "http://".utf8) ? 7 : lowered.starts(with: "https://".utf8) ? 8 : 0
            guard schemeLength > 0 else { throw malformed("malformed request target") }
            let rest = UnsafeRawBufferPointer(rebasing: target[schemeLength...])
            guard let slash = rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }),
                rest[slash] == UInt8(ascii: "/")
            else {
                return ("/", "/", try parseQuery(rest.firstIndex(of: UInt8(ascii: "?")).map { rest[($0 + 1)...] }))
            }
            pathStart = schemeLength + slash
        }
        let pathAndQuery = UnsafeRawBufferPointer(rebasing: target[pathStart...])
        let question = pathAndQuery.firstIndex(of: UInt8(ascii: "?")) ?? pathAndQuery.count
        let encoded = UnsafeRawBufferPointer(rebasing: pathAndQuery[0..<question])
        guard let path = PercentEncoding.decode(encoded, plusIsSpace: false) else { throw malformed("malformed path") }
        let query = try parseQuery(question < pathAndQuery.count ? pathAndQuery[(question + 1)...] : nil)
        let encodedPath = encoded.contains(UInt8(ascii: "%")) ? Substring(String(decoding: encoded, as: UTF8.self)) : Substring(path)
        return (encodedPath, path, query)
    }

    private static func parseQuery(_ bytes: Slice<UnsafeRawBufferPointer>?) throws(HTTPError) -> [String: String] {
        guard let bytes, !bytes.isEmpty else { return [:] }
        guard let query = PercentEncoding.parseForm(UnsafeRawBufferPointer(rebasing: bytes)) else {
            throw malformed("malformed query, or a query parameter given twice")
        }
        return query
    }

    private static func malformed(_ description: String) -> HTTPError {
        HTTPError.invalidRequest(description)
    }
}

/// Splits a head into lines ending in CR LF or LF; a CR anywhere else is an error.
private struct LineReader {
    let buffer: UnsafeRawBufferPointer
    var index = 0

    mutating func next() throws(HTTPError) -> Slice<UnsafeRawBufferPointer>? {
        guard index < buffer.count else { return nil }
        guard let newline = UnsafeRawBufferPointer(rebasing: buffer[index...]).firstIndex(of: 0x0A) else {
            throw HTTPError.invalidRequest("unterminated line")
        }
        var end = index + newline
        let next = end + 1
        if end > index && buffer[end - 1] == 0x0D { end -= 1 }
        let line = buffer[index..<end]
        guard !line.contains(0x0D) else { throw HTTPError.invalidRequest("stray carriage return") }
        index = next
        return line
    }
}
