package import FoundationEssentials

/// One SQL value, as bound to a `?` placeholder or read from a column.
///
/// The five cases are SQLite's storage classes, which PostgreSQL's types also map onto. Latchkey's
/// schema uses them by convention: timestamps are ``integer(_:)`` unix seconds (UTC), ids are
/// ``text(_:)``, secrets and hashes are ``blob(_:)``, booleans are ``integer(_:)`` 0 or 1, JSON is
/// ``text(_:)``.
///
/// Literals work where a value is expected: `[nil, 42, 1.5, "text", true]` is an array of
/// `SQLValue`s. Swift values convert with ``init(_:)`` (`SQLValue(user.email)` is `.null` when the
/// optional is `nil`).
///
/// A ``real(_:)`` NaN is stored as NULL by SQLite.
package enum SQLValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An IEEE 754 double.
    case real(Double)
    /// UTF-8 text; may contain NUL characters.
    case text(String)
    /// Bytes.
    case blob([UInt8])

    /// Converts a Swift value.
    ///
    /// - Parameter value: An `Int`, `Int64`, `Bool`, `Double`, `String`, `[UInt8]`, `Date`, an
    ///   optional of one of them, or an `SQLValue`.
    package init(_ value: some SQLValueConvertible) {
        self = value.sqlValue
    }

    /// A boolean as the integer 1 or 0.
    ///
    /// - Parameter value: The boolean.
    /// - Returns: `.integer(1)` or `.integer(0)`.
    package static func bool(_ value: Bool) -> SQLValue {
        .integer(value ? 1 : 0)
    }

    /// A time as whole unix seconds (UTC), rounded down.
    ///
    /// - Parameter date: The time.
    /// - Returns: An ``integer(_:)``.
    package static func time(_ date: Date) -> SQLValue {
        .integer(unixSeconds(date))
    }

    /// Whether this is ``null``.
    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The integer, or `nil` for any other case.
    package var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The double, or `nil` for any other case.
    package var realValue: Double? {
        if case .real(let value) = self { return value }
        return nil
    }

    /// The text, or `nil` for any other case.
    package var textValue: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The bytes, or `nil` for any other case.
    package var blobValue: [UInt8]? {
        if case .blob(let value) = self { return value }
        return nil
    }

    /// The storage class's name, for error reasons: `null`, `integer`, `real`, `text`, `blob`.
    package var typeName: String {
        switch self {
        case .null: "null"
        case .integer: "integer"
        case .real: "real"
        case .text: "text"
        case .blob: "blob"
        }
    }

    /// Whole unix seconds of `date`, rounded down and clamped to `Int64`.
    static func unixSeconds(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite else { return seconds < 0 ? .min : .max }
        return seconds >= 9.2e18 ? .max : seconds <= -9.2e18 ? .min : Int64(seconds)
    }
}

extension SQLValue: ExpressibleByNilLiteral {
    /// `nil` is ``null``.
    ///
    /// - Parameter nilLiteral: Nothing.
    package init(nilLiteral: ()) {
        self = .null
    }
}

extension SQLValue: ExpressibleByIntegerLiteral {
    /// An integer literal is an ``integer(_:)``.
    ///
    /// - Parameter value: The literal.
    package init(integerLiteral value: Int64) {
        self = .integer(value)
    }
}

extension SQLValue: ExpressibleByFloatLiteral {
    /// A float literal is a ``real(_:)``.
    ///
    /// - Parameter value: The literal.
    package init(floatLiteral value: Double) {
        self = .real(value)
    }
}

extension SQLValue: ExpressibleByStringLiteral {
    /// A string literal is a ``text(_:)``.
    ///
    /// - Parameter value: The literal.
    package init(stringLiteral value: String) {
        self = .text(value)
    }
}

extension SQLValue: ExpressibleByBooleanLiteral {
    /// `true` is the integer 1, `false` the integer 0.
    ///
    /// - Parameter value: The literal.
    package init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

/// A Swift type with one obvious SQL representation.
package protocol SQLValueConvertible {
    /// The value to bind.
    var sqlValue: SQLValue { get }
}

extension SQLValue: SQLValueConvertible {
    /// The value itself.
    package var sqlValue: SQLValue { self }
}

extension Int: SQLValueConvertible {
    /// An ``SQLValue/integer(_:)``.
    package var sqlValue: SQLValue { .integer(Int64(self)) }
}

extension Int64: SQLValueConvertible {
    /// An ``SQLValue/integer(_:)``.
    package var sqlValue: SQLValue { .integer(self) }
}

extension Int32: SQLValueConvertible {
    /// An ``SQLValue/integer(_:)``.
    package var sqlValue: SQLValue { .integer(Int64(self)) }
}

extension Bool: SQLValueConvertible {
    /// The integer 1 or 0.
    package var sqlValue: SQLValue { .bool(self) }
}

extension Double: SQLValueConvertible {
    /// An ``SQLValue/real(_:)``.
    package var sqlValue: SQLValue { .real(self) }
}

extension String: SQLValueConvertible {
    /// An ``SQLValue/text(_:)``.
    package var sqlValue: SQLValue { .text(self) }
}

extension Array: SQLValueConvertible where Element == UInt8 {
    /// An ``SQLValue/blob(_:)``.
    package var sqlValue: SQLValue { .blob(self) }
}

extension Date: SQLValueConvertible {
    /// Whole unix seconds (UTC), rounded down, as an ``SQLValue/integer(_:)``.
    package var sqlValue: SQLValue { .time(self) }
}

extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    /// ``SQLValue/null`` for `nil`, else the wrapped value's representation.
    package var sqlValue: SQLValue { self?.sqlValue ?? .null }
}
