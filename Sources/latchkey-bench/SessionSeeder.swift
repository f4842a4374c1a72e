import Foundation
import LatchkeyServer
import LatchkeyStore

/// `latchkey-bench seed-sessions CONFIG COUNT`: makes one user with COUNT sessions in the
/// configured database, as a sign-in would, and prints `refresh_token access_token` per line,
/// so `scripts/bench` can drive refresh and bearer load without a sign-in endpoint.
enum SessionSeeder {
    static func run(_ arguments: [String]) async -> Int32 {
        guard arguments.count == 2, let count = Int(arguments[1]), count > 0 else {
            FileHandle.standardError.write(Data("usage: latchkey-bench seed-sessions CONFIG COUNT\n".utf8))
            return 2
        }
        return await Seeding.run("seed-sessions", configurationFile: arguments[0]) { application in
            let users = UserRepository(database: application.database)
            let user = try await application.database.write { try users.create(email: "bench@example.com", now: Date(), on: $0) }
            var lines = ""
            for _ in 0..<count {
                let token = try await application.services.signIns.startSession(userID: user.id, amr: ["pwd"], context: RequestContext(ip: "127.0.0.1"))
                lines += "\(token.refreshToken) \(token.accessToken)\n"
            }
            return lines
        }
    }
}
