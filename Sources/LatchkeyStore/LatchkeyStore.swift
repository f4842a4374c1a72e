internal import CLatchkeySQLite

enum SQLiteProbe { static var version: String { String(cString: sqlite3_libversion()) } }
