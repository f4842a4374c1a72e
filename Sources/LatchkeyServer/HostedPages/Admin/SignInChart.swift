import FoundationEssentials
import LatchkeyHTTP

/// The console overview's chart: sign-ins per hour over the last 24 hours, succeeded and failed
/// stacked, drawn on the server as inline SVG. Sizes and colours are presentation attributes
/// (the stylesheet's classes recolour it in dark mode), never a `style` attribute, so the CSP
/// needs no `unsafe-inline`; it needs no script either. Each bar's `<title>` gives its hour and
/// counts, and the chart's title the totals, for screen readers and on hover.
struct SignInChart: Sendable, Hashable {
    /// One hour's sign-ins.
    struct Hour: Sendable, Hashable {
        /// When the hour starts.
        var start: Date
        var succeeded: Int
        var failed: Int
    }

    /// The hours, oldest first.
    var hours: [Hour]

    /// The drawing's size in its own units; it scales to the width of the page.
    static let width = 480
    static let height = 160
    /// The height of the tallest bar, below it the hour labels.
    static let plotHeight = 130

    /// The `<svg>` element.
    func render() -> HTML {
        let succeeded = hours.reduce(0) { $0 + $1.succeeded }
        let failed = hours.reduce(0) { $0 + $1.failed }
        let tallest = max(hours.map { $0.succeeded + $0.failed }.max() ?? 0, 1)
        let slot = Double(Self.width) / Double(max(hours.count, 1))
        let barWidth = Self.format(slot * 0.8)
        var bars: [HTML] = []
        for (index, hour) in hours.enumerated() {
            let x = Self.format(Double(index) * slot + slot * 0.1)
            let okHeight = Double(hour.succeeded) * Double(Self.plotHeight) / Double(tallest)
            let failedHeight = Double(hour.failed) * Double(Self.plotHeight) / Double(tallest)
            let label = "\(Self.clock(hour.start))–\(Self.clock(hour.start.addingTimeInterval(3600))) UTC: \(hour.succeeded) succeeded, \(hour.failed) failed"
            bars.append(
                """
                <g><title>\(label)</title>\
                <rect class="chart-ok" fill="#0a5cc2" x="\(x)" y="\(Self.format(Double(Self.plotHeight) - okHeight))" width="\(barWidth)" height="\(Self.format(okHeight))"/>\
                <rect class="chart-failed" fill="#b3261e" x="\(x)" y="\(Self.format(Double(Self.plotHeight) - okHeight - failedHeight))" width="\(barWidth)" height="\(Self.format(failedHeight))"/></g>

                """)
            if index % 6 == 0 {
                bars.append(
                    "<text class=\"chart-label\" fill=\"#5b5b60\" font-size=\"11\" x=\"\(x)\" y=\"\(Self.plotHeight + 20)\">\(Self.clock(hour.start))</text>\n")
            }
        }
        return """
            <svg class="chart" viewBox="0 0 \(Self.width) \(Self.height)" role="img" aria-labelledby="chart-title" xmlns="http://www.w3.org/2000/svg">
            <title id="chart-title">Sign-ins per hour, last \(hours.count) hours: \(succeeded) succeeded, \(failed) failed</title>
            <line class="chart-axis" stroke="#c7c7cc" x1="0" y1="\(Self.plotHeight)" x2="\(Self.width)" y2="\(Self.plotHeight)"/>
            \(bars)</svg>

            """
    }

    /// `HH:00` of `date`, in UTC.
    static func clock(_ date: Date) -> String {
        let hour = Int((date.timeIntervalSince1970 / 3600).rounded(.down)) % 24
        return (hour < 10 ? "0" : "") + "\(hour):00"
    }

    /// A length with at most one decimal, as SVG reads it.
    static func format(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
    }
}
