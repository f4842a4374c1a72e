import Foundation
import LatchkeyClient
import LatchkeyTestSupport
import Testing

/// Single flight and "never sign out on an ambiguous error", against the real server; refreshes
/// are counted in the server's own audit log.
@Suite("SDK against the server: refresh", .serialized)
struct RefreshTests {
    static let password = "correct horse battery staple 7"

    @Test("1,000 concurrent accessToken() calls that need a refresh cause exactly one refresh, and all get its token")
    func singleFlight() async throws {
        try await DevServer.with { server in
            let transport = SwitchableTransport()
            let client = server.client(transport: transport)
            let session = try #require(try await client.signUp(username: "ada", password: Self.password).session)
            // A minTTL longer than the token's life means "refresh now" for every caller.
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<1000 { group.addTask { try await client.accessToken(minTTL: .seconds(3600)) } }
                var tokens: Set<String> = []
                for try await token in group { tokens.insert(token) }
                return tokens
            }
            #expect(tokens.count == 1)
            #expect(tokens.first != session.accessToken)
            #expect(transport.refreshes == 1)
            #expect(try await server.auditCount("session.refreshed", userID: session.user.id) == 1)
            #expect(try await server.auditCount("session.reuse_detected", userID: session.user.id) == 0)
            #expect(try await client.me().user.id == session.user.id)
        }
    }

    @Test("A network failure, a 503 and a locked store keep the session; the next refresh works")
    func ambiguousErrorsKeepTheSession() async throws {
        try await DevServer.with { server in
            let transport = SwitchableTransport()
            let store = LockableStore()
            let client = server.client(store: store, transport: transport)
            let session = try #require(try await client.signUp(username: "grace", password: Self.password).session)
            let events = EventRecorder(client.authEvents, count: 100)

            transport.offline = true
            await #expect(throws: LatchkeyError(.network, "")) { try await client.refresh() }
            #expect(await client.session == session)
            #expect(try store.load() == StoredSession(session: session))

            transport.offline = false
            transport.tokenStatus = 503
            let unavailable = await #expect(throws: LatchkeyError.self) { try await client.refresh() }
            #expect(unavailable?.code == .server(code: "unavailable") && unavailable?.status == 503)
            #expect(await client.session == session)
            transport.tokenStatus = nil

            // The Keychain locks (prewarming): the refresh goes through, the new tokens are kept in
            // memory, and they reach the store once it opens again.
            store.locked = true
            let refreshed = try await client.refresh()
            #expect(refreshed.refreshToken != session.refreshToken)
            let again = try await client.refresh()
            #expect(again.refreshToken != refreshed.refreshToken, "still locked, the unsaved session refreshes again")
            store.locked = false
            #expect(try await client.accessToken() == again.accessToken)
            #expect(try store.load()?.session == again)
            #expect(try await server.auditCount("session.refreshed", userID: session.user.id) == 2)
            #expect(try await client.refresh().user.id == session.user.id)
            await client.signOut()
            #expect(await events.events(timeout: .milliseconds(300)).map(\.name).filter { $0.hasPrefix("signedOut") } == ["signedOut(userInitiated)"])
        }
    }

    @Test("S8: a refresh whose answer is lost after the server rotated is a network error that keeps the session; the retry with the old token gets the same successor within the reuse grace")
    func lostAnswer() async throws {
        try await DevServer.with { server in
            let transport = SwitchableTransport()
            let store = InMemoryCredentialStore()
            let client = server.client(store: store, transport: transport)
            let session = try #require(try await client.signUp(username: "ada", password: Self.password).session)
            transport.loseNextTokenAnswer = true
            await #expect(throws: LatchkeyError(.network, "")) { try await client.refresh() }
            #expect(try await server.auditCount("session.refreshed", userID: session.user.id) == 1, "the server did rotate")
            #expect(await client.session == session)
            #expect(try store.load()?.session == session)
            // The retry presents the old token again: within the server's reuse grace, and with
            // the successor unused, the answer is that same successor, and the session lives on.
            let retried = try await client.refresh()
            #expect(retried.sessionID == session.sessionID)
            #expect(retried.refreshToken != session.refreshToken)
            #expect(try await server.auditCount("session.refresh_replayed", userID: session.user.id) == 1)
            #expect(try await server.auditCount("session.reuse_detected", userID: session.user.id) == 0)
            let next = try await client.refresh()
            #expect(next.sessionID == session.sessionID)
            #expect(try await client.me().user.id == session.user.id)
        }
    }

    @Test("A client created while the store is locked starts signed out in its events, then finds the session once it opens")
    func lockedAtLaunch() async throws {
        try await DevServer.with { server in
            let store = LockableStore()
            let session = try #require(try await server.client(store: store).signUp(username: "mary", password: Self.password).session)
            store.locked = true
            let client = server.client(store: store)
            #expect(await client.session == nil)
            await #expect(throws: LatchkeyError(.notSignedIn, "")) { try await client.accessToken() }
            store.locked = false
            #expect(try await client.accessToken() == session.accessToken)
        }
    }

    @Test("Definite answers end the session with their reason: revoked, reused, consent_revoked, account_deleted")
    func definiteAnswersSignOut() async throws {
        try await DevServer.with { server in
            // revoked: signed out everywhere from another device.
            let phone = server.client()
            _ = try await phone.signUp(username: "ada", password: Self.password)
            let laptop = server.client()
            _ = try await laptop.signIn(username: "ada", password: Self.password)
            await laptop.signOut(everywhere: true)
            let revoked = await #expect(throws: LatchkeyError.self) { try await phone.refresh() }
            #expect(revoked?.code == .sessionEnded && revoked?.signOutReason == .sessionRevoked && revoked?.reason == "revoked")
            #expect(await phone.session == nil)

            // reused: a copy of the store presents a token the first client rotated, and whose
            // successor it has since used too, so the server's reuse grace does not apply.
            let original = InMemoryCredentialStore()
            let first = server.client(store: original)
            _ = try await first.signIn(username: "ada", password: Self.password)
            let copy = InMemoryCredentialStore()
            try copy.save(try #require(try original.load()))
            _ = try await first.refresh()
            _ = try await first.refresh()
            let stale = server.client(store: copy)
            let events = EventRecorder(stale.authEvents, count: 2)
            let reused = await #expect(throws: LatchkeyError.self) { try await stale.refresh() }
            #expect(reused?.signOutReason == .tokenReused)
            #expect(await events.events().map(\.name) == ["initialSession", "signedOut(tokenReused)"])
            #expect(try copy.load() == nil)

            // consent_revoked: the user stops using Sign in with Apple; Apple tells the server.
            let apple = server.client()
            let credential = try await server.appleCredential(email: "grace@example.com")
            _ = try await apple.signInWithApple(credential)
            #expect(try await server.appleNotification(subject: credential.user, type: "consent-revoked") == 200)
            let consent = await #expect(throws: LatchkeyError.self) { try await apple.accessToken(minTTL: .seconds(3600)) }
            #expect(consent?.signOutReason == .consentRevoked)

            // account_deleted: deleted on one device, the other finds out at its next refresh.
            let one = server.client()
            _ = try await one.signUp(username: "katherine", password: Self.password)
            let other = server.client()
            _ = try await other.signIn(username: "katherine", password: Self.password)
            try await one.deleteAccount()
            let deleted = await #expect(throws: LatchkeyError.self) { try await other.refresh() }
            #expect(deleted?.signOutReason == .accountDeleted)
        }
    }

    @Test("Two clients on one store: the second adopts the first's rotation instead of presenting the old token")
    func siblingOnOneStore() async throws {
        try await DevServer.with { server in
            let store = InMemoryCredentialStore()
            let app = server.client(store: store)
            let session = try #require(try await app.signUp(username: "dorothy", password: Self.password).session)
            let widget = server.client(store: store)
            let rotated = try await app.refresh()
            let adopted = try await widget.refresh()
            #expect(adopted == rotated)
            #expect(try await server.auditCount("session.refreshed", userID: session.user.id) == 1)
            #expect(try await server.auditCount("session.reuse_detected", userID: session.user.id) == 0)
        }
    }

    /// Launches `latchkey-sdk-probe refresh` on the shared file store.
    static func probe(_ server: DevServer, store: String, lock: String?, go: String, rounds: Int) throws -> Process {
        let process = Process()
        process.executableURL = Executables.product("latchkey-sdk-probe")
        var arguments = ["refresh", "--url", server.baseURL.absoluteString, "--store", store, "--go", go, "--rounds", String(rounds)]
        if let lock { arguments += ["--lock", lock] }
        process.arguments = arguments
        process.standardOutput = Pipe()
        try Subprocess.launch(process)
        return process
    }

    /// Waits for a probe on a thread of its own: the probes run for seconds, and a task-pool
    /// thread blocked that long stalls the other tests of a parallel run.
    static func finish(_ process: Process) async -> (status: Int32, lines: [String]) {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let data = (process.standardOutput as! Pipe).fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(
                    returning: (process.terminationStatus, String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)))
            }
        }
    }

    @Test("Two processes sharing a file store and a lock file: one refresh when they race once, and never a token presented twice over many rounds")
    func twoProcesses() async throws {
        try await DevServer.with { server in
            let directory = server.directory
            let storePath = directory.file("shared-session.json")
            let store = FileCredentialStore(url: URL(fileURLWithPath: storePath))
            let session = try #require(try await server.client(store: store).signUp(username: "ada", password: Self.password).session)
            let lock = directory.file("refresh.lock")

            // One round each, started together: exactly one refresh, and both get its token.
            let go = directory.file("go-1")
            let a = try Self.probe(server, store: storePath, lock: lock, go: go, rounds: 1)
            let b = try Self.probe(server, store: storePath, lock: lock, go: go, rounds: 1)
            try await Task.sleep(for: .milliseconds(300))
            _ = FileManager.default.createFile(atPath: go, contents: nil)
            let (first, second) = (await Self.finish(a), await Self.finish(b))
            #expect(first.status == 0 && second.status == 0, "\(first.lines) \(second.lines)")
            #expect(first.lines == second.lines && first.lines.count == 1)
            #expect(try await server.auditCount("session.refreshed", userID: session.user.id) == 1)

            // Twenty rounds each, racing: each round refreshes or adopts, and no refresh token is
            // ever presented twice, or the server would have revoked the session as reuse.
            let go2 = directory.file("go-2")
            let c = try Self.probe(server, store: storePath, lock: lock, go: go2, rounds: 20)
            let d = try Self.probe(server, store: storePath, lock: lock, go: go2, rounds: 20)
            try await Task.sleep(for: .milliseconds(300))
            _ = FileManager.default.createFile(atPath: go2, contents: nil)
            let (third, fourth) = (await Self.finish(c), await Self.finish(d))
            #expect(third.status == 0 && fourth.status == 0, "\(third.lines) \(fourth.lines)")
            let refreshes = try await server.auditCount("session.refreshed", userID: session.user.id)
            #expect(refreshes > 1 && refreshes <= 41)
            #expect(try await server.auditCount("session.reuse_detected", userID: session.user.id) == 0)
            let survivor = server.client(store: store)
            #expect(try await survivor.me().user.id == session.user.id)
            #expect(try await survivor.refresh().user.id == session.user.id)
        }
    }
}
