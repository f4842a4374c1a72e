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

    /// An `evdns_base` for `base` that reads /etc/resolv.conf and /etc/hosts now, so lookups
    /// never block the loop. Without a resolv.conf, evdns_base_new fails: this falls back to
    /// evdns's defaults (a resolver on 127.0.0.1) and the hosts file, which is what the C
    /// library would do.
    ///
    /// - Returns: `nil` when libevent cannot make one at all.
    package static func makeDNSBase(_ base: OpaquePointer) -> OpaquePointer? {
        if let dns = evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS) { return dns }
        guard let fallback = evdns_base_new(base, 0) else { return nil }
        // DNS_OPTIONS_ALL, which Swift does not import.
        let options = DNS_OPTION_SEARCH | DNS_OPTION_NAMESERVERS | DNS_OPTION_MISC | DNS_OPTION_HOSTSFILE
        _ = evdns_base_resolv_conf_parse(fallback, options, "/etc/resolv.conf")
        return fallback
    }
}
