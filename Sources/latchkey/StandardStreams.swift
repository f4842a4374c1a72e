import Glibc

/// Standard input, output and error as plain file descriptors: unbuffered, so scripts that wait
/// for a line see it at once.
enum StandardStreams {
    /// Writes all of `text` to `descriptor`; gives up quietly when the reader is gone.
    static func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Everything on standard input up to its end.
    static func readInput() -> [UInt8] {
        var input = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return input }
            input += buffer[..<count]
        }
    }
}
