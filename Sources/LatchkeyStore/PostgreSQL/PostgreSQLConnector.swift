internal import CLatchkeyPQ

/// What a connection is opened with: libpq's connection parameters and the session settings.
///
/// The URL goes to libpq whole (`expand_dbname`), so every parameter libpq reads from a URL's
/// query (`sslmode`, `sslrootcert`, `target_session_attrs`, …) works as libpq documents it
/// ("Connection URIs", libpq manual §34.1.1). Settings Latchkey chooses come before it, so the
/// URL's own query wins over them; a password given apart from the URL comes after it.
struct PostgreSQLConnector: Sendable {
    private let keywords: [String]
    private let values: [String]
    private(set) var statementTimeout: Duration
    let statementCacheSize: Int
    /// How long a call waits for the server's answer before the connection is given up.
    private(set) var responseTimeout: Duration

    init(configuration: PostgreSQLDatabase.Configuration) {
        // TCP keepalives after 10 s of silence, every 5 s, 3 unanswered: a peer gone without a
        // reset (a host that died, a network path that broke) is noticed in about 25 s even on
        // an idle connection, such as a `LISTEN` session between notifications.
        var keywords = [
            "application_name", "connect_timeout", "client_encoding",
            "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count", "dbname",
        ]
        // libpq's connect_timeout is whole seconds, and it treats 1 as 2.
        let timeout = max(2, Int(configuration.connectTimeout.components.seconds))
        var values = [configuration.applicationName, String(timeout), "UTF8", "1", "10", "5", "3", configuration.url]
        if let password = configuration.password {
            keywords.append("password")
            values.append(password)
        }
        self.keywords = keywords
        self.values = values
        self.statementTimeout = configuration.statementTimeout
        self.statementCacheSize = configuration.statementCacheSize
        self.responseTimeout = configuration.responseTimeout ?? configuration.statementTimeout + .seconds(2)
    }

    /// The same connection with other timeouts: the migration lock waits as long as another
    /// instance migrates, which may be longer than any request should.
    func with(statementTimeout: Duration, responseTimeout: Duration) -> PostgreSQLConnector {
        var copy = self
        copy.statementTimeout = statementTimeout
        copy.responseTimeout = responseTimeout
        return copy
    }

    /// Connects (blocking, up to the connect timeout per address).
    ///
    /// - Throws: ``StoreError/Code/unavailable`` with libpq's reason, which names the host and
    ///   the user but never the password.
    func connect() throws -> OpaquePointer {
        var buffer: [CChar] = []
        var offsets: [Int] = []
        for string in keywords + values {
            offsets.append(buffer.count)
            buffer.append(contentsOf: string.utf8.map { CChar(bitPattern: $0) })
            buffer.append(0)
        }
        let handle: OpaquePointer? = buffer.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            var pointers: [UnsafePointer<CChar>?] = offsets.map { base + $0 }
            // Each list ends with NULL.
            let keywordPointers = Array(pointers[0..<keywords.count]) + [nil]
            pointers = Array(pointers[keywords.count...]) + [nil]
            return keywordPointers.withUnsafeBufferPointer { keywordPointers in
                pointers.withUnsafeBufferPointer { valuePointers in
                    PQconnectdbParams(keywordPointers.baseAddress, valuePointers.baseAddress, 1)
                }
            }
        }
        guard let handle else { throw StoreError.unavailable("connect to PostgreSQL: out of memory") }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = PostgreSQLError.connectionMessage(handle)
            PQfinish(handle)
            throw StoreError.unavailable("connect to PostgreSQL: \(message)")
        }
        // Notices (`relation … already exists, skipping`) would go to standard error.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        return handle
    }
}
