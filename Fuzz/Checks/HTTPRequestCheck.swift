import LatchkeyHTTP
import LatchkeyHTTPServer

extension FuzzTarget {
    /// The request-head parser and the framing of a byte stream into requests.
    ///
    /// The input is what a client sends on one connection. It is cut into requests as the
    /// connection does: empty lines before a request are skipped, the head ends at the first
    /// empty line and may not exceed the default `maxHeaderBytes`, and a body of the announced
    /// `Content-Length` or a chunked body follows.
    ///
    /// Properties: finding the end of a head gives the same answer however the bytes arrived
    /// (resuming a scan where an earlier one stopped, as the connection does); a refusal has a
    /// documented status (400, 411, 413, 417, 501 or 505), never a 500 that means a fault; an
    /// accepted head keeps its invariants, and the same head written back canonically (CR LF
    /// line ends, no optional whitespace) parses to the same request.
    public static let httpRequest = FuzzTarget(name: "http-request") { (input) throws(PropertyFailure) in
        let maxHeaderBytes = HTTPServer.Limits().maxHeaderBytes
        var offset = 0
        var outcome = Outcome.refused
        // Sixteen pipelined requests are plenty; more add nothing.
        for _ in 0..<16 {
            while offset < input.count && (input[offset] == 0x0D || input[offset] == 0x0A) { offset += 1 }
            let region = input[offset...]
            guard let end = RequestHeadInspection.end(of: region, from: 0) else { break }
            try checkResumedScans(region, end: end)
            guard end <= maxHeaderBytes else { break }
            let headBytes = region.prefix(end)
            let head: RequestHeadInspection.Head
            do throws(HTTPError) {
                head = try RequestHeadInspection.parse(headBytes)
            } catch {
                try require([400, 411, 417, 501, 505].contains(error.status), "refused with status \(error.status)")
                break
            }
            outcome = .accepted
            try checkInvariants(head)
            try checkCanonicalForm(of: headBytes, parsed: head)
            guard let bodyLength = try frameBody(region.dropFirst(end), head: head) else { break }
            offset += end + bodyLength
        }
        return outcome
    }

    /// How many bytes of `stream` the body of `head` takes, or nil when the stream ends first or
    /// the body is refused. A chunked body decodes to the same data whether it arrives whole or
    /// cut short, and a refusal is 400 (framing) or 413 (a limit).
    static func frameBody(_ stream: ArraySlice<UInt8>, head: RequestHeadInspection.Head) throws(PropertyFailure) -> Int? {
        guard head.isChunked else { return stream.count >= head.contentLength ? head.contentLength : nil }
        let whole: (data: [UInt8], wireBytes: Int)?
        let cutShort: (data: [UInt8], wireBytes: Int)?
        do throws(HTTPError) {
            whole = try RequestHeadInspection.chunkedBody(of: stream)
            cutShort = try whole.flatMap { body throws(HTTPError) in try RequestHeadInspection.chunkedBody(of: stream.prefix(body.wireBytes - 1)) }
        } catch {
            try require([400, 413].contains(error.status), "a chunked body refused with status \(error.status)")
            return nil
        }
        guard let whole else { return nil }
        try require(whole.wireBytes <= stream.count && whole.data.count < whole.wireBytes, "a chunked body larger than its framing")
        try require(cutShort == nil, "a chunked body ends before its last byte")
        return whole.wireBytes
    }

    /// The end found in one scan is found again when the head arrives in two pieces.
    static func checkResumedScans(_ region: ArraySlice<UInt8>, end: Int) throws(PropertyFailure) {
        // Every split for short heads; a spread of them for long ones.
        let splits = end <= 64 ? Array(0..<end) : [1, 2, end / 3, end / 2, end - 2, end - 1]
        for split in splits where split < end {
            try require(
                RequestHeadInspection.end(of: region.prefix(split), from: 0) == nil,
                "a head end found before the first empty line")
            try require(
                RequestHeadInspection.end(of: region, from: split) == end,
                "resuming the scan at \(split) finds another end")
        }
    }

    static func checkInvariants(_ head: RequestHeadInspection.Head) throws(PropertyFailure) {
        try require(!head.method.isEmpty, "an empty method")
        try require(head.path.first == "/" || head.path == "*", "path \(head.path.prefix(20)) is not absolute")
        try require(head.contentLength >= 0, "a negative Content-Length")
        try require(!head.expectsContinue || ((head.contentLength > 0 || head.isChunked) && !head.isHTTP10), "100-continue without a body")
        let hosts = head.headers.values("Host").count
        try require(hosts == 1 || (head.isHTTP10 && hosts == 0), "\(hosts) Host fields accepted")
        let lengths = head.headers.values("Content-Length")
        try require(lengths.count <= 1, "two Content-Length fields accepted")
        try require(lengths.first.map { Int($0) == head.contentLength } ?? (head.contentLength == 0), "Content-Length misread")
        try require(head.headers.contains("Transfer-Encoding") == head.isChunked, "Transfer-Encoding misread")
        try require(!head.isChunked || (lengths.isEmpty && !head.isHTTP10), "a chunked body with Content-Length, or in HTTP/1.0")
        for (name, value) in head.headers {
            try require(head.headers.values(name).contains(value), "field \(name) cannot be looked up")
        }
    }

    /// The head written back with CR LF line ends and `name: value` fields parses the same.
    static func checkCanonicalForm(of bytes: ArraySlice<UInt8>, parsed: RequestHeadInspection.Head) throws(PropertyFailure) {
        var requestLine = Array(bytes.prefix { $0 != 0x0A })
        if requestLine.last == 0x0D { requestLine.removeLast() }
        var canonical = requestLine + [0x0D, 0x0A]
        for (name, value) in parsed.headers {
            canonical += Array("\(name): \(value)\r\n".utf8)
        }
        canonical += [0x0D, 0x0A]
        try require(
            RequestHeadInspection.end(of: canonical[...], from: 0) == canonical.count,
            "the canonical head ends elsewhere")
        let again: RequestHeadInspection.Head
        do throws(HTTPError) {
            again = try RequestHeadInspection.parse(canonical[...])
        } catch {
            throw PropertyFailure("the canonical form is refused with \(error.status)")
        }
        try require(
            again.method == parsed.method && again.path == parsed.path && again.encodedPath == parsed.encodedPath
                && again.query == parsed.query && again.contentLength == parsed.contentLength
                && again.keepAlive == parsed.keepAlive && again.expectsContinue == parsed.expectsContinue
                && again.isHTTP10 == parsed.isHTTP10 && again.isChunked == parsed.isChunked,
            "the canonical form parses to another request")
        try require(Array(again.headers).elementsEqual(Array(parsed.headers)) { $0 == $1 }, "the canonical form has other fields")
    }
}
