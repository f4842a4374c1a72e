import Foundation
import LatchkeyHTTP
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import Synchronization
import Testing

/// Collects the `background_job_failed` lines written while `body` runs; raw JSON, as a log line is no wire body.
private func failureLines<T>(_ body: () async throws -> T) async rethrows -> (T, [JSONValue]) {
    let lines = Mutex<[JSONValue]>([])
    let result = try await ServerLog.observing(
        { line in if line["event"] == "background_job_failed" { lines.withLock { $0.append(line) } } }, body)
    return (result, lines.withLock { $0 })
}

private func failures(_ metrics: Metrics, _ job: BackgroundJob) -> Double {
    metrics.value(.backgroundFailures, ["job": job.rawValue])
}

@Suite("Background jobs")
struct BackgroundJobTests {
    /// Named so no other test's failure can be mistaken for this one's.
    struct InjectedJobFailure: Error, CustomStringConvertible {
        var description: String { "INJECTED-SECRET" }
    }

    @Test("a failing pass writes one background_job_failed line naming the job and the error's type, never its text, and counts one failure of that job only")
    func failingPassLoggedAndCounted() async throws {
        let metrics = Metrics()
        let jobs = BackgroundJobs(metrics: metrics)
        let (failure, lines) = await failureLines { await jobs.run(.purge) { throw InjectedJobFailure() } }
        #expect(failure is InjectedJobFailure)
        let mine = lines.filter { $0["error_type"] == "InjectedJobFailure" }
        #expect(mine.count == 1)
        #expect(mine.first?["job"] == "purge")
        #expect(mine.first?["level"] == "error")
        #expect(mine.first?["error"] == nil)
        #expect(mine.first.map { !$0.serializedString.contains("INJECTED-SECRET") } == true)
        #expect(failures(metrics, .purge) == 1)
        for job in BackgroundJob.allCases where job != .purge { #expect(failures(metrics, job) == 0, "\(job)") }
    }

    @Test("a pass cut short by cancellation (shutdown) is not a failure")
    func cancellationIsNotAFailure() async throws {
        let metrics = Metrics()
        let jobs = BackgroundJobs(metrics: metrics)
        let task = Task { await jobs.run(.signingKeyReload) { try await Task.sleep(for: .seconds(30)) } }
        task.cancel()
        #expect(await task.value == nil)
        #expect(failures(metrics, .signingKeyReload) == 0)
    }

    @Test("a repeating job runs a pass every interval, counts each failure, and stops when cancelled")
    func repeatingJob() async throws {
        let metrics = Metrics()
        let jobs = BackgroundJobs(metrics: metrics)
        let task = jobs.repeating(every: { .milliseconds(5) }) {
            await jobs.run(.appleKeyRefresh) { throw InjectedJobFailure() }
        }
        for _ in 0..<400 where failures(metrics, .appleKeyRefresh) < 3 { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        await task.value
        let counted = failures(metrics, .appleKeyRefresh)
        #expect(counted >= 3, "a pass per interval, each failure counted")
        try await Task.sleep(for: .milliseconds(30))
        #expect(failures(metrics, .appleKeyRefresh) == counted, "no pass after cancellation")
    }

    @Test("a healthy pass of the server's jobs counts nothing, and every job's counter is shown at zero from the start")
    func healthyPassCountsNothing() async throws {
        try await TestServer.with { server in
            try await server.application.runBackgroundJobs()
            let metrics = server.application.metrics
            for job in BackgroundJob.allCases { #expect(failures(metrics, job) == 0, "\(job)") }
            let rendered = metrics.render()
            for job in BackgroundJob.allCases {
                #expect(rendered.contains("latchkey_background_failures_total{job=\"\(job.rawValue)\"} 0\n"), "\(job)")
            }
            let page = try await server.request(.get, "/metrics")
            #expect(page.text.contains("# TYPE latchkey_background_failures_total counter"))
        }
    }

    @Test("with the database closed under them, the outbox, the token validation and the purge each fail, are each logged and counted, and the others still run")
    func databaseClosedUnderTheJobs() async throws {
        try await TestServer.with { server in
            await server.database.close()
            let (thrown, lines) = await failureLines { () async -> (any Error)? in
                do {
                    try await server.application.runBackgroundJobs()
                    return nil
                } catch {
                    return error
                }
            }
            #expect((thrown as? StoreError)?.code == .closed, "the first failure is thrown to the caller")
            let metrics = server.application.metrics
            for job in [BackgroundJob.appleRevocationOutbox, .appleTokenValidation, .purge] {
                #expect(failures(metrics, job) == 1, "\(job)")
                #expect(
                    lines.contains { $0["job"] == .string(job.rawValue) && $0["error_type"] == "StoreError" && $0["error"]?.stringValue?.hasPrefix("closed") == true },
                    "\(job)")
            }
            #expect(failures(metrics, .signingKeyReload) == 0)
        }
    }
}
