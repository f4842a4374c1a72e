/// HTTP header fields: ordered `(name, value)` pairs with case-insensitive name lookup.
///
/// Order and repeated names are kept, as RFC 9110 §5.3 requires of anything that forwards
/// fields. The fields live in one byte buffer with an index of offsets, not a dictionary of
/// strings, so parsing a request costs two allocations however many fields it carries, and the
/// response writer copies bytes without building strings.
package struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    package struct Field: Sendable {
        package var nameStart: UInt32
        package var nameEnd: UInt32
        package var valueStart: UInt32
        package var valueEnd: UInt32

        package init(nameStart: UInt32, nameEnd: UInt32, valueStart: UInt32, valueEnd: UInt32) {
            self.nameStart = nameStart
            self.nameEnd = nameEnd
            self.valueStart = valueStart
            self.valueEnd = valueEnd
        }
    }

    /// Names and values back to back; `fields` points into it. Removed fields leave their bytes.
    package private(set) var bytes: [UInt8]
    package private(set) var fields: [Field]

    /// Creates an empty set of fields.
    package init() {
        bytes = []
        fields = []
    }

    /// Creates fields from pairs, keeping their order.
    package init(_ pairs: [(String, String)]) {
        self.init()
        for (name, value) in pairs { add(name, value) }
    }

    package init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// Fields parsed from a request head; `bytes` already holds them.
    package init(bytes: [UInt8], fields: [Field]) {
        self.bytes = bytes
        self.fields = fields
    }

    /// The number of fields, repeats included.
    package var count: Int { fields.count }

    /// Whether there are no fields.
    package var isEmpty: Bool { fields.isEmpty }

    /// The first value of the field `name` (case-insensitive), or `nil` when absent.
    package subscript(name: String) -> String? {
        guard let index = firstIndex(of: name) else { return nil }
        return value(at: index)
    }

    /// Every value of the field `name` (case-insensitive), in order.
    package func values(_ name: String) -> [String] {
        var result = [String]()
        for index in fields.indices where nameEquals(index, name) { result.append(value(at: index)) }
        return result
    }

    /// Whether a field called `name` (case-insensitive) is present.
    package func contains(_ name: String) -> Bool { firstIndex(of: name) != nil }

    /// Appends a field, keeping any existing ones of the same name.
    ///
    /// Names and values are not checked here; the response writer drops a field whose name is
    /// not an RFC 9110 token or whose value holds CR, LF or NUL, so a value taken from a request
    /// cannot split a response.
    package mutating func add(_ name: String, _ value: String) {
        let nameStart = UInt32(bytes.count)
        bytes.append(contentsOf: name.utf8)
        let nameEnd = UInt32(bytes.count)
        bytes.append(contentsOf: value.utf8)
        fields.append(Field(nameStart: nameStart, nameEnd: nameEnd, valueStart: nameEnd, valueEnd: UInt32(bytes.count)))
    }

    /// Replaces every field called `name` (case-insensitive) with one field holding `value`.
    package mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    /// Removes every field called `name` (case-insensitive).
    package mutating func remove(_ name: String) {
        guard firstIndex(of: name) != nil else { return }
        fields.removeAll { field in Self.bytesEqualIgnoringCase(bytes, field.nameStart, field.nameEnd, name) }
    }

    /// Appends every field of `other`, after these.
    package mutating func add(contentsOf other: HTTPHeaders) {
        for (name, value) in other { add(name, value) }
    }

    /// Iterates the fields in order.
    package struct Iterator: IteratorProtocol {
        let headers: HTTPHeaders
        var index = 0

        package mutating func next() -> (name: String, value: String)? {
            guard index < headers.fields.count else { return nil }
            defer { index += 1 }
            return (headers.name(at: index), headers.value(at: index))
        }
    }

    package func makeIterator() -> Iterator { Iterator(headers: self) }

    package var description: String {
        "[" + map { "\($0.name): \($0.value)" }.joined(separator: ", ") + "]"
    }

    // MARK: Byte-level access for the parser and the writer

    package func name(at index: Int) -> String {
        let field = fields[index]
        return String(decoding: bytes[Int(field.nameStart)..<Int(field.nameEnd)], as: UTF8.self)
    }

    package func value(at index: Int) -> String {
        let field = fields[index]
        return String(decoding: bytes[Int(field.valueStart)..<Int(field.valueEnd)], as: UTF8.self)
    }

    package func firstIndex(of name: String) -> Int? {
        fields.indices.first { nameEquals($0, name) }
    }

    package func nameEquals(_ index: Int, _ name: String) -> Bool {
        Self.bytesEqualIgnoringCase(bytes, fields[index].nameStart, fields[index].nameEnd, name)
    }

    /// Calls `body` with the raw name and value bytes of each field.
    package func forEachRaw(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        bytes.withUnsafeBufferPointer { buffer in
            for field in fields {
                body(
                    UnsafeBufferPointer(rebasing: buffer[Int(field.nameStart)..<Int(field.nameEnd)]),
                    UnsafeBufferPointer(rebasing: buffer[Int(field.valueStart)..<Int(field.valueEnd)]))
            }
        }
    }

    /// The raw value bytes of the first field called `name`, without building a string.
    package func withFirstValue<R>(_ name: String, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard let index = firstIndex(of: name) else { return body(nil) }
        let field = fields[index]
        return bytes.withUnsafeBufferPointer { buffer in
            body(UnsafeBufferPointer(rebasing: buffer[Int(field.valueStart)..<Int(field.valueEnd)]))
        }
    }

    package static func bytesEqualIgnoringCase(_ bytes: [UInt8], _ start: UInt32, _ end: UInt32, _ name: String) -> Bool {
        var name = name
        return name.withUTF8 { nameBytes in
            guard Int(end - start) == nameBytes.count else { return false }
            var offset = Int(start)
            for byte in nameBytes {
                if ASCII.lowercased(bytes[offset]) != ASCII.lowercased(byte) { return false }
                offset += 1
            }
            return true
        }
    }
}

