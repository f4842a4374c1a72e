import Foundation
import LatchkeyCrypto
import LatchkeyJOSE
import LatchkeyServer
import LatchkeyStore

/// `latchkey-bench seed-accounts CONFIG COUNT`: makes COUNT accounts in the configured database
/// for the admin API's listing and search, and prints one line: an email address that exists
/// (for a prefix search).
///
/// The rows go straight into the store in multi-row inserts, 20,000 accounts a transaction, one
/// created every second up to now: each has an email, a given and a family name from short lists
/// (so a prefix finds a realistic share), and by its index a username and password (every
/// second one), an Apple identity (every tenth), a confirmed TOTP with a recovery code and a
/// device key (every twentieth), a passkey (every fiftieth) and a session (every fifth). The
/// password hashes and secrets are placeholders: no one signs in as these accounts.
enum AccountSeeder {
    static let usage = "usage: latchkey-bench seed-accounts CONFIG COUNT\n"
    static let perTransaction = 20_000

    static let givenNames = [
        "Ada", "Alan", "Barbara", "Claude", "Dennis", "Donald", "Edsger", "Frances", "Grace", "Hedy", "Ivan", "John", "Ken", "Leslie",
        "Linus", "Margaret", "Niklaus", "Radia", "Robin", "Shafi", "Sophie", "Tim", "Whitfield", "Yukihiro",
    ]
    static let familyNames = [
        "Allen", "Backus", "Cerf", "Dijkstra", "Engelbart", "Floyd", "Goldwasser", "Hamilton", "Hopper", "Kahn", "Knuth", "Lamport",
        "Liskov", "Lovelace", "McCarthy", "Milner", "Perlman", "Ritchie", "Sutherland", "Thompson", "Torvalds", "Turing", "Wirth",
    ]

    static func run(_ arguments: [String]) async -> Int32 {
        guard arguments.count == 2, let count = Int(arguments[1]), count > 0 else {
            FileHandle.standardError.write(Data(usage.utf8))
            return 2
        }
        return await Seeding.run("seed-accounts", configurationFile: arguments[0]) { application in
            let now = Int64(Date().timeIntervalSince1970)
            var start = 0
            while start < count {
                let range = start..<min(start + perTransaction, count)
                try await application.database.write { connection in try Self.insert(range, count: count, now: now, on: connection) }
                start = range.upperBound
            }
            return "\(email(0))\n"
        }
    }

    static func email(_ index: Int) -> String {
        "\(givenNames[index % givenNames.count]).\(familyNames[index / givenNames.count % familyNames.count])\(index)@example.com".lowercased()
    }

    /// Inserts the accounts numbered `range`, account `index` created `count - index` seconds
    /// before `now`.
    static func insert(_ range: Range<Int>, count: Int, now: Int64, on connection: any SQLConnection) throws {
        var tables: [String: (columns: [String], rows: [[SQLValue]])] = [:]
        func add(_ table: String, _ columns: [String], _ row: [SQLValue]) { tables[table, default: (columns, [])].rows.append(row) }
        let random = { (prefix: String) in prefix + Base64URL.encode(SecureRandom.bytes(count: 16)) }
        for index in range {
            let id = random("usr_")
            let created = SQLValue.integer(now - Int64(count - index))
            add(
                "users", ["id", "email", "email_verified", "is_private_email", "given_name", "family_name", "created_at", "updated_at"],
                [
                    .text(id), .text(email(index)), .integer(1), .integer(0), .text(givenNames[index % givenNames.count]),
                    .text(familyNames[index / givenNames.count % familyNames.count]), created, created,
                ])
            if index % 2 == 0 {
                add(
                    "password_credentials", ["user_id", "username", "password_hash", "created_at", "updated_at"],
                    [.text(id), .text("user\(index)"), .text("$argon2id$placeholder"), created, created])
            }
            if index % 10 == 0 {
                add(
                    "identities", ["id", "user_id", "provider", "issuer", "subject", "created_at"],
                    [.text(random("idn_")), .text(id), .text("apple"), .text("https://appleid.apple.com"), .text("bench.\(index)"), created])
            }
            if index % 20 == 0 {
                add(
                    "totp_factors", ["id", "user_id", "secret", "confirmed_at", "created_at"],
                    [.text(random("totp_")), .text(id), .blob(SecureRandom.bytes(count: 16)), created, created])
                add("recovery_codes", ["code_hash", "user_id", "created_at"], [.blob(SecureRandom.bytes(count: 32)), .text(id), created])
                add(
                    "device_keys", ["id", "user_id", "public_key", "label", "created_at"],
                    [.text(random("dk_")), .text(id), .blob(SecureRandom.bytes(count: 65)), .text("iPhone"), created])
            }
            if index % 50 == 0 {
                add(
                    "passkeys",
                    ["id", "user_id", "credential_id", "public_key", "algorithm", "backup_eligible", "backed_up", "aaguid", "attestation", "name", "created_at"],
                    [
                        .text(random("pk_")), .text(id), .blob(SecureRandom.bytes(count: 32)), .blob(SecureRandom.bytes(count: 77)), .integer(-7),
                        .integer(1), .integer(1), .blob([UInt8](repeating: 0, count: 16)), .text("none"), .text("Passkey"), created,
                    ])
            }
            if index % 5 == 0 {
                let expires = SQLValue.integer(now + 86_400 * 30)
                add(
                    "sessions", ["id", "user_id", "amr", "created_at", "last_used_at", "idle_expires_at", "absolute_expires_at"],
                    [.text(random("ses_")), .text(id), .text(#"["pwd"]"#), created, created, expires, expires])
            }
        }
        // Users first, for the foreign keys.
        for table in ["users"] + tables.keys.filter({ $0 != "users" }).sorted() {
            guard let (columns, rows) = tables[table] else { continue }
            try connection.insertRows(into: table, columns: columns, rows)
        }
    }
}
