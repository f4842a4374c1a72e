import FoundationEssentials
import LatchkeyJSON
import LatchkeyServer
import LatchkeyStore

/// `latchkey audit`: reads the audit log, newest entry first.
enum AuditCommand {
    static let defaultLimit = 100

    static let audit = Command(
        path: ["audit"], summary: "Show audit log entries, newest first.",
        options: [
            ServeCommands.configOption,
            Option(name: "user", valueName: "ID", help: "only this user's entries"),
            Option(name: "event", valueName: "E", help: "only this event, e.g. password.login"),
            Option(name: "since", valueName: "T", help: "only from T on: RFC 3339 or 30m, 1h, 7d ago"),
            Option(name: "limit", valueName: "N", help: "at most N entries (default \(defaultLimit))"),
            Option(name: "json", valueName: nil, help: "one JSON object per line"),
        ],
        details: """
            Entries come newest first, so --limit keeps the most recent ones. T is a time such as
            2026-05-01T12:00:00Z (RFC 3339, any offset) or a span before now: a number followed by
            s, m, h, d or w. With --json each entry is one line {"time", "user_id", "event",
            "outcome", "ip", "request_id", "details"}, absent values null. Reading does not stop or
            slow the server.
            """
    ) { arguments in
        let since = try arguments[option: "since"].map { try parseSince($0, now: Date()) }
        let limitText = arguments[option: "limit"] ?? String(defaultLimit)
        guard let limit = Int(limitText), limit >= 1 else {
            throw UsageError(message: "--limit must be a whole number of at least 1, got \(limitText)")
        }
        let configuration = try ServeCommands.loadConfiguration(arguments, dev: false)
        try ServeCommands.checkServerData(configuration, forOperator: true)
        let database = try await LatchkeyApplication.openDatabase(configuration)
        let entries: [AuditLog.Entry]
        do {
            entries = try await AuditLog(database: database).entries(
                userID: arguments[option: "user"], event: arguments[option: "event"], since: since, limit: limit)
            await database.close()
        } catch {
            await database.close()
            throw error
        }
        if arguments.flags.contains("json") {
            for entry in entries { print(json(entry).serializedString) }
        } else {
            print(table(entries), terminator: "")
        }
        return 0
    }

    /// An RFC 3339 time, or a span before `now` such as `90s`, `30m`, `1h`, `7d`, `2w`.
    static func parseSince(_ text: String, now: Date) throws(UsageError) -> Date {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
        if let unit = text.last.flatMap({ units[$0] }), let count = Int(text.dropLast()), count >= 0 {
            return now.addingTimeInterval(-Double(count) * unit)
        }
        // RFC 3339 allows a lowercase t and z, and fractional seconds.
        let upper = text.uppercased()
        for style in [Date.ISO8601FormatStyle(), Date.ISO8601FormatStyle(includingFractionalSeconds: true)] {
            if let date = try? style.parse(upper) { return date }
        }
        throw UsageError(message: "--since takes an RFC 3339 time (2026-05-01T12:00:00Z) or a span like 30m, 1h, 7d; got \(text)")
    }

    static func json(_ entry: AuditLog.Entry) -> JSONValue {
        func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
        return .object([
            "time": .string(entry.time.ISO8601Format()), "user_id": optional(entry.userID), "event": .string(entry.event.rawValue),
            "outcome": .string(entry.outcome.rawValue), "ip": optional(entry.ip), "request_id": optional(entry.requestID),
            "details": .object(entry.details.mapValues(JSONValue.string)),
        ])
    }

    /// Columns as wide as their widest cell; the details last, unpadded.
    static func table(_ entries: [AuditLog.Entry]) -> String {
        let header = ["TIME", "USER", "EVENT", "OUTCOME", "IP", "REQUEST", "DETAILS"]
        let rows = [header] + entries.map { entry in
            [
                entry.time.ISO8601Format(), entry.userID ?? "-", entry.event.rawValue, entry.outcome.rawValue, entry.ip ?? "-", entry.requestID ?? "-",
                entry.details.sorted { $0.key < $1.key }.map { "\($0.key)=\(quoted($0.value))" }.joined(separator: " "),
            ].map(printable)
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in column == row.count - 1 ? cell : cell.padded(to: widths[column]) }
                .joined(separator: "  ").trimmingTrailingSpaces() + "\n"
        }.joined()
    }

    /// A detail value as is when it is one plain word, else in double quotes with `"` and `\`
    /// escaped, so spaces and `=` inside it cannot be misread as another pair.
    private static func quoted(_ value: String) -> String {
        let plain = !value.isEmpty && value.unicodeScalars.allSatisfy { scalar in
            scalar.properties.isAlphabetic || scalar.properties.numericType != nil || "._-:/@+".unicodeScalars.contains(scalar)
        }
        return plain ? value : "\"" + value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }

    /// The text with control and format characters written as `\u{…}`: entries carry what
    /// clients sent (a username), which must not move the operator's cursor, recolour the
    /// terminal or reverse the line.
    private static func printable(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format: result += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
