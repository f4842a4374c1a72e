package import LatchkeyHTTP

/// The request-head parser as plain values, for the fuzz checks in Fuzz/Checks.
///
/// ``RequestHead`` stays internal to this module; this is the one narrow door the fuzz targets
/// and their corpus replay use, calling the very functions `Connection` calls.
package enum RequestHeadInspection {
    /// What ``RequestHead/parse(_:)`` read from one head.
    package struct Head: Sendable {
        package var method: String
        package var encodedPath: String
        package var path: String
        package var query: [String: String]
        package var headers: HTTPHeaders
        package var contentLength: Int
        package var keepAlive: Bool
        package var expectsContinue: Bool
        package var isHTTP10: Bool
        package var isChunked: Bool
    }

    /// ``RequestHead/end(in:from:)``: where the head that starts `bytes` ends, scanning from `start`.
    package static func end(of bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        bytes.withUnsafeBytes { RequestHead.end(in: $0, from: start) }
    }

    /// ``RequestHead/parse(_:)`` of one complete head.
    package static func parse(_ bytes: ArraySlice<UInt8>) throws(HTTPError) -> Head {
        let parsed = try bytes.withUnsafeBytes { raw in Result { () throws(HTTPError) in try RequestHead.parse(raw) } }.get()
        return Head(
            method: parsed.method.rawValue, encodedPath: String(parsed.encodedPath), path: parsed.path,
            query: parsed.query, headers: parsed.headers, contentLength: parsed.contentLength,
            keepAlive: parsed.keepAlive, expectsContinue: parsed.expectsContinue, isHTTP10: parsed.isHTTP10,
            isChunked: parsed.isChunked)
    }

    /// ``ChunkedDecoder`` over a chunked body at the start of `stream`, with the server's default
    /// limits: the body's data and its size on the wire, or nil when the stream ends first.
    package static func chunkedBody(of stream: ArraySlice<UInt8>) throws(HTTPError) -> (data: [UInt8], wireBytes: Int)? {
        let limits = HTTPServer.Limits()
        var decoder = ChunkedDecoder(maxBodyBytes: limits.maxBodyBytes, maxFramingBytes: limits.maxHeaderBytes)
        var data: [UInt8] = []
        let consumed = try stream.withUnsafeBytes { raw in
            Result { () throws(HTTPError) in try decoder.decode(raw, into: &data) }
        }.get()
        return decoder.isComplete ? (data, consumed) : nil
    }
}
