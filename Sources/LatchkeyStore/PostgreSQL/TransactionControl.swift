/// Refuses transaction control inside a transaction's body: the transaction belongs to the
/// database, which begins, commits, retries and rolls it back (a body that committed would
/// leave its retry or its rollback acting on nothing).
enum TransactionControl {
    private static let words = ["BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE", "START", "ABORT", "PREPARE"]
        .map { Array($0.utf8) }

    /// Throws when the statement's first word is transaction control.
    ///
    /// - Throws: ``StoreError/Code/misuse``.
    static func refuse(_ sql: String) throws {
        let bytes = sql.utf8.drop { $0 == 0x20 || (0x09...0x0D).contains($0) }
        for word in words where bytes.starts(with: word, by: { $0 & 0xDF == $1 }) {
            let next = bytes.dropFirst(word.count).first.map { $0 & 0xDF }
            if next.map({ !(0x41...0x5A).contains($0) }) ?? true {
                throw StoreError.misuse("the transaction was ended inside the closure; never run BEGIN, COMMIT or ROLLBACK there")
            }
        }
    }
}
