#if canImport(Glibc)
import Glibc
#endif

/// The memory Argon2id works in, kept per thread from one hash to the next.
///
/// At OWASP's parameters each hash needs 19 MiB. Left to `malloc`, a block that large is mapped
/// and unmapped around every hash (or trimmed from the arena, which comes to the same), and
/// faulting 4,864 fresh pages in cost this machine about 19 ms a hash: password logins fell to
/// 0.66 of the raw Argon2id rate. Hashing threads are few (the bounded pool), so each keeps its
/// largest block, wiped by libargon2 after every use, until the thread ends.
enum Argon2Memory {
    /// The calling thread's block: its address and size, in a small malloc'd header.
    private struct Block {
        var memory: UnsafeMutableRawPointer?
        var size: Int
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { header in
            guard let header else { return }
            let block = header.assumingMemoryBound(to: Block.self)
            free(block.pointee.memory)
            free(header)
        }
        precondition(status == 0, "pthread_key_create failed")
        return key
    }()

    /// `allocate_cbk`: the thread's block, grown when too small.
    static let allocate: @convention(c) (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, Int) -> Int32 = { memory, bytes in
        guard let memory else { return -1 }
        var header = pthread_getspecific(key)?.assumingMemoryBound(to: Block.self)
        if header == nil {
            guard let raw = malloc(MemoryLayout<Block>.size) else { return -1 }
            header = raw.bindMemory(to: Block.self, capacity: 1)
            header!.initialize(to: Block(memory: nil, size: 0))
            pthread_setspecific(key, raw)
        }
        guard let block = header else { return -1 }
        if block.pointee.size < bytes {
            free(block.pointee.memory)
            block.pointee = Block(memory: malloc(bytes), size: bytes)
        }
        guard let area = block.pointee.memory else {
            block.pointee.size = 0
            return -1
        }
        memory.pointee = area.assumingMemoryBound(to: UInt8.self)
        return 0
    }

    /// `free_cbk`: keeps the thread's block (libargon2 has wiped it already).
    static let deallocate: @convention(c) (UnsafeMutablePointer<UInt8>?, Int) -> Void = { _, _ in }
}
