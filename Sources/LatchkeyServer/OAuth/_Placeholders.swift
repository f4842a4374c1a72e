// PLACEHOLDER: the helpers' interfaces, deleted when their branches merge.
package import FoundationEssentials
import LatchkeyStore
import LatchkeyJOSE

package struct BrowserSession: Sendable, Hashable {
    package var id: String
    package var userID: String
    package var amr: [String]
    package var authTime: Date
    package var createdAt: Date
    package var expiresAt: Date
}
package struct BrowserSessionService: Sendable {
    init(database: any SQLDatabase, clock: @escaping @Sendable () -> Date, lifetime: TimeInterval = 86_400) {}
    package func current(token: String) async throws -> BrowserSession? { fatalError() }
    func start(userID: String, amr: [String], context: RequestContext, now: Date, on connection: any SQLConnection) throws -> (BrowserSession, String) { fatalError() }
}
