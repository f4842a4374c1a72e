import Foundation
import Testing

/// The module and layer boundaries of docs/architecture.md, checked on the source text so that
/// a change that crosses one fails here with the file and line, not in review.
@Suite("Layering: modules import only what docs/architecture.md allows")
struct LayeringTests {
    static let root = StandaloneTests.root

    /// One Swift source line with where it is.
    struct Line: CustomStringConvertible {
        var file: String
        var number: Int
        var text: Substring
        var description: String { "\(file):\(number): \(text.trimmingCharacters(in: .whitespaces))" }
    }

    /// Every line of every Swift file under `folder`, comments left out.
    static func lines(under folder: String) throws -> [Line] {
        let base = root.appending(path: folder)
        let files = try #require(FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        return try files.flatMap { file -> [Line] in
            let name = String(file.path.dropFirst(root.path.count + 1))
            return try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                .filter { !$0.element.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                .map { Line(file: name, number: $0.offset + 1, text: $0.element) }
        }
    }

    /// The modules a source folder imports.
    static func imports(under folder: String) throws -> [String: [Line]] {
        // Each pattern here is built once, outside the loop over lines: a regex literal is
        // compiled every time it is evaluated, which per line cost more CPU than all the checks.
        let importLine = /^\s*(?:@testable\s+)?(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+(?:(?:enum|struct|class|protocol|func|var|typealias)\s+)?([A-Za-z0-9_]+)/
        var found: [String: [Line]] = [:]
        for line in try lines(under: folder) {
            if let match = line.text.firstMatch(of: importLine) {
                found[String(match.output.1), default: []].append(line)
            }
        }
        return found
    }

    /// The platform: libc, Dispatch, atomics and FoundationEssentials, which every module but
    /// the two an SDK shares may use.
    static let platform: Set<String> = ["FoundationEssentials", "Glibc", "Musl", "Darwin", "Dispatch", "Synchronization"]

    /// What each module may import besides the standard library (docs/architecture.md, "Modules").
    static let allowedImports: [String: Set<String>] = [
        "LatchkeyJSON": [],
        "LatchkeyWire": ["LatchkeyJSON"],
        "LatchkeyErrors": [],
        "LatchkeyBasics": platform,
        "LatchkeyCrypto": platform.union(["CLatchkeyOpenSSL", "CLatchkeyArgon2", "CLatchkeyUnistring", "LatchkeyErrors"]),
        "LatchkeyJOSE": platform.union(["LatchkeyJSON", "LatchkeyCrypto", "LatchkeyErrors"]),
        "LatchkeyWebAuthn": platform.union(["LatchkeyJSON", "LatchkeyCrypto", "LatchkeyErrors"]),
        "LatchkeyCommonPasswords": [],
        "LatchkeyHTTP": platform.union(["LatchkeyJSON", "LatchkeyErrors", "LatchkeyBasics"]),
        "LatchkeyLibevent": platform.union(["CLatchkeyEvent", "CLatchkeyShims"]),
        "LatchkeyHTTPServer": platform.union(["CLatchkeyEvent", "LatchkeyLibevent", "LatchkeyHTTP", "LatchkeyJSON", "LatchkeyErrors", "LatchkeyBasics"]),
        "LatchkeyHTTPClient": platform.union([
            "CLatchkeyEvent", "CLatchkeyShims", "LatchkeyLibevent", "LatchkeyHTTP", "LatchkeyJSON", "LatchkeyErrors", "LatchkeyBasics",
        ]),
        "LatchkeyStore": platform.union(["CLatchkeySQLite", "CLatchkeyPQ", "LatchkeyJSON", "LatchkeyErrors"]),
        "LatchkeyMail": platform.union(["CLatchkeyEvent", "CLatchkeyShims", "LatchkeyLibevent", "LatchkeyBasics", "LatchkeyCrypto"]),
        "LatchkeySandbox": platform.union(["LatchkeyJSON", "LatchkeyCrypto", "LatchkeyJOSE", "LatchkeyHTTP", "LatchkeyHTTPClient", "LatchkeyErrors"]),
        "LatchkeyServer": platform.union([
            "LatchkeyErrors", "LatchkeyBasics", "LatchkeyJSON", "LatchkeyWire", "LatchkeyCrypto", "LatchkeyJOSE", "LatchkeyHTTP",
            "LatchkeyHTTPServer", "LatchkeyHTTPClient", "LatchkeyStore", "LatchkeyCommonPasswords", "LatchkeyMail", "LatchkeyWebAuthn",
        ]),
    ]

    @Test("each module imports only the modules below it; the wire models link no C library and no Foundation", arguments: [
        "LatchkeyJSON", "LatchkeyWire", "LatchkeyErrors", "LatchkeyBasics", "LatchkeyCrypto", "LatchkeyJOSE", "LatchkeyWebAuthn", "LatchkeyCommonPasswords",
        "LatchkeyHTTP", "LatchkeyLibevent", "LatchkeyHTTPServer", "LatchkeyHTTPClient", "LatchkeyStore", "LatchkeyMail", "LatchkeySandbox", "LatchkeyServer",
    ])
    func importsFollowTheGraph(module: String) throws {
        let allowed = try #require(Self.allowedImports[module])
        let imports = try Self.imports(under: "Sources/\(module)")
        let forbidden = imports.filter { !allowed.contains($0.key) }.flatMap(\.value)
        #expect(forbidden.isEmpty, "\(forbidden)")
    }

    /// The modules apps may link (library products), the only ones with `public` symbols.
    static let publicModules: Set<String> = ["LatchkeyJSON", "LatchkeyWire", "LatchkeyClient"]

    @Test("only the library products declare public symbols; every other module shares with package access")
    func publicOnlyInProducts() throws {
        let modules = try FileManager.default.contentsOfDirectory(atPath: Self.root.appending(path: "Sources").path)
            .filter { !$0.hasPrefix("C") && !Self.publicModules.contains($0) }
        #expect(modules.count >= 10, "\(modules)")
        let publicDeclaration = /^\s*(?:@[A-Za-z]+(?:\([^)]*\))?\s+)*(?:public|open)\s/
        let declarations = try modules.flatMap { try Self.lines(under: "Sources/\($0)") }
            .filter { $0.text.firstMatch(of: publicDeclaration) != nil }
        #expect(declarations.isEmpty, "public outside the products:\n\(declarations.map(\.description).joined(separator: "\n"))")
    }

