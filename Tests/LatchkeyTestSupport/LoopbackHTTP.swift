package import Foundation
import Synchronization

/// A plain HTTP/1.1 client for the test stand-ins on the loopback (`http://127.0.0.1:PORT` or
/// `http://localhost:PORT`), over ``RawHTTP``'s socket, one connection per request
/// (`Connection: close`). It never follows a redirect (a test reads `location` itself), keeps no
/// cookies, and answers every status as a ``Response``. Not URLSession: on Linux a 401 with
/// `WWW-Authenticate: Basic` (what a token endpoint answers a wrong client secret, RFC 6749
/// §5.2) leaves its task waiting forever for credentials (swift-corelibs-foundation#5456).
package enum LoopbackHTTP {
    package struct Response: Sendable {
        package var status: Int
        /// Header fields by lowercased name; repeated fields joined with ", ".
        package var headers: [String: String]
        package var body: Data

        package var text: String { String(decoding: body, as: UTF8.self) }
        package var location: String? { headers["location"] }

        /// The body as a JSON object, or `nil`.
        package var object: [String: Any]? { try? JSONSerialization.jsonObject(with: body) as? [String: Any] }
    }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Sends one request and reads the answer (each read waits at most `timeout`).
    package static func send(
        _ method: String, _ url: String, headers: [String: String] = [:], body: Data? = nil, timeout: TimeInterval = 30
    ) async throws -> Response {
        guard let components = URLComponents(string: url), components.scheme == "http", let host = components.host,
              ["127.0.0.1", "localhost"].contains(host), let port = components.port
        else { throw Failure(description: "not an http URL of the loopback with a port: \(url)") }
        var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        if body != nil || ["POST", "PUT", "PATCH"].contains(method) { head += "Content-Length: \(body?.count ?? 0)\r\n" }
        let request = Array(head.utf8) + [13, 10] + Array(body ?? Data())
        // Blocking reads, on a thread of their own rather than the cooperative pool's.
        let result = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: RawHTTP.exchange(port: port, request, timeout: timeout)) }
        }
        guard case .response(let bytes) = result else { throw Failure(description: "\(method) \(url): connection refused or no answer") }
        guard let response = parse(bytes) else {
            throw Failure(description: "\(method) \(url): not a complete HTTP response: \(String(decoding: bytes.prefix(300), as: UTF8.self))")
        }
        return response
    }

    /// A response: status line, header fields, and a body by Content-Length, chunked, or up to
    /// the end of the connection.
    static func parse(_ bytes: [UInt8]) -> Response? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4, let end = (0...(bytes.count - 4)).first(where: { bytes[$0..<$0 + 4].elementsEqual(separator) }) else { return nil }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else { return nil }
        var headers = [String: String]()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        var rest = Array(bytes[(end + 4)...])
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            var body = [UInt8]()
            while let lineEnd = (0..<max(0, rest.count - 1)).first(where: { rest[$0] == 13 && rest[$0 + 1] == 10 }) {
                let sizeText = String(decoding: rest[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
                guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
                if size == 0 { break }
                guard rest.count >= lineEnd + 2 + size else { return nil }
                body += rest[(lineEnd + 2)..<(lineEnd + 2 + size)]
                rest = Array(rest[min(rest.count, lineEnd + 2 + size + 2)...])
            }
            rest = body
        } else if let length = headers["content-length"].flatMap({ Int($0) }) {
            guard rest.count >= length else { return nil }
            rest = Array(rest[..<length])
        }
        return Response(status: status, headers: headers, body: Data(rest))
    }

    package static func get(_ url: String, headers: [String: String] = [:]) async throws -> Response {
        try await send("GET", url, headers: headers)
    }

    /// Posts `form`, `application/x-www-form-urlencoded`.
    package static func post(_ url: String, form: [String: String], headers: [String: String] = [:]) async throws -> Response {
        var headers = headers
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        return try await send("POST", url, headers: headers, body: Data(formEncoded(form).utf8))
    }

    /// Sends `json` (anything `JSONSerialization` takes) with `method`.
    package static func send(_ method: String, _ url: String, json: Any, headers: [String: String] = [:]) async throws -> Response {
        var headers = headers
        headers["Content-Type"] = "application/json"
        return try await send(method, url, headers: headers, body: try JSONSerialization.data(withJSONObject: json))
    }

    /// `name=value&…`, each part percent-encoded as a form is (RFC 6749 appendix B).
    package static func formEncoded(_ fields: [String: String]) -> String {
        fields.sorted { $0.key < $1.key }.map { "\(formEscape($0.key))=\(formEscape($0.value))" }.joined(separator: "&")
    }

    package static func formEscape(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return text.addingPercentEncoding(withAllowedCharacters: allowed)!
    }

    /// The query parameters of `url` (the first of each name).
    package static func queryItems(_ url: String) -> [String: String] {
        var items = [String: String]()
        for item in URLComponents(string: url)?.queryItems ?? [] where items[item.name] == nil { items[item.name] = item.value ?? "" }
        return items
    }
}

