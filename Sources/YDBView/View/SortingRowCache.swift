/// The rows a comparator-form view compared against, kept from one
/// transaction to the next: placing a changed row compares it with about
/// log2(group size) rows, and the first of those are the same rows at every
/// commit (the middle of the group, then its quarters…). Without the cache
/// each comparison read its row back from SQLite.
///
/// Bounded to `capacity` rows (then emptied and refilled: the rows every
/// search visits come back first). A row's entry goes when the row changes
/// or leaves the view, and every entry goes when a transaction rolls back
/// (the cache may hold rows as that transaction changed them).
/// Used only by the transaction that holds the write gate: one at a time.
final class SortingRowCache: @unchecked Sendable {
    static let capacity = 16_384
    private var rows: [Int64: Entry] = [:]

    /// A cached row, boxed: handing it out costs one retain, where a copy of
    /// the row retained its four fields, the optional arrays through generic
    /// value witnesses (six such calls a comparison; boxing took 6% off a C
    /// comparator's one-row insert).
    final class Entry {
        let row: ViewRow
        init(_ row: ViewRow) { self.row = row }
    }

    func entry(_ rowid: Int64) -> Entry? { rows[rowid] }

    func store(_ row: ViewRow, for rowid: Int64) -> Entry {
        if rows.count >= Self.capacity { rows.removeAll(keepingCapacity: true) }
        let entry = Entry(row)
        rows[rowid] = entry
        return entry
    }

    func forget(_ rowid: Int64) { rows.removeValue(forKey: rowid) }

    func removeAll() { rows.removeAll() }
}
