import LatchkeyHTTP

/// Decodes a chunked request body (RFC 9112 §7.1) as its bytes arrive.
///
/// Strict where leniency has let a proxy and a server disagree on where a body ends: every line
/// ends in CR LF (a bare LF or CR is an error), a chunk size is hex digits only, and chunk
/// extensions must follow the grammar of RFC 9112 §7.1.1; they are then ignored. Trailer fields
/// are checked like header fields and dropped, so nothing sent after the body changes how the
/// request is read (RFC 9110 §6.5).
///
/// The limits hold whatever the framing: the data may be at most `maxBodyBytes` (a chunk that
/// would pass it is refused with 413 on its size line, before its data is read), and the framing
/// (size lines, extensions, line ends, trailers) at most `maxFramingBytes`, so that a client
/// cannot keep a connection busy with overhead. The caller bounds the time.
struct ChunkedDecoder {
    private enum State {
        case size
        case data(remaining: Int)
        case dataEnd
        case trailers
        case done
    }

    private var state = State.size
    private let maxBodyBytes: Int
    private let maxFramingBytes: Int
    private var framingBytes = 0
    /// Bytes of an incomplete line already searched for its end.
    private var scanned = 0
    /// Bytes consumed so far, data and framing: the body's size on the wire.
    private(set) var consumedBytes = 0

    /// Creates a decoder for one body.
    init(maxBodyBytes: Int, maxFramingBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
        self.maxFramingBytes = maxFramingBytes
    }

    /// Whether the last chunk and the trailer section have been read.
    var isComplete: Bool {
        if case .done = state { true } else { false }
    }

    /// Reads what `input` holds of the body, appending chunk data to `body`.
    ///
    /// An incomplete line is left unconsumed: call again with it at the start of `input`, after
    /// more bytes arrived. Bytes after the end of the body are left unconsumed too (a pipelined
    /// request).
    ///
    /// - Returns: The bytes consumed.
    /// - Throws: ``HTTPError`` 400 for broken framing, 413 past a limit.
    mutating func decode(_ input: UnsafeRawBufferPointer, into body: inout [UInt8]) throws(HTTPError) -> Int {
        var offset = 0
        defer { consumedBytes += offset }
        while offset < input.count {
            switch state {
            case .data(let remaining):
                let take = min(remaining, input.count - offset)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset..<(offset + take)]))
                offset += take
                state = take == remaining ? .dataEnd : .data(remaining: remaining - take)
            case .dataEnd:
                guard input.count - offset >= 2 else { return offset }
                guard input[offset] == 0x0D && input[offset + 1] == 0x0A else { throw malformed("chunk data must end with CR LF") }
                offset += 2
                try addFraming(2)
                state = .size
            case .size, .trailers:
                let rest = UnsafeRawBufferPointer(rebasing: input[offset...])
                guard let newline = rest[scanned...].firstIndex(of: 0x0A) else {
                    scanned = rest.count
                    if framingBytes + rest.count > maxFramingBytes { throw framingTooLarge }
                    return offset
                }
                scanned = 0
                guard newline > 0 && rest[newline - 1] == 0x0D else { throw malformed("chunk lines must end with CR LF") }
                try addFraming(newline + 1)
                offset += newline + 1
                let line = rest[0..<(newline - 1)]
                if case .size = state {
                    try readSizeLine(line, received: body.count)
                } else if line.isEmpty {
                    state = .done
                } else {
                    _ = try RequestHead.field(line)
                }
            case .done:
                return offset
            }
        }
        return offset
    }

    /// `chunk-size [chunk-ext]`: moves to the chunk's data, or to the trailers after the last chunk.
    private mutating func readSizeLine(_ line: Slice<UnsafeRawBufferPointer>, received: Int) throws(HTTPError) {
        var index = line.startIndex
        var size = 0
        while index < line.endIndex, let digit = Self.hexValue(line[index]) {
            size = size * 16 + digit
            // Checked at every digit, so that no string of digits can overflow.
            if received + size > maxBodyBytes { throw HTTPError.payloadTooLarge(limit: maxBodyBytes) }
            index += 1
        }
        guard index > line.startIndex else { throw malformed("malformed chunk size") }
        guard Self.isValidExtensions(UnsafeRawBufferPointer(rebasing: line[index...])) else {
            throw malformed("malformed chunk extension")
        }
        state = size == 0 ? .trailers : .data(remaining: size)
    }

    private mutating func addFraming(_ count: Int) throws(HTTPError) {
        framingBytes += count
        if framingBytes > maxFramingBytes { throw framingTooLarge }
    }

    private var framingTooLarge: HTTPError {
        HTTPError(
            status: 413, code: "payload_too_large",
            description: "the chunk sizes, extensions and trailers are larger than \(maxFramingBytes) bytes")
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// `*( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )`, where `ext-val` is a token or a
    /// quoted string (RFC 9112 §7.1.1, RFC 9110 §5.6).
    static func isValidExtensions(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        func skipWhitespace() {
            while index < bytes.count && (bytes[index] == 0x20 || bytes[index] == 0x09) { index += 1 }
        }
        func skipToken() -> Bool {
            let start = index
            while index < bytes.count && ASCII.isToken(bytes[index]) { index += 1 }
            return index > start
        }
        func isText(_ byte: UInt8) -> Bool { byte == 0x09 || (byte >= 0x20 && byte != 0x7F) }
        while index < bytes.count {
            skipWhitespace()
            guard index < bytes.count && bytes[index] == UInt8(ascii: ";") else { return false }
            index += 1
            skipWhitespace()
            guard skipToken() else { return false }
            let afterName = index
            skipWhitespace()
            guard index < bytes.count && bytes[index] == UInt8(ascii: "=") else {
                // Whitespace counts only before another ";".
                index = afterName
                continue
            }
            index += 1
            skipWhitespace()
            if index < bytes.count && bytes[index] == UInt8(ascii: "\"") {
                index += 1
                while true {
                    guard index < bytes.count else { return false }
                    let byte = bytes[index]
                    index += 1
                    if byte == UInt8(ascii: "\"") { break }
                    if byte == UInt8(ascii: "\\") {
                        guard index < bytes.count && isText(bytes[index]) else { return false }
                        index += 1
                    } else if !isText(byte) {
                        return false
                    }
                }
            } else if !skipToken() {
                return false
            }
        }
        return true
    }

    private func malformed(_ description: String) -> HTTPError {
        HTTPError.invalidRequest(description)
    }
}
