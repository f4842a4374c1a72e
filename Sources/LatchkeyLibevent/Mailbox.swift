internal import CLatchkeyEvent
import Synchronization

/// The one way into a libevent loop (the server's, the outbound client's) from other threads: a
/// locked queue and an event that `event_active` wakes the loop with.
package final class Mailbox<Message: Sendable>: @unchecked Sendable {
    // @unchecked: `event` is set once in init and, from other threads, only passed to
    // event_active, which libevent serialises with the base's lock once evthread_use_pthreads()
    // has run; `closed` (under the same Mutex) keeps it from being called after the loop freed the
    // event. Everything else is in the Mutex.
    private struct State {
        var messages: [Message] = []
        var closed = false
    }

    private let state = Mutex(State())
    package let event: OpaquePointer

    package init(event: OpaquePointer) {
        self.event = event
    }

    /// Queues `message` and wakes the loop; `false` when the loop has ended.
    @discardableResult
    package func post(_ message: Message) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.messages.append(message)
            // One wake-up per batch: the loop takes every queued message when it runs.
            if state.messages.count == 1 { event_active(event, Int32(EV_READ), 0) }
            return true
        }
    }

    /// Every queued message, oldest first.
    package func take() -> [Message] {
        state.withLock { state in
            let messages = state.messages
            state.messages = []
            return messages
        }
    }

    /// After this, `post` refuses messages; returns those still queued. Called on the loop thread
    /// before the event is freed.
    @discardableResult
    package func close() -> [Message] {
        state.withLock { state in
            state.closed = true
            let messages = state.messages
            state.messages = []
            return messages
        }
    }
}
