/// A shared-mode write transaction's entry for the commit log
/// (`LoggedCommit`), kept as its rows change: every row id with every way
/// it changed, whether this transaction inserted it, and its names.
struct CommitLogRecorder {
    private var rows: [LoggedCommit.Row] = []
    /// Where each row id is in `rows`.
    private var positions: [Int64: Int] = [:]

    mutating func record(_ rowid: Int64, _ kind: RowChangeKind, _ rowKey: RowKey, inserted: Bool = false) {
        if let position = positions[rowid] {
            rows[position].kind.formUnion(kind)
            if inserted { rows[position].inserted = true }
        } else {
            positions[rowid] = rows.count
            rows.append(LoggedCommit.Row(rowid: rowid, kind: kind, inserted: inserted, rowKey: rowKey))
        }
    }

    func entry(snapshot: UInt64, changedRows: [RowKey: RowChangeKind], removedCollections: Set<Name>,
               removedAll: Bool) -> LoggedCommit {
        LoggedCommit(snapshot: snapshot, changedRows: changedRows,
                     removedCollections: removedCollections.sorted().map(\.value), removedAll: removedAll, rows: rows)
    }
}
