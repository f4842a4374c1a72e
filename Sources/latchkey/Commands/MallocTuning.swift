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
}
