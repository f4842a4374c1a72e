import FoundationEssentials
import LatchkeyHTTP
@testable import LatchkeyServer
import Testing

@Suite("The console overview's sign-ins-per-hour chart")
struct AdminChartTests {
    static let midnight = Date(timeIntervalSince1970: 1_796_515_200)  // 2026-12-05 00:00 UTC

    static func hours(_ counts: [(Int, Int)]) -> [SignInChart.Hour] {
        counts.enumerated().map { SignInChart.Hour(start: midnight.addingTimeInterval(Double($0.offset) * 3600), succeeded: $0.element.0, failed: $0.element.1) }
    }

    static func count(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test("Inline SVG with no style attribute or script: a bar per hour, the tallest the plot's height, counts in titles, a label every six hours")
    func chart() {
        let counts = (0..<24).map { ($0 == 13 ? 40 : $0, $0 == 13 ? 10 : 1) }
        let svg = SignInChart(hours: Self.hours(counts)).render().text
        #expect(svg.hasPrefix("<svg class=\"chart\" viewBox=\"0 0 480 160\" role=\"img\""))
        #expect(!svg.contains("style") && !svg.contains("<script") && !svg.contains("on"+"load"))
        #expect(Self.count("<g>", in: svg) == 24 && Self.count("<rect ", in: svg) == 48)
        let total = counts.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
        #expect(svg.contains("Sign-ins per hour, last 24 hours: \(total.0) succeeded, \(total.1) failed"))
        // Hour 13 holds 50, the most: its bars reach the top together (40 + 10 of 130).
        #expect(svg.contains("<title>13:00–14:00 UTC: 40 succeeded, 10 failed</title>"))
        #expect(svg.contains("y=\"26\" width=\"16\" height=\"104\"/>") && svg.contains("y=\"0\" width=\"16\" height=\"26\"/>"))
        #expect(["00:00", "06:00", "12:00", "18:00"].allSatisfy { svg.contains(">\($0)</text>") })
        #expect(Self.count("<text ", in: svg) == 4)
    }

    @Test("No sign-ins at all: every bar is empty, nothing divides by zero")
    func empty() {
        let svg = SignInChart(hours: Self.hours(Array(repeating: (0, 0), count: 24))).render().text
        #expect(Self.count("height=\"0\"", in: svg) == 48)
        #expect(svg.contains("0 succeeded, 0 failed"))
        #expect(SignInChart(hours: []).render().text.contains("last 0 hours"))
    }
}
