import FoundationEssentials

/// The server's periodic jobs. Their names are the closed label set of
/// `latchkey_background_failures_total` and the `job` field of a `background_job_failed` line.
enum BackgroundJob: String, CaseIterable, Sendable {
    /// Sending Apple the revocations of deleted accounts' tokens (``AppleRevocationOutbox``).
    case appleRevocationOutbox = "apple_revocation_outbox"
    /// The daily check of stored Apple refresh tokens.
    case appleTokenValidation = "apple_token_validation"
    /// Deleting expired rows (``RetentionRepository``).
    case purge
    /// Fetching Apple's JWK Set when it is an hour old.
    case appleKeyRefresh = "apple_key_refresh"
    /// Re-reading the signing keys other processes may have added (``SigningKeyRing``).
    case signingKeyReload = "signing_key_reload"
    /// Sending the mail waiting in the outbox (``MailOutbox``).
    case mailOutbox = "mail_outbox"
}

/// Runs the passes of periodic jobs so that none fails unseen: a pass that throws writes one
/// `background_job_failed` line (``ServerLog``) and adds one to
/// `latchkey_background_failures_total{job=…}`, and the job runs again at its next turn.
///
/// A pass cut short because its task was cancelled (shutdown) is not a failure.
struct BackgroundJobs: Sendable {
    let metrics: Metrics

    /// Shows every job's failure counter at zero, so a dashboard sees each series before its
    /// first failure; called once, when the server opens.
    func showCounters() {
        for job in BackgroundJob.allCases { metrics.increment(.backgroundFailures, ["job": job.rawValue], by: 0) }
    }

    /// Runs one pass of `job`.
    ///
    /// - Returns: The error the pass threw, already logged and counted; `nil` when it succeeded
    ///   or was cancelled.
    @discardableResult
    func run(_ job: BackgroundJob, _ pass: () async throws -> Void) async -> (any Error)? {
        do {
            try await pass()
            return nil
        } catch {
            if Task.isCancelled { return nil }
            ServerLog.backgroundJobFailed(job, error)
            metrics.increment(.backgroundFailures, ["job": job.rawValue])
            return error
        }
    }

    /// Runs `passes` every `interval` (a new draw each time, for jitter) until the task is
    /// cancelled; the first run comes after the first wait.
    func repeating(every interval: @escaping @Sendable () -> Duration, _ passes: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                // Cancellation ends the wait early; the loop condition then stops.
                try? await Task.sleep(for: interval())
                guard !Task.isCancelled else { return }
                await passes()
            }
        }
    }
}
