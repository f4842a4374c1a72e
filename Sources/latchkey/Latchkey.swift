import FoundationEssentials
import Glibc
import LatchkeyServer

/// The `latchkey` executable: one table of commands, dispatched on the leading words.
@main
enum Latchkey {
    static let version = "0.1.0"

    static let commands: [Command] = [
        Command(path: ["version"], summary: "Print the version.") { _ in
            print("latchkey \(version)")
            return 0
        },
        Command(path: ["help"], summary: "List the commands; `help COMMAND` explains one.", details: "`latchkey help COMMAND` and `latchkey COMMAND --help` explain one command.") { _ in
            print(overview)
            return 0
        },
        ServeCommands.serve,
        ServeCommands.migrate,
        DatabaseCopyCommand.copy,
    ] + OperatorCommands.all + AdminCommands.all + PasskeyCommands.all + ClientCommands.all + [
        BackupCommand.backup,
        AuditCommand.audit,
        MailCommand.test,
        JWTCommands.decode,
        JWTCommands.verify,
        DemoCommand.demo,
    ]

    static var overview: String {
        var text = "latchkey: self-hosted authentication for apps on Apple platforms\n\ncommands:\n"
        let width = commands.map { $0.path.joined(separator: " ").count }.max()! + 2
        for command in commands {
            text += "  " + command.path.joined(separator: " ").padded(to: width)
            text += command.summary + "\n"
        }
        return text
    }

    /// The command the typed words were probably meant to be: a two-word command for two words,
    /// else a command or group name for the first.
    static func suggestion(for words: [String]) -> String? {
        for count in [2, 1] where words.count >= count {
            let names = Set(commands.filter { $0.path.count >= count }.map { $0.path.prefix(count).joined(separator: " ") })
            if let name = Suggestion.closest(to: words.prefix(count).joined(separator: " "), among: names) { return name }
        }
        return nil
    }

    static func main() async {
        let words = Array(CommandLine.arguments.dropFirst())
        exit(await run(words))
    }

    /// Finds the command with the longest matching path and runs it.
    static func run(_ words: [String]) async -> Int32 {
        guard !words.isEmpty else {
            printError(overview)
            return 2
        }
        guard words != ["--help"], words != ["-h"] else {
            print(overview)
            return 0
        }
        if words == ["--version"] { return await run(["version"]) }
        if words.first == "help", words.count > 1, !words[1].hasPrefix("-") { return await run(Array(words.dropFirst()) + ["--help"]) }
        let matches = commands.filter { words.starts(with: $0.path) }
        guard let command = matches.max(by: { $0.path.count < $1.path.count }) else {
            let group = commands.filter { $0.path.first == words[0] }
            if !group.isEmpty, words.count == 1 || words.dropFirst().allSatisfy({ $0 == "--help" }) {
                print(group.map(\.usage).joined(separator: "\n"))
                return words.count == 1 ? 2 : 0
            }
            let leading = Array(words.prefix { !$0.hasPrefix("-") }.prefix(2))
            let typed = leading.isEmpty ? [words[0]] : leading
            let unknown = "latchkey: unknown command '\(typed.joined(separator: " "))'"
            if let suggestion = suggestion(for: typed) {
                printError(unknown + " (did you mean '\(suggestion)'?); `latchkey help` lists the commands")
            } else {
                printError(unknown + "\n\n" + overview)
            }
            return 2
        }
        let rest = words.dropFirst(command.path.count)
        if rest.contains("--help") || rest.contains("-h") {
            print(command.help, terminator: "")
            return 0
        }
        do {
            let parsed = try command.parse(rest)
            return try await command.run(parsed)
        } catch let error as UsageError {
            printError("latchkey: \(error.message)\n\(command.usage)")
            return 2
        } catch {
            printError("latchkey: \(error)")
            return 1
        }
    }
}

/// Writes a line to standard error.
func printError(_ message: String) {
    StandardStreams.write(message + "\n", to: STDERR_FILENO)
}
