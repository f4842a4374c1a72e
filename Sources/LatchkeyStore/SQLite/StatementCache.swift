/// Prepared statements by SQL text, dropping the least recently used beyond a capacity.
///
/// Eviction scans every entry; with capacities in the tens that costs less than the prepare it
/// follows, and it needs no linked list.
struct StatementCache {
    private struct Entry {
        var statement: SQLiteStatement
        var lastUse: UInt64
    }

    let capacity: Int
    private var entries: [String: Entry] = [:]
    private var tick: UInt64 = 0
    private(set) var hits = 0
    private(set) var misses = 0

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    var count: Int { entries.count }

    /// The cached statement for `sql`, marked as just used; counts a hit or a miss.
    mutating func statement(for sql: String) -> SQLiteStatement? {
        tick &+= 1
        guard let entry = entries[sql] else {
            misses += 1
            return nil
        }
        hits += 1
        entries[sql]!.lastUse = tick
        return entry.statement
    }

    /// Keeps `statement` for `sql`, evicting the least recently used entry when full.
    mutating func insert(_ statement: SQLiteStatement, for sql: String) {
        guard capacity > 0 else { return }
        if entries.count >= capacity, entries[sql] == nil,
            let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
        {
            entries[oldest] = nil
        }
        entries[sql] = Entry(statement: statement, lastUse: tick)
    }

    /// Drops every statement; each is finalized once no one else holds it.
    mutating func removeAll() {
        entries.removeAll()
    }
}
