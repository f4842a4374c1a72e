/// Mutates valid inputs into hostile ones: bit flips, byte replacement, truncation, extension,
/// duplication of a slice, and pure noise.
enum Mutator {
    static func mutate(_ input: [UInt8], using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        let rounds = Int.random(in: 1...4, using: &generator)
        for _ in 0..<rounds {
            switch Int.random(in: 0..<7, using: &generator) {
            case 0 where !bytes.isEmpty:
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
            case 1 where !bytes.isEmpty:
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = interesting.randomElement(using: &generator)!
            case 2:
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            case 3:
                bytes.insert(interesting.randomElement(using: &generator)!, at: Int.random(in: 0...bytes.count, using: &generator))
            case 4 where bytes.count > 1:
                let start = Int.random(in: 0..<bytes.count, using: &generator)
                let end = Int.random(in: start...bytes.count, using: &generator)
                bytes.insert(contentsOf: bytes[start..<end], at: Int.random(in: 0...bytes.count, using: &generator))
            case 5 where !bytes.isEmpty:
                bytes.remove(at: Int.random(in: 0..<bytes.count, using: &generator))
            case 6:
                bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            default:
                break
            }
        }
        return bytes
    }

    /// Bytes that tend to matter to parsers and decoders.
    private static let interesting: [UInt8] = Array("{}[]\":,.\\-_=+/0123456789eE aAzZ".utf8) + [0x00, 0x7F, 0x80, 0xC0, 0xED, 0xFF]
}
