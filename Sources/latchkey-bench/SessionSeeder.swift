import Foundation
import LatchkeyServer
import LatchkeyStore

/// `latchkey-bench seed-sessions CONFIG COUNT [DPOP_KEYFILE]`: makes one user with COUNT sessions
/// in the configured database, as a sign-in would, and prints `refresh_token access_token` per
/// line, so `scripts/bench` can drive refresh and bearer load without a sign-in endpoint. With
/// DPOP_KEYFILE the sessions are bound to that key, as a sign-in with its DPoP proof binds them
/// (``DPoPProofMaker``).
enum SessionSeeder {
    static func run(_ arguments: [String]) async -> Int32 {
        guard (2...3).contains(arguments.count), let count = Int(arguments[1]), count > 0 else {
            FileHandle.standardError.write(Data("usage: latchkey-bench seed-sessions CONFIG COUNT [DPOP_KEYFILE]\n".utf8))
            return 2
        }
        return await Seeding.run("seed-sessions", configurationFile: arguments[0]) { application in
            let users = UserRepository(database: application.database)
            let user = try await application.database.write { try users.create(email: "bench@example.com", now: Date(), on: $0) }
            var context = RequestContext(ip: "127.0.0.1")
            if arguments.count == 3 { context.dpopKeyThumbprint = try DPoPProofMaker.thumbprint(arguments[2]) }
            var lines = ""
            for _ in 0..<count {
                let token = try await application.services.signIns.startSession(userID: user.id, amr: ["pwd"], context: context)
                lines += "\(token.refreshToken) \(token.accessToken)\n"
            }
            return lines
        }
    }
}
