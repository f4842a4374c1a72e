import Foundation
import LatchkeyClient
import LatchkeyTestSupport
import Testing

/// The SDK's web sign-in against the real `latchkey serve --dev`: a first-party native client
/// registered with `latchkey clients add`, the hosted sign-in page, the callback, the code
/// exchange with PKCE, and the session refreshing through `/v1/token` afterwards.
@Suite("SDK web sign-in against the server")
struct WebSignInFlowTests {
    static let password = "correct horse battery staple 7"

    @Test("signInWithWeb: authorize → hosted sign-in → com.example.app:/oauth/callback → token exchange; the session refreshes and calls /v1")
    func webSignIn() async throws {
        try await DevServer.with { server in
            let registered = try Subprocess.run(
                Executables.latchkey,
                ["clients", "add", "--name", "Example App", "--redirect-uri", "com.example.app:/oauth/callback", "--first-party", "--json"],
                directory: server.directory.url)
            #expect(registered.status == 0, "\(registered.error)")
            let clientID = try #require(registered.output.split(separator: "\"").dropFirst(3).first.map(String.init))
            let setup = server.client()
            _ = try await setup.signUp(username: "ada", password: Self.password)

            let phone = server.client { $0.clientID = clientID }
            let browser = HostedBrowser(base: server.baseURL)
            let session = try await phone.signInWithWeb(redirectURI: "com.example.app:/oauth/callback") { request in
                let signIn = try await browser.get(request.url.absoluteString)
                #expect(signIn.status == 200 && signIn.text.contains(#"autocomplete="current-password""#))
                let callback = try await browser.submit(signIn, ["username": "ada", "password": Self.password])
                #expect(callback.status == 303)
                return try #require(callback.location.flatMap(URL.init(string:)))
            }
            #expect(await phone.session == session)
            #expect(try await phone.me().username == "ada")
            let refreshed = try await phone.refresh()
            #expect(refreshed.sessionID == session.sessionID && refreshed.refreshToken != session.refreshToken)
            #expect(try await server.auditCount("oauth.code_exchanged", userID: session.user.id) == 1)
        }
    }
}
