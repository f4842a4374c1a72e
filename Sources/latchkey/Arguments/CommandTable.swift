import LatchkeyServer

/// One command of the CLI: its words, its options and what it does.
///
/// The whole CLI is a table of these (``Latchkey/commands``); parsing, `--help` and usage errors
/// are derived from the table, so a command cannot forget them.
struct Command: Sendable {
    /// The words that select it, e.g. `["jwt", "verify"]`.
    var path: [String]
    /// One line for `latchkey help`.
    var summary: String
    /// Named arguments after the options, e.g. `["TOKEN"]`.
    var arguments: [String] = []
    /// `--name VALUE` options and `--flag` switches.
    var options: [Option] = []
    /// Longer help text printed under the usage line.
    var details: String = ""
    /// Runs the command; returns the exit status.
    var run: @Sendable (ParsedArguments) async throws -> Int32

    var usage: String {
        var line = "usage: latchkey " + path.joined(separator: " ")
        for option in options {
            let text = "--" + option.name + (option.valueName.map { " " + $0 } ?? "") + (option.isRepeatable ? " ..." : "")
            line += option.isRequired ? " \(text)" : " [\(text)]"
        }
        for argument in arguments { line += " \(argument)" }
        return line
    }

    var help: String {
        var text = usage + "\n\n" + summary + "\n"
        if !details.isEmpty { text += "\n" + details + "\n" }
        if !options.isEmpty {
            text += "\noptions:\n"
            let names = options.map { "--" + $0.name + ($0.valueName.map { " " + $0 } ?? "") }
            let width = names.map(\.count).max()! + 2
            for (name, option) in zip(names, options) {
                text += "  " + name.padded(to: width) + option.help + "\n"
            }
            text += "  " + "--help".padded(to: width) + "show this help\n"
        }
        return text
    }
}

/// An option of a ``Command``.
struct Option: Sendable {
    /// The name without dashes.
    var name: String
    /// The value's placeholder, or `nil` for a switch.
    var valueName: String?
    /// One line of help.
    var help: String
    /// Whether the command cannot run without it.
    var isRequired = false
    /// Whether it may be given more than once (``ParsedArguments/subscript(all:)`` has every value).
    var isRepeatable = false
}

/// The options and arguments one invocation gave.
struct ParsedArguments: Sendable {
    var values: [String: String] = [:]
    /// Every value of each option, in the order given.
    var allValues: [String: [String]] = [:]
    var flags: Set<String> = []
    var arguments: [String: String] = [:]

    /// The option's value; the last one when it was given more than once.
    subscript(option name: String) -> String? { values[name] }
    /// Every value the option was given, in order; empty when it was not given.
    subscript(all name: String) -> [String] { allValues[name] ?? [] }
    subscript(argument name: String) -> String { arguments[name] ?? "" }
}

/// A usage error: printed with the command's usage line, exit status 2.
struct UsageError: Error {
    var message: String
}

extension Command {
    /// Parses the words after the command path.
    ///
    /// `--name value`, `--name=value` and `--flag` may come in any order before or between the
    /// arguments; `--` ends options.
    func parse(_ words: ArraySlice<String>) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var positionals = [String]()
        var words = words[...]
        var optionsEnded = false
        while let word = words.popFirst() {
            guard !optionsEnded, word.hasPrefix("--"), word != "-" else {
                positionals.append(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            let body = word.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            guard let option = options.first(where: { $0.name == name }) else {
                throw UsageError(message: "unknown option --\(name)" + Suggestion.hint(for: "--" + name, among: options.map { "--" + $0.name }))
            }
            if option.valueName == nil {
                guard !body.contains("=") else { throw UsageError(message: "--\(name) takes no value") }
                parsed.flags.insert(name)
            } else {
                let value: String
                if let equals = body.firstIndex(of: "=") {
                    value = String(body[body.index(after: equals)...])
                } else if let next = words.popFirst() {
                    value = next
                } else {
                    throw UsageError(message: "--\(name) needs a value")
                }
                parsed.values[name] = value
                parsed.allValues[name, default: []].append(value)
            }
        }
        if let missing = options.first(where: { $0.isRequired && parsed.values[$0.name] == nil }) {
            throw UsageError(message: "--\(missing.name) is required")
        }
        guard positionals.count == arguments.count else {
            let expected = arguments.isEmpty ? "no arguments" : arguments.joined(separator: " ")
            throw UsageError(message: "expected \(expected), got \(positionals.count) argument(s)")
        }
        parsed.arguments = Dictionary(uniqueKeysWithValues: zip(arguments, positionals))
        return parsed
    }
}

extension String {
    /// The text followed by spaces up to `width` characters, for columns.
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
