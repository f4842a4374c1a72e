import FoundationEssentials
import Glibc

/// `latchkey demo`: the seeds' stories, step by step, against a development server and its
/// sandbox Apple, told through the client SDK exactly as an app would call it.
///
/// The story lives in the `latchkey-demo` executable beside this one: it is an SDK client and
/// links Foundation and `LatchkeyClient`, which the server binary must not. This command only
/// checks its arguments and replaces itself with that program.
enum DemoCommand {
    static let demo = Command(
        path: ["demo"], summary: "Walk the Sign in with Apple story against a development server.",
        options: [Option(name: "url", valueName: "URL", help: "the server (default http://localhost:8080, what make run serves)")],
        details: """
            Needs a server in development mode (make run, or latchkey serve --dev): the sandbox
            Apple it mounts plays the device and Apple. Each step is a call of the Swift client
            SDK (LatchkeyClient), run by the latchkey-demo program installed beside latchkey.
            With passkeys on (an RP ID: LATCHKEY_PASSKEYS_RP_ID=localhost
            LATCHKEY_PASSKEYS_ORIGINS=https://localhost), a passkey chapter follows, with a software
            passkey manager. Prints each step; exits 0 when every step answered as it should, 1 at
            the first that did not.
            """
    ) { arguments in
        let base = arguments[option: "url"] ?? "http://localhost:8080"
        guard let url = URL(string: base), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw UsageError(message: "--url must be an http or https URL")
        }
        let program = siblingPath("latchkey-demo")
        guard access(program, X_OK) == 0 else {
            print("latchkey demo: \(program) is missing; build it with swift build (it ships beside latchkey)")
            return 1
        }
        // Whatever this process buffered must reach the terminal before the image is replaced.
        fflush(nil)
        let argv = ["latchkey-demo", "--url", base]
        var cArguments = argv.map { strdup($0) } + [nil]
        execv(program, &cArguments)
        for argument in cArguments { free(argument) }
        print("latchkey demo: cannot run \(program) (errno \(errno))")
        return 1
    }

    /// `name` in the folder of the running executable (symbolic links resolved, so a link to
    /// `latchkey` finds the real build folder).
    static func siblingPath(_ name: String) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        let executable = count > 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
        guard let slash = executable.lastIndex(of: "/") else { return name }
        return String(executable[..<slash]) + "/" + name
    }
}