/// A Python service a test starts from the venv (`LATCHKEY_PYTHON`): launched with standard
/// input closed, it announces its port in a line of its output; the output is read to its end on
/// a thread of its own, so a chatty service never fills the pipe, and kept for a failure's message.
final class PythonService: Sendable {
    let process: Process
    private let output = Mutex(Data())

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private init(process: Process) {
        self.process = process
    }

    /// The venv's interpreter, or a ``Failure`` naming what is missing.
    static func python(for what: String) throws -> URL {
        guard let python = ProcessInfo.processInfo.environment["LATCHKEY_PYTHON"], !python.isEmpty else {
            throw Failure(description: "\(what) needs LATCHKEY_PYTHON: the venv of scripts/requirements-test.txt (make test sets it)")
        }
        return URL(fileURLWithPath: python)
    }

    /// Starts `arguments` with the venv's Python and waits (up to `timeout`) for a line of its
    /// standard output, or its standard error when `announcedOnStandardError`, from which `port` reads a port.
    static func start(
        _ what: String, arguments: [String], environment: [String: String] = [:], announcedOnStandardError: Bool,
        timeout: TimeInterval = 60, port: @escaping @Sendable (Substring) -> Int?
    ) async throws -> (PythonService, Int) {
        let process = Process()
        process.executableURL = try python(for: what)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        if announcedOnStandardError {
            process.standardError = pipe
        } else {
            process.standardOutput = pipe
        }
        process.standardInput = FileHandle.nullDevice
        let service = PythonService(process: process)
        try Subprocess.launch(process)
        // A service that neither announces itself nor exits within `timeout` is killed, which
        // ends its output and so the wait.
        let announced = Announced()
        let pid = process.processIdentifier
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: timeout)
            if !announced.done.withLock({ $0 }) { kill(pid, SIGKILL) }
        }
        let found: Int? = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var resumed = false
                var scanned = 0
                while true {
                    let data = pipe.fileHandleForReading.availableData
                    if data.isEmpty { break }
                    let all = service.output.withLock { output in
                        output.append(data)
                        return output
                    }
                    guard !resumed else { continue }
                    let text = String(decoding: all, as: UTF8.self)
                    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                    for line in lines.dropLast().dropFirst(scanned) {
                        if let number = port(line) {
                            resumed = true
                            announced.done.withLock { $0 = true }
                            continuation.resume(returning: number)
                            break
                        }
                    }
                    scanned = max(lines.count - 1, 0)
                }
                if !resumed { continuation.resume(returning: nil) }
            }
        }
        guard let found else {
            service.stop()
            throw Failure(description: "\(what) did not start (it exited, or gave no port within \(Int(timeout)) s): \(service.outputTail)")
        }
        return (service, found)
    }

    private final class Announced: Sendable {
        let done = Mutex(false)
    }

    /// The last 2,000 characters it printed on the announcing stream.
    var outputTail: String {
        String(String(decoding: output.withLock { $0 }, as: UTF8.self).suffix(2000))
    }

    /// Ends it at once (SIGKILL) and waits for it.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
