import Foundation
@testable import LatchkeyClient
import LatchkeyTestSupport
import Synchronization
import Testing

/// The SDK's device sign-in (RFC 8628, for tvOS): the polling state machine on its own, then
/// ``LatchkeyClient/beginDeviceSignIn(scopes:)`` and ``DeviceSignIn/wait()`` against the real
/// `latchkey serve --dev`, with the phone's part played by a plain HTTP client on `/device`.
@Suite("SDK device sign-in")
struct DeviceSignInTests {
    static let password = "correct horse battery staple 7"

    @Test("S44: the polling backoff: authorization_pending waits the interval, slow_down adds 5 s for good, a network failure waits and polls again; access_denied, expired_token and anything else stop")
    func pollingBackoff() {
        var polling = DevicePolling(interval: 5)
        #expect(polling.next(after: LatchkeyError(.server(code: "authorization_pending"), "")) == .pollAgain(after: 5))
        #expect(polling.next(after: LatchkeyError(.server(code: "slow_down"), "")) == .pollAgain(after: 10))
        #expect(polling.next(after: LatchkeyError(.server(code: "authorization_pending"), "")) == .pollAgain(after: 10))
        #expect(polling.next(after: LatchkeyError(.server(code: "slow_down"), "")) == .pollAgain(after: 15))
        #expect(polling.next(after: LatchkeyError(.network, "offline")) == .pollAgain(after: 15))
        guard case .stop(let denied) = polling.next(after: LatchkeyError(.server(code: "access_denied"), "", status: 400)) else {
            Issue.record("access_denied must stop")
            return
        }
        #expect(denied.code == .canceled && denied.reason == "access_denied")
        #expect(polling.next(after: LatchkeyError(.server(code: "expired_token"), "")) == .stop(LatchkeyError(.server(code: "expired_token"), "")))
        #expect(polling.next(after: LatchkeyError(.server(code: "invalid_grant"), "")) == .stop(LatchkeyError(.server(code: "invalid_grant"), "")))
        #expect(DevicePolling(interval: 0).interval == 1, "a server's 0 is never a busy loop")
    }

    /// A dev server with a first-party TV client (`clients add --grant device_code --first-party`)
    /// and a password account; `body` gets the server and the TV's client.
    static func with<T>(_ body: (DevServer, LatchkeyClient) async throws -> T) async throws -> T {
        try await DevServer.with { server in
            let registered = try Subprocess.run(
                Executables.latchkey, ["clients", "add", "--name", "Example TV", "--grant", "device_code", "--first-party", "--json"],
                directory: server.directory.url)
            #expect(registered.status == 0, "\(registered.error)")
            let clientID = try #require(registered.output.split(separator: "\"").dropFirst(3).first.map(String.init))
            _ = try await server.client().signUp(username: "ada", password: Self.password)
            return try await body(server, server.client { $0.clientID = clientID })
        }
    }

    /// The phone: the QR code's link, Continue, the password, and the consent page's `decision`.
    static func answer(_ signIn: DeviceSignIn, decision: String, on server: DevServer) async throws {
        let phone = HostedBrowser(base: server.baseURL)
        let codePage = try await phone.get(signIn.qrCodeURL.absoluteString)
        #expect(codePage.status == 200 && codePage.text.contains(#"value="\#(signIn.userCode)""#))
        let signInPage = try await phone.submit(codePage, ["user_code": signIn.userCode])
        let consent = try await phone.submit(signInPage, ["username": "ada", "password": Self.password])
        #expect(consent.text.contains("A device is asking to sign in to Example TV"))
        let done = try await phone.submit(consent, ["decision": decision])
        #expect(done.status == 200)
    }

    @Test("S44 S46: beginDeviceSignIn gives the code, the page and the QR code's link; wait() polls, waits the interval while pending, and stores the session once the phone allows it")
    func signInOnTheTV() async throws {
        try await Self.with { server, tv in
            let signIn = try await tv.beginDeviceSignIn()
            #expect(signIn.userCode.wholeMatch(of: /[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}/) != nil, "\(signIn.userCode)")
            #expect(signIn.verificationURL.absoluteString == server.baseURL.absoluteString + "/device")
            #expect(signIn.qrCodeURL.absoluteString == signIn.verificationURL.absoluteString + "?user_code=" + signIn.userCode)
            #expect(signIn.expiresAt > Date().addingTimeInterval(590))

            // The first poll hears authorization_pending; while the TV waits its 5 seconds, the
            // person allows it on the phone; the next poll gets the tokens.
            let waits = Mutex<[Int]>([])
            let session = try await signIn.wait { seconds in
                let count = waits.withLock { $0.append(seconds); return $0.count }
                if count == 1 { try await Self.answer(signIn, decision: "allow", on: server) }
                try await Task.sleep(for: .seconds(seconds))
            }
            #expect(waits.withLock { $0 } == [5])
            #expect(await tv.session == session)
            #expect(try await tv.me().username == "ada")
            let refreshed = try await tv.refresh()
            #expect(refreshed.sessionID == session.sessionID && refreshed.refreshToken != session.refreshToken)
            #expect(try await server.auditCount("device_grant.redeemed", userID: session.user.id) == 1)
        }
    }

    @Test("S46: when the person denies the device, wait() throws canceled with reason access_denied and stores nothing")
    func deniedOnThePhone() async throws {
        try await Self.with { server, tv in
            let signIn = try await tv.beginDeviceSignIn()
            try await Self.answer(signIn, decision: "deny", on: server)
            let error = await #expect(throws: LatchkeyError.self) { try await signIn.wait { _ in Issue.record("no wait after a denial") } }
            #expect(error?.code == .canceled && error?.reason == "access_denied")
            #expect(await tv.session == nil)
        }
    }

    @Test("beginDeviceSignIn without a clientID is invalid_configuration; a client not registered for the grant is unauthorized_client")
    func refusals() async throws {
        try await DevServer.with { server in
            await #expect(throws: LatchkeyError(.invalidConfiguration, "")) { try await server.client().beginDeviceSignIn() }
            let web = try Subprocess.run(
                Executables.latchkey, ["clients", "add", "--name", "Web", "--redirect-uri", "com.example.app:/cb", "--json"],
                directory: server.directory.url)
            let webID = try #require(web.output.split(separator: "\"").dropFirst(3).first.map(String.init))
            await #expect(throws: LatchkeyError(.server(code: "unauthorized_client"), "")) {
                try await server.client { $0.clientID = webID }.beginDeviceSignIn()
            }
        }
    }
}
