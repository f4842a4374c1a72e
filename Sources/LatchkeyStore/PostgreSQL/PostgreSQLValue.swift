internal import CLatchkeyPQ

/// How an ``SQLValue`` travels to PostgreSQL and how a result column comes back as one.
enum PostgreSQLValue {
    // Type OIDs from PostgreSQL's pg_type.dat; stable across versions.
    static let bool: UInt32 = 16
    static let bytea: UInt32 = 17
    static let int8: UInt32 = 20
    static let int2: UInt32 = 21
    static let int4: UInt32 = 23
    static let text: UInt32 = 25
    static let oid: UInt32 = 26
    static let float4: UInt32 = 700
    static let float8: UInt32 = 701
    static let numeric: UInt32 = 1700

    /// The parameter type a value is prepared with; NULL has none, so the server takes the
    /// type the statement needs there (a column's, in `VALUES (?)` or `= ?`).
    static func typeOID(_ value: SQLValue) -> UInt32 {
        switch value {
        case .null: 0
        case .integer: int8
        case .real: float8
        case .text: text
        case .blob: bytea
        }
    }

    /// Lays the bindings out in one buffer in PostgreSQL's binary format and calls `body` with
    /// the arrays `PQexecPrepared` takes; the pointers live only for the call.
    static func withParameters<T>(
        _ bindings: [SQLValue],
        _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) throws -> T
    ) throws -> T {
        guard !bindings.isEmpty else { return try body(nil, nil, nil) }
        var bytes: [UInt8] = []
        var offsets: [Int] = []
        var lengths: [Int32] = []
        for value in bindings {
            offsets.append(bytes.count)
            switch value {
            case .null:
                lengths.append(0)
                continue
            case .integer(let integer):
                withUnsafeBytes(of: integer.bigEndian) { bytes.append(contentsOf: $0) }
            case .real(let real):
                withUnsafeBytes(of: real.bitPattern.bigEndian) { bytes.append(contentsOf: $0) }
            case .text(let text):
                bytes.append(contentsOf: text.utf8)
            case .blob(let blob):
                bytes.append(contentsOf: blob)
            }
            lengths.append(Int32(bytes.count - offsets.last!))
        }
        // One byte more, so that an empty last value still has an address inside the buffer.
        bytes.append(0)
        let formats = [Int32](repeating: 1, count: bindings.count)
        return try bytes.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            let pointers: [UnsafePointer<CChar>?] = bindings.indices.map { index in
                bindings[index].isNull ? nil : base + offsets[index]
            }
            return try pointers.withUnsafeBufferPointer { pointers in
                try lengths.withUnsafeBufferPointer { lengths in
                    try formats.withUnsafeBufferPointer { formats in
                        try body(pointers.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }

    /// The rows of a result in text format, each value read by its column's type: integers and
    /// booleans (1 or 0) as ``SQLValue/integer(_:)``, floating point as ``SQLValue/real(_:)``,
    /// `numeric` as an integer when it is whole and fits, `bytea` as ``SQLValue/blob(_:)``, the
    /// rest as ``SQLValue/text(_:)``.
    static func rows(of result: OpaquePointer, limit: Int?) -> [SQLRow] {
        let fields = Int(PQnfields(result))
        let count = min(Int(PQntuples(result)), limit ?? .max)
        guard count > 0 else { return [] }
        var columns: [String] = []
        var types: [UInt32] = []
        for field in 0..<fields {
            columns.append(String(cString: PQfname(result, Int32(field))))
            types.append(PQftype(result, Int32(field)))
        }
        var rows: [SQLRow] = []
        rows.reserveCapacity(count)
        for row in 0..<count {
            var values: [SQLValue] = []
            values.reserveCapacity(fields)
            for field in 0..<fields {
                let (r, f) = (Int32(row), Int32(field))
                if PQgetisnull(result, r, f) == 1 {
                    values.append(.null)
                    continue
                }
                let length = Int(PQgetlength(result, r, f))
                let text = UnsafeRawBufferPointer(start: PQgetvalue(result, r, f), count: length)
                values.append(value(text, type: types[field]))
            }
            rows.append(SQLRow(columns: columns, values: values))
        }
        return rows
    }

    private static func value(_ text: UnsafeRawBufferPointer, type: UInt32) -> SQLValue {
        let string = { String(decoding: text, as: UTF8.self) }
        switch type {
        case int8, int4, int2, oid:
            return Int64(string()).map(SQLValue.integer) ?? .text(string())
        case bool:
            return .integer(text.first == UInt8(ascii: "t") ? 1 : 0)
        case float4, float8:
            return Double(string()).map(SQLValue.real) ?? .text(string())
        case numeric:
            let string = string()
            if let integer = Int64(string) { return .integer(integer) }
            return Double(string).map(SQLValue.real) ?? .text(string)
        case bytea:
            return .blob(hexBytea(text) ?? Array(text))
        default:
            return .text(string())
        }
    }

    /// Decodes `bytea`'s hex output format, `\x0123…` (the default since PostgreSQL 9.0).
    private static func hexBytea(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
        guard text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x"), text.count % 2 == 0 else {
            return nil
        }
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2 - 1)
        var index = 2
        while index < text.count {
            guard let high = nibble(text[index]), let low = nibble(text[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
