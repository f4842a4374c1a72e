import LatchkeyStore
import Testing

@Suite("SQLDialect")
struct SQLDialectTests {
    @Test("SQLite keeps portable SQL as written")
    func sqliteUnchanged() {
        let sql = "SELECT * FROM t WHERE a = ? AND b = '?'"
        #expect(SQLDialect.sqlite.sql(sql) == sql)
    }

    @Test(
        "PostgreSQL numbers placeholders, skipping literals, quoted names and comments",
        arguments: [
            ("SELECT 1", "SELECT 1"),
            ("a = ? AND b = ?", "a = $1 AND b = $2"),
            ("x = '?' AND y = ?", "x = '?' AND y = $1"),
            ("x = 'it''s ?' AND y = ?", "x = 'it''s ?' AND y = $1"),
            ("\"we?ird\" = ?", "\"we?ird\" = $1"),
            ("? -- why?\n, ?", "$1 -- why?\n, $2"),
            ("? /* what? */ ?", "$1 /* what? */ $2"),
            ("VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"),
            ("'日本?' || ?", "'日本?' || $1"),
        ])
    func postgreSQLPlaceholders(portable: String, expected: String) {
        #expect(SQLDialect.postgreSQL.sql(portable) == expected)
    }

    @Test("a claiming SELECT keeps FOR UPDATE SKIP LOCKED on PostgreSQL; SQLite, whose one writer claims alone, drops it")
    func claimClause() {
        let portable = "SELECT id FROM t WHERE due <= ? ORDER BY due LIMIT ? FOR UPDATE SKIP LOCKED"
        #expect(SQLDialect.postgreSQL.sql(portable) == "SELECT id FROM t WHERE due <= $1 ORDER BY due LIMIT $2 FOR UPDATE SKIP LOCKED")
        #expect(SQLDialect.sqlite.sql(portable) == "SELECT id FROM t WHERE due <= ? ORDER BY due LIMIT ?")
    }
}
