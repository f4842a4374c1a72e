import Foundation
import LatchkeyClient
import Testing

/// The launch-time check (`restore(appleState:)`) with each Apple credential state, against the
/// real server.
@Suite("SDK against the server: the launch-time check", .serialized)
struct LaunchTests {
    /// A signed-in Apple session in `store`, and the client that made it.
    static func signedIn(_ server: DevServer, store: any CredentialStore) async throws -> Session {
        let credential = try await server.appleCredential(email: "ada@example.com")
        return try #require(try await server.client(store: store).signInWithApple(credential).session)
    }

    @Test("authorized: signed in; a due token is refreshed first")
    func authorized() async throws {
        try await DevServer.with { server in
            let store = InMemoryCredentialStore()
            let session = try await Self.signedIn(server, store: store)
            #expect(await server.client(store: store).restore(appleState: FixedAppleState(answer: .authorized)) == .signedIn(session))
            // With a clock 890 s on, the token has 10 s left: the check refreshes it.
            let later = server.client(store: store) { $0.now = { Date().addingTimeInterval(890) } }
            guard case .signedIn(let refreshed) = await later.restore(appleState: FixedAppleState(answer: .authorized)) else {
                Issue.record("not signed in")
                return
            }
            #expect(refreshed.refreshToken != session.refreshToken && refreshed.sessionID == session.sessionID)
        }
    }

    @Test("revoked, notFound, transferred: signed out with the matching reason, here and at the server", arguments: [
        (AppleCredentialState.revoked, SignOutReason.credentialRevoked),
        (.notFound, .credentialNotFound),
        (.transferred, .transferred),
    ])
    func signedOut(state: AppleCredentialState, reason: SignOutReason) async throws {
        try await DevServer.with { server in
            let store = InMemoryCredentialStore()
            let session = try await Self.signedIn(server, store: store)
            let copy = InMemoryCredentialStore()
            try copy.save(try #require(try store.load()))
            let client = server.client(store: store)
            let events = EventRecorder(client.authEvents, count: 2)
            #expect(await client.restore(appleState: FixedAppleState(answer: state)) == .signedOut(reason))
            #expect(try store.load() == nil)
            #expect(await events.events().map(\.name) == ["initialSession", "signedOut(\(reason))"])
            // The server ended the session too: a copy of the old tokens is refused.
            let stale = server.client(store: copy)
            let refused = await #expect(throws: LatchkeyError.self) { try await stale.refresh() }
            #expect(refused?.code == .sessionEnded && refused?.signOutReason == .sessionRevoked)
            _ = session
        }
    }

    @Test("Apple unreachable, or the server unreachable with a due token: offline with the cached session")
    func offline() async throws {
        try await DevServer.with { server in
            let store = InMemoryCredentialStore()
            let session = try await Self.signedIn(server, store: store)
            #expect(await server.client(store: store).restore(appleState: FixedAppleState(answer: nil)) == .offline(session))
            let transport = SwitchableTransport()
            transport.offline = true
            let later = server.client(store: store, transport: transport) { $0.now = { Date().addingTimeInterval(890) } }
            #expect(await later.restore(appleState: FixedAppleState(answer: .authorized)) == .offline(session))
            #expect(try store.load()?.session == session)
        }
    }

    @Test("Nothing stored: signed out with no reason")
    func empty() async throws {
        try await DevServer.with { server in
            #expect(await server.client().restore(appleState: FixedAppleState(answer: .authorized)) == .signedOut(nil))
        }
    }
}
