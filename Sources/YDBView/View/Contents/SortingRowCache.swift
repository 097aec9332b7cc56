/// The rows a comparator-form view compared against, kept from one
/// transaction to the next: placing a changed row compares it with about
/// log2(group size) rows, and the first of those are the same rows at every
/// commit (the middle of the group, then its quarters…). Without the cache
/// each comparison read its row back from SQLite.
///
/// Bounded by the bytes its rows hold, `budget` (then emptied and
/// refilled: the rows every search visits come back first), not by their
/// number: 16,384 rows of a view of large objects could have held
/// gigabytes. Small rows (about 130 bytes with their overhead) fill it at
/// about 16,000. A row larger than the budget is not kept.
///
/// A view that keeps its sorting rows in memory
/// (`View.keepsSortingRowsInMemory`) has no bound: its population fills
/// the cache with every row it sorted, so a commit compares rows in memory
/// only (a row comes from SQLite only after a reopen, a rollback or a
/// change, once).
///
/// A row's entry goes when the row changes or leaves the view. When a
/// transaction rolls back, the rows it stored go (they may be rows as that
/// transaction changed them), or every row when it stored more than
/// `trackedStores`. Used only by the transaction that holds the write
/// gate: one at a time.
final class SortingRowCache: @unchecked Sendable {
    static let budget = 2 << 20
    private var rows: [Int64: Entry] = [:]
    /// What the kept rows cost, by `cost(of:)`.
    private(set) var bytes = 0
    /// Rows stored since the last commit (`transactionEnded`), which a
    /// rollback forgets; nil once there were more than `trackedStores`
    /// (a rollback then forgets every row).
    private var storedSinceCommit: [Int64]? = []
    static let trackedStores = 4096

    /// A kept row's bytes: its object, metadata and key, and 112 bytes for
    /// the entry, the row and the dictionary slot around them (an estimate
    /// from their layouts, not a measurement).
    static func cost(of row: ViewRow) -> Int {
        112 + row.key.utf8.count + (row.object?.count ?? 0) + (row.metadata?.count ?? 0)
    }

    /// A cached row, boxed: handing it out costs one retain, where a copy of
    /// the row retained its four fields, the optional arrays through generic
    /// value witnesses (six such calls a comparison, and a comparator's
    /// insert makes some twenty comparisons).
    final class Entry {
        let row: ViewRow
        init(_ row: ViewRow) { self.row = row }
    }

    func entry(_ rowid: Int64) -> Entry? { rows[rowid] }

    /// Keeps `row`, which the cache does not hold (`entry` found none);
    /// `unbounded`: whatever the budget.
    func store(_ row: ViewRow, for rowid: Int64, unbounded: Bool = false) -> Entry {
        let entry = Entry(row)
        let cost = Self.cost(of: row)
        if !unbounded {
            guard cost <= Self.budget else { return entry }
            if bytes + cost > Self.budget { removeAll(keepingCapacity: true) }
        }
        rows[rowid] = entry
        bytes += cost
        storedSinceCommit?.append(rowid)
        if let count = storedSinceCommit?.count, count > Self.trackedStores { storedSinceCommit = nil }
        return entry
    }

    func forget(_ rowid: Int64) {
        if let removed = rows.removeValue(forKey: rowid) { bytes -= Self.cost(of: removed.row) }
    }

    func removeAll(keepingCapacity: Bool = false) {
        rows.removeAll(keepingCapacity: keepingCapacity)
        bytes = 0
        trackAfresh()
    }

    /// The transaction that used the cache committed: what it stored stays.
    func transactionEnded() { trackAfresh() }

    /// The transaction that used the cache rolled back: the rows it stored
    /// may be rows as it changed them.
    func transactionRolledBack() {
        guard let stored = storedSinceCommit else { return removeAll() }
        for rowid in stored { forget(rowid) }
        trackAfresh()
    }

    /// The next transaction's stores are tracked from none (the array's
    /// room kept: most commits store a few rows).
    private func trackAfresh() {
        if storedSinceCommit == nil { storedSinceCommit = [] } else { storedSinceCommit!.removeAll(keepingCapacity: true) }
    }

    var count: Int { rows.count }
}
