import LatchkeyClient

/// Reads events from an ``LatchkeyClient/authEvents`` stream in the background, so a test can
/// act first and look at what arrived afterwards.
final class EventRecorder: Sendable {
    private let task: Task<[AuthEvent], Never>

    init(_ stream: AsyncStream<AuthEvent>, count: Int) {
        task = Task {
            var events: [AuthEvent] = []
            for await event in stream {
                events.append(event)
                if events.count == count { break }
            }
            return events
        }
    }

    /// The first `count` events, or what arrived within `timeout` seconds.
    func events(timeout: Duration = .seconds(10)) async -> [AuthEvent] {
        let task = self.task
        let timer = Task {
            try? await Task.sleep(for: timeout)
            task.cancel()
        }
        let events = await task.value
        timer.cancel()
        return events
    }
}

extension AuthEvent {
    /// The event's case, without its payload.
    var name: String {
        switch self {
        case .initialSession(let session): session == nil ? "initialSession(nil)" : "initialSession"
        case .signedIn: "signedIn"
        case .tokenRefreshed: "tokenRefreshed"
        case .signedOut(let reason): "signedOut(\(reason))"
        case .userUpdated: "userUpdated"
        case .locked: "locked"
        case .unlocked: "unlocked"
        }
    }
}

extension SignInResult {
    /// The session, or `nil` for a second-factor challenge.
    var session: Session? {
        if case .signedIn(let session) = self { return session }
        return nil
    }

    var challenge: MFAChallenge? {
        if case .secondFactorRequired(let challenge) = self { return challenge }
        return nil
    }
}
