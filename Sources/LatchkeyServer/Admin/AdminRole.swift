package import FoundationEssentials
import LatchkeyJOSE

/// A role of the admin API, held by an account and granted only from the CLI
/// (`latchkey admins grant`).
package enum AdminRole: String, Sendable, Hashable, CaseIterable {
    /// Everything the admin API does.
    case admin
    /// Reads users, sessions and the audit log; ends sessions; sends a password reset. Nothing
    /// about clients, keys, or deleting accounts and factors.
    case support

    /// Whether this role may do what `needed` may.
    func covers(_ needed: AdminRole) -> Bool {
        self == .admin || needed == .support
    }
}

/// An account holding a role, as `latchkey admins list` shows it.
package struct AdminGrant: Sendable, Hashable {
    package var user: User
    package var role: AdminRole
    package var grantedAt: Date
}

/// One page of a keyset-paginated listing: the rows, and the opaque cursor of the next page
/// (`nil` on the last).
struct AdminPage<Row: Sendable>: Sendable {
    var rows: [Row]
    var next: String?
}

/// The position after the last row of a page, `(time, id)` of the listing's order, carried by
/// the client as an opaque string (base64url of `seconds.id`).
struct AdminCursor: Sendable, Hashable {
    var time: Date
    var id: String

    /// The largest `limit` a page may ask for, and the default.
    static let maxLimit = 200
    static let defaultLimit = 50

    var encoded: String {
        Base64URL.encode(Array("\(Int64(time.timeIntervalSince1970.rounded(.down))).\(id)".utf8))
    }

    /// The cursor a client sent back.
    ///
    /// - Throws: ``AuthError/Code/invalidRequest`` for anything this server did not hand out.
    init(_ encoded: String) throws(AuthError) {
        guard encoded.utf8.count <= 256, let bytes = Base64URL.decode(encoded), let text = String(validating: bytes, as: UTF8.self), let dot = text.firstIndex(of: "."),
            let seconds = Int64(text[..<dot]), text.index(after: dot) < text.endIndex
        else { throw AuthError.invalidRequest("cursor is not one this server handed out") }
        self.init(time: Date(timeIntervalSince1970: TimeInterval(seconds)), id: String(text[text.index(after: dot)...]))
    }

    init(time: Date, id: String) {
        self.time = time
        self.id = id
    }

    /// `limit` as asked, checked: 1 to ``maxLimit``, ``defaultLimit`` when absent.
    static func limit(_ raw: String?) throws(AuthError) -> Int {
        guard let raw else { return defaultLimit }
        guard let limit = Int(raw), (1...maxLimit).contains(limit) else {
            throw AuthError.invalidRequest("limit must be a whole number from 1 to \(maxLimit)")
        }
        return limit
    }
}

/// What `GET /v1/admin/stats` counts.
struct AdminStats: Sendable, Hashable {
    var accounts: Int64
    /// Sessions neither revoked nor expired.
    var liveSessions: Int64
    /// The last 24 hours' audit entries by event, then outcome: sign-ins, failures, rate limits.
    var events: [String: [String: Int64]]
    /// Items waiting to be sent, by kind (`mail`, `apple_revocation`).
    var outboxDepths: [String: Int64]
}
