import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyJOSE
import LatchkeyJSON
import LatchkeyServer
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// `serve --dev --lan`: the development server reachable from a Simulator or a phone, only when
/// asked for, and loud about what that means.
@Suite("latchkey serve --dev --lan")
struct DevLANTests {
    @Test("development mode refuses a non-loopback listener without --lan, and --lan outside development mode")
    func refusedWithoutTheFlag() async throws {
        let directory = try ServeTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases: [(arguments: [String], message: String)] = [
            (["serve", "--dev", "--listen", "0.0.0.0:8080"], "listen: development mode mounts the Apple sandbox, so it listens on a loopback address unless --lan asks for the local network"),
            (["serve", "--lan"], "--lan: only for development mode (--dev)"),
            (["serve", "--dev", "--lan", "--listen", "0.0.0.0:0"], "--lan: needs a fixed port"),
        ]
        for (arguments, message) in cases {
            let result = try Subprocess.run(Executables.latchkey, arguments, directory: directory)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.error.contains("latchkey: configuration: " + message), "\(arguments): \(result.error)")
        }
        // No file key or variable turns LAN mode on: development mode from the environment keeps loopback.
        let environment = try Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["LATCHKEY_DEV=true", Executables.latchkey.path, "serve", "--listen", "0.0.0.0:8080"], directory: directory)
        #expect(environment.status == 1)
        #expect(environment.error.contains("unless --lan asks for the local network"), "\(environment.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "nothing started, nothing created")
    }

    @Test("--lan binds every interface and names the server by the first LAN address, or asks for --public-url")
    func loaderRules() throws {
        let lan = try ConfigurationLoader.load(file: nil, environment: [:], dev: true, lan: true, lanAddresses: ["192.168.1.20", "10.0.0.3"])
        #expect(lan.listen == "0.0.0.0:8080" && lan.publicURL == "http://192.168.1.20:8080" && lan.lan)
        let chosen = try ConfigurationLoader.load(
            file: nil, environment: [:], dev: true, listen: "127.0.0.1:9000", publicURL: "http://10.0.0.3:9000", lan: true, lanAddresses: ["192.168.1.20"])
        #expect(chosen.listen == "0.0.0.0:9000" && chosen.publicURL == "http://10.0.0.3:9000")
        let bound = try ConfigurationLoader.load(file: nil, environment: [:], dev: true, listen: "192.168.1.20:8080", lan: true, lanAddresses: [])
        #expect(bound.listen == "192.168.1.20:8080" && bound.publicURL == "http://192.168.1.20:8080", "one interface, named by itself")
        do {
            _ = try ConfigurationLoader.load(file: nil, environment: [:], dev: true, lan: true, lanAddresses: [])
            Issue.record("a loopback-only machine needs --public-url")
        } catch {
            #expect(error.problems == ["--lan: this machine has no LAN address; give --public-url http://ADDRESS:8080"])
        }
        #expect(try ConfigurationLoader.load(file: nil, environment: ["LATCHKEY_DEV": "true"]).lan == false)
    }

    @Test("with --dev --lan it answers on this machine's LAN address, a sign-in through the sandbox works there, and the banner is loud")
    func s31AnswersOnTheLAN() async throws {
        let directory = try ServeTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try Self.freePort()
        // Only this machine's own addresses are used; a machine with none tests 0.0.0.0 through loopback.
        let address = NetworkInterfaces.lanAddresses().first
        var arguments = ["serve", "--dev", "--lan", "--listen", "0.0.0.0:\(port)"]
        if address == nil { arguments += ["--public-url", "http://127.0.0.1:\(port)"] }
        let publicURL = "http://\(address ?? "127.0.0.1"):\(port)"

        let server = try await ServerProcess.start(arguments, in: directory)
        defer { server.stop() }
        #expect(server.banner.hasPrefix("latchkey 0.1.0 listening on http://0.0.0.0:\(port)\n  public URL  \(publicURL)\n"), "\(server.banner)")
        #expect(server.banner.contains("LAN MODE: this development server listens on every interface (http://0.0.0.0:\(port))"))
        #expect(server.banner.contains("anyone who can reach this port\n!!  can sign in as any user"))
        #expect(server.banner.contains("never let it face the internet"))
        #expect(server.banner.contains("Devices reach it at \(publicURL)"))
        #expect(server.banner.contains("latchkey demo --url \(publicURL)"))

        for base in Set([publicURL, "http://127.0.0.1:\(port)"]) {
            let (data, response) = try await URLSession.shared.data(from: URL(string: base + "/healthz")!)
            #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(base)")
            #expect(String(decoding: data, as: UTF8.self) == #"{"status":"ok"}"#)
        }

        // A device on the network signs in through the sandbox Apple at the public URL; the tokens
        // it gets name that URL, which is what the app checks.
        let signIn = try await SandboxSignIn.signIn(at: publicURL)
        let token = try #require(try? signIn.tokens, "\(signIn.response.serializedString)").accessToken
        let claims = try Insecure.unverifiedContents(of: token).claims
        #expect(claims["iss"]?.stringValue == publicURL)
        #expect(claims["aud"]?.stringValue == publicURL)
    }

    /// A TCP port nobody listens on now, on every interface: `--lan` needs a fixed port.
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = INADDR_ANY
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw ServerProcessError(description: "cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
