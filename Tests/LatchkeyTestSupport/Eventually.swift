/// Whether `condition` holds at some poll (every 50 ms) within `limit`: for what another process
/// or a background task makes true a moment later.
package func eventually(within limit: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
