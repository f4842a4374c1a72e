/// "Did you mean …?" for a mistyped name: a setting, an environment variable, a command.
package enum Suggestion {
    /// The candidate closest to `word`, when it is close enough to be the likely intent.
    ///
    /// Closeness is the optimal-string-alignment distance (insertions, deletions, substitutions
    /// and swaps of two neighbours each count one, so `listne` is one step from `listen`),
    /// compared case-insensitively. A third of the word's length may differ, at least two
    /// characters (`sever` is two from `serve`), one in words under four; beyond that a guess
    /// misleads more than it helps.
    package static func closest(to word: String, among candidates: some Sequence<String>) -> String? {
        let limit = word.count < 4 ? 1 : max(2, word.count / 3)
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = self.distance(Array(word.lowercased()), Array(candidate.lowercased()))
            if distance <= limit, distance < best?.distance ?? .max { best = (candidate, distance) }
        }
        return best?.candidate
    }

    /// ` (did you mean X?)`, or nothing when no candidate is close.
    package static func hint(for word: String, among candidates: some Sequence<String>) -> String {
        closest(to: word, among: candidates).map { " (did you mean \($0)?)" } ?? ""
    }

    private static func distance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        // d[i][j]: the distance between the first i characters of a and the first j of b.
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