    @Test("C modules are imported internally: no C type can show in a package or public signature")
    func cModulesStayInternal() throws {
        let modules = try FileManager.default.contentsOfDirectory(atPath: Self.root.appending(path: "Sources").path).filter { !$0.hasPrefix("C") }
        let exposedCImport = /^\s*(?:public|package)\s+import\s+CLatchkey/
        let exposed = try modules.flatMap { try Self.lines(under: "Sources/\($0)") }
            .filter { $0.text.firstMatch(of: exposedCImport) != nil }
        #expect(exposed.isEmpty, "\(exposed.map(\.description).joined(separator: "\n"))")
    }

    @Test("the sandbox Apple is never linked into the server: LatchkeyServer does not import LatchkeySandbox")
    func sandboxIsNotAServerDependency() throws {
        #expect(try Self.imports(under: "Sources/LatchkeyServer")["LatchkeySandbox"] == nil)
        let package = try String(contentsOf: Self.root.appending(path: "Package.swift"), encoding: .utf8)
        let server = try #require(package.firstMatch(of: /name: "LatchkeyServer",\s*dependencies: \[([^\]]*)\]/))
        #expect(!server.output.1.contains("LatchkeySandbox"))
    }

    /// The route layer: the only server code that sees HTTP messages.
    static func isRouteLayer(_ file: String) -> Bool {
        file.hasPrefix("Sources/LatchkeyServer/Routes/") || file.hasPrefix("Sources/LatchkeyServer/Application/")
    }

