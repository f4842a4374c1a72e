/// Rows printed as columns, each as wide as its widest cell, so long ids do not push the
/// columns after them out of line.
struct Table {
    private var rows: [[String]]

    init(_ header: String...) {
        rows = [header]
    }

    mutating func add(_ cells: String...) {
        rows.append(cells)
    }

    /// The rows, one line each, columns two spaces apart, no trailing spaces.
    var text: String {
        let widths = rows.reduce(into: [Int]()) { widths, row in
            for (index, cell) in row.enumerated() {
                if index == widths.count { widths.append(0) }
                widths[index] = max(widths[index], cell.count)
            }
        }
        return rows.map { row in
            row.enumerated().map { index, cell in index == row.count - 1 ? cell : cell.padded(to: widths[index] + 2) }.joined() + "\n"
        }.joined()
    }
}