/// ASCII helpers shared by the parser, the headers and the writer.
package enum ASCII {
    @inline(__always)
    package static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    /// `tchar` of RFC 9110 §5.6.2: the bytes a method or a field name may hold.
    package static let tokenTable: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for byte in UInt8(ascii: "0")...UInt8(ascii: "9") { table[Int(byte)] = true }
        for byte in UInt8(ascii: "a")...UInt8(ascii: "z") { table[Int(byte)] = true }
        for byte in UInt8(ascii: "A")...UInt8(ascii: "Z") { table[Int(byte)] = true }
        for byte in "!#$%&'*+-.^_`|~".utf8 { table[Int(byte)] = true }
        return table
    }()

    @inline(__always)
    package static func isToken(_ byte: UInt8) -> Bool { tokenTable[Int(byte)] }

    package static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        let other = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        for index in 0..<bytes.count where lowercased(bytes[index]) != lowercased(other[index]) { return false }
        return true
    }

    /// Whether a comma-separated list (`Connection: keep-alive, Upgrade`) holds `token`.
    package static func listContains(_ bytes: UnsafeBufferPointer<UInt8>, _ token: StaticString) -> Bool {
        var found = false
        forEachListElement(bytes) { if equalsIgnoringCase($0, token) { found = true } }
        return found
    }

    /// Calls `body` with each element of a comma-separated list, whitespace trimmed; empty
    /// elements are skipped, as RFC 9110 §5.6.1 asks of a recipient.
    package static func forEachListElement(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: ",") { end += 1 }
            var lower = start
            var upper = end
            while lower < upper && (bytes[lower] == 0x20 || bytes[lower] == 0x09) { lower += 1 }
            while upper > lower && (bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09) { upper -= 1 }
            if lower < upper { body(UnsafeBufferPointer(rebasing: bytes[lower..<upper])) }
            start = end + 1
        }
    }

    /// The bytes of a `reg-name` (RFC 3986 §3.2.2): unreserved, sub-delims and `%`.
    package static let hostTable: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for byte in UInt8(ascii: "0")...UInt8(ascii: "9") { table[Int(byte)] = true }
        for byte in UInt8(ascii: "a")...UInt8(ascii: "z") { table[Int(byte)] = true }
        for byte in UInt8(ascii: "A")...UInt8(ascii: "Z") { table[Int(byte)] = true }
        for byte in "-._~!$&'()*+,;=%".utf8 { table[Int(byte)] = true }
        return table
    }()

    @inline(__always)
    package static func isHostByte(_ byte: UInt8) -> Bool { hostTable[Int(byte)] }
}
