internal import CLatchkeyEvent

/// libevent's process-wide setup.
package enum Libevent {
    private static let threadsReady: Bool = {
        // Locks in every event_base, and the notification fd that lets `event_active` from
        // another thread wake a loop.
        evthread_use_pthreads() == 0
    }()

    package static func setUpThreads() {
        precondition(threadsReady, "evthread_use_pthreads failed")
    }
}
