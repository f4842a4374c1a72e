private import CLatchkeyMalloc

/// How `serve` asks glibc's allocator to hand memory back (issue 3: resident memory after start
/// and its growth under load).
///
/// Two defaults cost a long-running server memory it never gives back:
/// - glibc makes up to eight arenas per core, one for each thread that allocates while another
///   holds a lock: the two event loops, the task pool, dispatch's threads, the SQLite writer,
///   the Argon2 threads and the access-log writer each ended up with one, and each arena keeps
///   its high-water mark (2-2.7 MB each after load to `/healthz`, measured).
/// - the mmap threshold grows to the largest block ever freed: one Argon2id hash (19 MiB at
///   OWASP's parameters) raised it to 19 MiB and the trim threshold to 38 MiB, so every later
///   large buffer came from an arena that was then never trimmed. Setting the thresholds fixes
///   them at these values and turns that growth off. Argon2id keeps its own memory per hashing
///   thread (`Argon2Memory`), so hashes do not pay for mapping 19 MiB afresh each time.
enum MallocTuning {
    /// Arenas: one per core is enough for two event loops, which do most allocations.
    static let arenaLimit: Int32 = 2
    /// Blocks at least this large get their own mapping, returned to the system on `free`.
    static let mmapThreshold: Int32 = 128 * 1024
    /// Free memory above this at the top of an arena is returned to the system.
    static let trimThreshold: Int32 = 128 * 1024

    /// Applies the settings; call before the server starts its threads.
    static func apply() {
        mallopt(M_ARENA_MAX, arenaLimit)
        mallopt(M_MMAP_THRESHOLD, mmapThreshold)
        mallopt(M_TRIM_THRESHOLD, trimThreshold)
    }

    /// Hands freed memory back to the system once the server goes quiet, and once a minute
    /// under steady load, until the task is cancelled.
    ///
    /// The trim threshold only returns free memory at the top of an arena; what a burst of
    /// connections freed in the middle stays resident. After a million `/healthz` requests on
    /// 64 connections that was 2.2 MB of anonymous memory, of which `malloc_trim` returned all
    /// but 0.4 MB. A trim costs a walk of the free lists: nothing next to a second of serving.
    ///
    /// - Parameter openConnections: The server's open HTTP connections, polled every second;
    ///   the trim follows the first poll that finds none after one that found some.
    static func trimWhenIdle(openConnections: @escaping @Sendable () -> Double) -> Task<Void, Never> {
        Task.detached(priority: .background) {
            var busy = false
            var sinceTrim = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                sinceTrim += 1
                let open = openConnections() > 0
                if (busy && !open) || sinceTrim >= 60 {
                    malloc_trim(0)
                    sinceTrim = 0
                }
                busy = open
            }
        }
    }
}
