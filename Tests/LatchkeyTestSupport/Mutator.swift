import Foundation

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator, so every mutated input is
/// reproducible from the test's seed and the iteration number.
package struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Makes hostile variants of valid inputs: bit flips, byte changes, truncation, extension,
/// insertion, deletion, duplication and pure random bytes.
package struct Mutator {
    var generator: SeededGenerator

    /// When LATCHKEY_FUZZ_VERBOSE is set, every input is printed before it is tried, so the
    /// last line before a crash is the input that caused it.
    static let verbose = ProcessInfo.processInfo.environment["LATCHKEY_FUZZ_VERBOSE"] != nil

    package init(seed: UInt64) {
        generator = SeededGenerator(seed: seed)
    }

    package mutating func int(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &generator)
    }

    package mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// One hostile variant of `seed`.
    package mutating func mutate(_ seed: [UInt8]) -> [UInt8] {
        var input = seed
        switch int(0...9) {
        case 0, 1:
            // Flip one to four bits.
            guard !input.isEmpty else { return bytes(int(0...8)) }
            for _ in 0..<int(1...4) {
                input[int(0...input.count - 1)] ^= 1 << UInt8(int(0...7))
            }
        case 2:
            // Replace one to four bytes.
            guard !input.isEmpty else { return bytes(int(0...8)) }
            for _ in 0..<int(1...4) {
                input[int(0...input.count - 1)] = UInt8(int(0...255))
            }
        case 3:
            // Truncate.
            input = Array(input.prefix(int(0...input.count)))
        case 4:
            // Extend with random bytes.
            input += bytes(int(1...64))
        case 5:
            // Insert random bytes somewhere.
            input.insert(contentsOf: bytes(int(1...8)), at: int(0...input.count))
        case 6:
            // Delete a run of bytes.
            guard !input.isEmpty else { return input }
            let start = int(0...input.count - 1)
            input.removeSubrange(start..<min(input.count, start + int(1...8)))
        case 7:
            // Duplicate a run of bytes.
            guard !input.isEmpty else { return input }
            let start = int(0...input.count - 1)
            let run = input[start..<min(input.count, start + int(1...16))]
            input.insert(contentsOf: run, at: int(0...input.count))
        case 8:
            // Set a byte to a boundary value that parsers treat specially.
            guard !input.isEmpty else { return input }
            input[int(0...input.count - 1)] = [0x00, 0x01, 0x7F, 0x80, 0x81, 0x82, 0x84, 0xFF].randomElement(using: &generator)!
        default:
            // Random bytes of a similar length.
            input = bytes(int(0...max(1, seed.count * 2)))
        }
        return input
    }

    /// Runs `body` on `count` mutations of the seeds (chosen in turn).
    package mutating func run(_ count: Int, seeds: [[UInt8]], label: String, _ body: ([UInt8]) -> Void) {
        for iteration in 0..<count {
            let input = mutate(seeds[iteration % seeds.count])
            if Self.verbose {
                print("fuzz \(label) #\(iteration): \(input.map { String(format: "%02x", $0) }.joined())")
            }
            body(input)
        }
    }
}