    @Test("the domain is free of HTTP: no HTTPRequest, HTTPResponse or HTTPError outside Routes/ and Application/")
    func domainIsFreeOfHTTP() throws {
        let http = /\b(HTTPRequest|HTTPResponse|HTTPError|HTTPResponseError|HTTPHeaders)\b/
        let leaks = try Self.lines(under: "Sources/LatchkeyServer").filter { line in
            !Self.isRouteLayer(line.file) && line.text.contains(http)
        }
        #expect(leaks.isEmpty, "\(leaks)")
    }

    /// The domain folders of the server: services, their repositories and their values.
    static let domainFolders = [
        "Accounts", "Admin", "AppAttest", "Apple", "Audit", "DPoP", "Email", "Factors", "Federation", "OAuth", "Outbox", "Passkeys", "Passwords", "Sessions", "Signing", "Support",
    ]

    /// The domain's outbound adapters, which speak HTTP to Apple and upstream providers and so
    /// build HTTP messages.
    static let outboundAdapters: Set<String> = [
        "Sources/LatchkeyServer/Apple/AppleClient.swift", "Sources/LatchkeyServer/Support/RemoteKeySet.swift",
        "Sources/LatchkeyServer/Federation/UpstreamClient.swift",
    ]

    @Test("no domain file imports LatchkeyHTTP: services, repositories and their values know nothing of the wire")
    func domainDoesNotImportHTTP() throws {
        var folders = try FileManager.default.contentsOfDirectory(atPath: Self.root.appending(path: "Sources/LatchkeyServer").path)
        folders.removeAll { ["Routes", "Application", "HostedPages", "Configuration", "Operations"].contains($0) }
        #expect(Set(folders) == Set(Self.domainFolders), "a new folder of the server is either domain or not: add it to one list")
        var leaks: [Line] = []
        for folder in Self.domainFolders {
            leaks += try Self.imports(under: "Sources/LatchkeyServer/\(folder)")["LatchkeyHTTP", default: []]
                .filter { !Self.outboundAdapters.contains($0.file) }
        }
        #expect(leaks.isEmpty, "\(leaks)")
    }

    @Test("no service reaches another's dependencies: each gets the database, clock, audit log, metrics, users and keys it uses")
    func servicesDoNotLendTheirDependencies() throws {
        let services = /\b(sessions|signIns|accessTokens|refreshTokens|apple|passwords|factors|accounts|tokens|grants|authorization|browserSessions|clients|deletion|appleWeb)\.(dependencies|database|clock|audit|metrics|users|keys|masterKey|outbox)\b/
        var leaks: [Line] = []
        for folder in ["Sources/LatchkeyServer", "Sources/latchkey", "Sources/latchkey-bench"] {
            leaks += try Self.lines(under: folder).filter { $0.text.contains(services) }
        }
        #expect(leaks.isEmpty, "\(leaks.map(\.description).joined(separator: "\n"))")
    }

    @Test("all SQL lives in repositories: no SQL statement in a string outside *Repository files and LatchkeyStore")
    func sqlLivesInRepositories() throws {
        let statement = /(?:"|^\s*)(SELECT\s|INSERT\s+INTO\s|UPDATE\s+[a-z_]+\s+SET\s|DELETE\s+FROM\s)/
        var leaks: [Line] = []
        for folder in ["Sources/LatchkeyServer", "Sources/latchkey", "Sources/latchkey-bench", "Sources/LatchkeySandbox"] {
            leaks += try Self.lines(under: folder).filter { line in
                let file = URL(filePath: line.file).lastPathComponent
                let isRepository = file.hasSuffix("Repository.swift") || file.contains("Repository+")
                return !isRepository && line.text.contains(statement)
            }
        }
        #expect(leaks.isEmpty, "\(leaks)")
    }

    @Test("no call site names the SQL dialect: connections apply it themselves")
    func noDialectAtCallSites() throws {
        let dialect = /\bdialect\b/
        var leaks: [Line] = []
        for folder in ["Sources/LatchkeyServer", "Sources/latchkey", "Sources/latchkey-bench", "Sources/LatchkeySandbox"] {
            leaks += try Self.lines(under: folder).filter { $0.text.contains(dialect) }
        }
        #expect(leaks.isEmpty, "\(leaks)")
    }
}
