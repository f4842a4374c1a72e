import Foundation
import LatchkeyHTTP
import LatchkeyHTTPServer
import LatchkeyJSON
import Testing

@Suite("Concurrency")
struct ConcurrencyTests {
    @Test("many clients at once each get their own answers, from synchronous and asynchronous routes")
    func manyClients() async throws {
        let router = Router()
        router.get("/sync/{n}", synchronous: { request in .json(["n": .string(request.pathParameters["n"]!)]) })
        router.get("/async/{n}") { request in
            try await Task.sleep(for: .microseconds(Int.random(in: 0...500)))
            return .json(["n": .string(request.pathParameters["n"]!)])
        }
        try await withServer(router) { server, port in
            let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
                for client in 0..<32 {
                    group.addTask {
                        let connection = try RawConnection(port: port)
                        var wrong = 0
                        for index in 0..<25 {
                            let value = "\(client)-\(index)"
                            await connection.send(get(index % 2 == 0 ? "/sync/\(value)" : "/async/\(value)"))
                            let response = await connection.readResponse()
                            if response?.json != ["n": .string(value)] { wrong += 1 }
                        }
                        return wrong
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(mismatches == 0)
            #expect(server.activeConnections <= 32)
        }
    }
}
