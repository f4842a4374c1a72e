/// A fuzz target: a name (its corpus folder and binary) and the property it checks.
///
/// A check takes any bytes. It returns when the code under test behaved: accepted the input and
/// every property held, or refused it with a documented error; which one, so that a corpus can
/// be shown to reach the properties and not only the refusals. It throws ``PropertyFailure`` when
/// a property breaks; a crash in the code under test is a crash. The libFuzzer entry points in
/// Fuzz/Targets turn a failure into a trap, so libFuzzer keeps the input; FuzzCorpusTests
/// replays every corpus and regression input through the same check.
public struct FuzzTarget: Sendable {
    /// The name of the target's folders under Fuzz/Corpus and Fuzz/Regressions.
    public let name: String
    /// Checks one input.
    public let check: @Sendable ([UInt8]) throws(PropertyFailure) -> Outcome

    /// What the code under test did with an input whose properties all held.
    public enum Outcome: Sendable {
        /// It accepted the input (for targets with several decoders: at least one did).
        case accepted
        /// It refused the input with a documented error.
        case refused
    }

    /// Every target, in the order `make fuzz` runs them.
    public static let all: [FuzzTarget] = [.httpRequest, .json, .jws, .jwk, .der, .pem, .smtpReply, .mailMessage, .cbor, .authenticatorData]

    /// Runs the check on libFuzzer's input and traps on a property failure.
    ///
    /// - Returns: 0, libFuzzer's "keep going".
    public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        do {
            _ = try check(input)
        } catch {
            fatalError("\(name): \(error)")
        }
        return 0
    }
}

/// A property of the code under test that an input broke.
public struct PropertyFailure: Error, CustomStringConvertible {
    /// What broke, without the input (the fuzzer saves that).
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Throws unless `condition` holds.
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(PropertyFailure) {
    if !condition { throw PropertyFailure(message()) }
}
