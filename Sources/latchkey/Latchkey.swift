import FoundationEssentials
import Glibc

/// The `latchkey` executable: one table of commands, dispatched on the leading words.
@main
enum Latchkey {
    static let version = "0.1.0"

    static let commands: [Command] = [
        Command(path: ["version"], summary: "Print the version.") { _ in
            print("latchkey \(version)")
            return 0
        },
        Command(path: ["help"], summary: "List the commands.", details: "`latchkey COMMAND --help` explains one command.") { _ in
            print(overview)
            return 0
        },
        ServeCommands.serve,
        ServeCommands.migrate,
    ] + OperatorCommands.all + [
        BackupCommand.backup,
        AuditCommand.audit,
        JWTCommands.decode,
        JWTCommands.verify,
        DemoCommand.demo,
    ]

    static var overview: String {
        var text = "latchkey: self-hosted authentication for apps on Apple platforms\n\ncommands:\n"
        for command in commands {
            text += "  " + command.path.joined(separator: " ").padded(to: 17)
            text += command.summary + "\n"
        }
        return text
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
        guard words != ["--version"] else {
            print("latchkey \(version)")
            return 0
        }
        let matches = commands.filter { words.starts(with: $0.path) }
        guard let command = matches.max(by: { $0.path.count < $1.path.count }) else {
            let group = commands.filter { $0.path.first == words[0] }
            if !group.isEmpty, words.count == 1 || words.dropFirst().allSatisfy({ $0 == "--help" }) {
                print(group.map(\.usage).joined(separator: "\n"))
                return words.count == 1 ? 2 : 0
            }
            printError("latchkey: unknown command '\(words.prefix(2).joined(separator: " "))'\n\n" + overview)
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
