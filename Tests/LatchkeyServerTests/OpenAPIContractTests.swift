import Foundation
import LatchkeyHTTP
@testable import LatchkeyServer
import Testing

/// docs/openapi.yaml is the contract: every route the server registers must be in it, in
/// development mode (with the sandbox) and in production. `scripts/contract-test` then checks
/// the answers against it with schemathesis.
@Suite("The OpenAPI contract")
struct OpenAPIContractTests {
    @Test("every route of a development server, sandbox included, is described in docs/openapi.yaml")
    func developmentRoutes() async throws {
        let routes = try await TestServer.with { server in OpenAPIPaths.names(server.application.router.routes) }
        #expect(routes.contains { $0.hasPrefix("GET /sandbox/apple/") })
        let missing = try OpenAPIPaths.undocumented(routes)
        #expect(missing.isEmpty, "routes missing from docs/openapi.yaml: \(missing)")
    }

    @Test("every route of a production server is described in docs/openapi.yaml")
    func productionRoutes() async throws {
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("master-\(UUID()).key")
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: keyFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile.path)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        let routes = try await TestServer.with({ configuration in
            configuration.dev = false
            configuration.masterKeyFile = keyFile.path
            configuration.apple.clientIDs = []
        }) { server in OpenAPIPaths.names(server.application.router.routes) }
        #expect(routes.contains("POST /v1/auth/password/login"))
        #expect(!routes.contains { $0.contains(" /sandbox/") })
        let missing = try OpenAPIPaths.undocumented(routes)
        #expect(missing.isEmpty, "routes missing from docs/openapi.yaml: \(missing)")
    }

    @Test("the reader finds the documented operations")
    func reader() throws {
        let documented = try OpenAPIPaths.load()
        #expect(documented.contains(.init(method: "GET", path: "/healthz")))
        #expect(documented.contains(.init(method: "DELETE", path: "/v1/sessions/{id}")))
        #expect(documented.contains(.init(method: "POST", path: "/v1/challenges/{id}/verify")))
        #expect(!documented.contains(.init(method: "GET", path: "/v1/token")))
    }
}

/// The `paths` section of docs/openapi.yaml, read line by line: a path is a key indented two
/// spaces under `paths:`, its operations are method keys indented four. That is all the test
/// needs, and no YAML library is at hand.
enum OpenAPIPaths {
    struct Operation: Hashable {
        var method: String
        var path: String
    }

    /// `"GET /healthz"` for each route.
    static func names(_ routes: [(method: HTTPMethod, pattern: String)]) -> [String] {
        routes.map { "\($0.method.rawValue) \($0.pattern)" }
    }

    /// The routes among `names` that the file does not describe.
    static func undocumented(_ names: [String]) throws -> [String] {
        let documented = Set(try load().map { "\($0.method) \($0.path)" })
        return names.filter { !documented.contains($0) }
    }

    static let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    static func load() throws -> Set<Operation> {
        let file = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/openapi.yaml")
        let text = try String(contentsOf: file, encoding: .utf8)
        var operations = Set<Operation>()
        var inPaths = false
        var path: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.isEmpty, !line.hasPrefix(" "), !line.hasPrefix("#") {
                inPaths = line.hasPrefix("paths:")
                path = nil
                continue
            }
            guard inPaths, line.hasSuffix(":") else { continue }
            let key = line.dropLast().trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
            let indent = line.prefix { $0 == " " }.count
            if indent == 2, key.hasPrefix("/") {
                path = key
            } else if indent == 4, let path, methods.contains(key) {
                operations.insert(Operation(method: key.uppercased(), path: path))
            }
        }
        guard !operations.isEmpty else { throw CocoaError(.fileReadCorruptFile) }
        return operations
    }
}
