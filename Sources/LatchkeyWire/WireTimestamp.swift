/// A point in time as the wire writes it: RFC 3339 in UTC with whole seconds,
/// `2026-11-30T18:00:00Z`.
///
/// It holds seconds since 1970 and converts to and from text itself, so the wire models need no
/// Foundation; the server and the SDK turn it into a `Date` with ``secondsSince1970``.
public struct WireTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Seconds since 1970-01-01T00:00:00Z.
    public var secondsSince1970: Int64

    public init(secondsSince1970: Int64) {
        self.secondsSince1970 = secondsSince1970
    }

    public static func < (lhs: WireTimestamp, rhs: WireTimestamp) -> Bool { lhs.secondsSince1970 < rhs.secondsSince1970 }

    /// `YYYY-MM-DDTHH:MM:SSZ`.
    public var rfc3339: String {
        let days = secondsSince1970 >= 0 ? secondsSince1970 / 86_400 : (secondsSince1970 - 86_399) / 86_400
        let secondOfDay = secondsSince1970 - days * 86_400
        let (year, month, day) = Self.civil(fromDays: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(year)
        let paddedYear = String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText
        return "\(paddedYear)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))Z"
    }

    public var description: String { rfc3339 }

    /// Reads RFC 3339 (§5.6 `date-time`): `T` or `t` or a space between date and time, an optional
    /// fraction (dropped), and `Z` or a numeric offset.
    ///
    /// - Returns: `nil` for anything else, including out-of-range fields.
    public init?(rfc3339 text: String) {
        let bytes = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[start..<start + count] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        func byte(_ index: Int, _ allowed: String) -> Bool { index < bytes.count && allowed.utf8.contains(bytes[index]) }
        guard let year = number(0, 4), byte(4, "-"), let month = number(5, 2), byte(7, "-"), let day = number(8, 2),
            byte(10, "Tt "), let hour = number(11, 2), byte(13, ":"), let minute = number(14, 2), byte(16, ":"),
            let second = number(17, 2),
            (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year), hour < 24, minute < 60, second <= 60
        else { return nil }
        var index = 19
        if byte(index, ".") {
            index += 1
            let start = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            guard index > start else { return nil }
        }
        var offset: Int64 = 0
        if byte(index, "Zz") {
            index += 1
        } else if byte(index, "+-"), let hours = number(index + 1, 2), byte(index + 3, ":"), let minutes = number(index + 4, 2),
            hours < 24, minutes < 60
        {
            offset = (hours * 60 + minutes) * 60 * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = Self.days(fromCivil: year, month, day)
        self.init(secondsSince1970: days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's days-from-civil and its inverse, on the proleptic Gregorian calendar.
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
