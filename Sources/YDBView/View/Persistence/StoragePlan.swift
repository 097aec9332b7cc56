/// The storage rule of a persistent view, the one that keeps a crash from
/// ever loading a stale view. Stated here once; the code that carries it
/// out is in this file, but for the store's part (the last point).
///
/// - A persistent view has a registry row in `ydb_views` (with its
///   version tag and a `fresh` flag) and its rows in `ydb_view_rows`
///   (`ViewStorage`). Registration loads the rows instead of running any
///   callback only when the row is fresh, of the current format and of the
///   same version tag (`ViewRegistration.swift`).
/// - A commit owes the table the places of the rows it changed (`owe`).
///   It writes them, with the rows earlier commits left waiting, once
///   they are `Tuning.viewRowsWrittenAtOnce` or more (`save`); otherwise
///   they wait in memory (`UnstoredRows`), and the first commit that
///   leaves rows waiting marks the registry row not fresh, in the same
///   SQLite transaction. A process that ends before the waiting rows are
///   written (a crash, a kill) leaves a view that repopulates when next
///   registered, never one that loads out of date.
/// - The waiting rows are written, and the view marked fresh again, by a
///   commit that reaches the threshold, by the database's thread once
///   commits pause, and by closing the database (`DeferredViewRows`, the
///   store's `DeferredWrites`). Nothing changes in memory before the
///   SQLite transaction that wrote them committed (`committed`).
/// - While an asynchronous registration stores a view a chunk at a time
///   the table is not complete: every commit writes what it changes, and
///   the view stays not fresh until the registration stored the last row.
/// - A stored view that is not registered misses row changes: the store
///   marks every such one not fresh at the first commit that changes rows
///   (`Schema.markStoredExtensionsStale`), and other programs' writes are
///   counted by triggers and mark them at the next open (`Schema`).
///
/// `StoragePlan` is one write transaction's part of this for one view.
struct StoragePlan {
    /// Storage writes this transaction owes, by rowid: a row's last place,
    /// or its removal. Collected, not written as they happen, so that a
    /// transaction that changes many rows runs neither a statement per
    /// change nor two writes of one row.
    private(set) var owed: [Int64: UnstoredRows.Row] = [:]
    /// The view's table was emptied in this transaction (it is rewritten
    /// from scratch): the rows earlier commits left waiting no longer apply.
    private var cleared = false
    /// What the commit does with the waiting rows, once it succeeded.
    private var decision = Decision.none
    /// An asynchronous registration stored the view's last rows in this
    /// transaction (`completesTable`).
    private var completes = false

    private enum Decision {
        /// Nothing to store.
        case none
        /// This commit wrote them all.
        case written
        /// They wait, with this transaction's.
        case waiting
    }

    /// The row's place (`row`) is owed to the table of view `id` (nil: the
    /// view is not stored, nothing is owed).
    mutating func owe(_ rowid: Int64, _ row: UnstoredRows.Row, id: Int64?) {
        if id != nil { owed[rowid] = row }
    }

    /// Empties the view's table, for a view rewritten from scratch: what
    /// this transaction and earlier commits owed it no longer applies.
    mutating func clear(id: Int64?, _ handle: SQLiteHandle) throws {
        owed.removeAll()
        guard let id else { return }
        try ViewStorage.deleteAll(id: id, handle)
        cleared = true
    }

    /// The view moved to new, empty storage: what it owed the old goes.
    mutating func forgetOwed() {
        owed.removeAll()
        cleared = false
    }

    /// Set by the transaction that stores the last chunk of an asynchronous
    /// registration's rows: from its commit on, commits may leave rows
    /// waiting.
    mutating func completesTable() { completes = true }

    /// The rows earlier commits left waiting, as this transaction found
    /// them (none once it emptied the table).
    private func waitingBefore(_ waiting: UnstoredRows) -> [Int64: UnstoredRows.Row] {
        cleared ? [:] : waiting.rows
    }

    /// Called once per commit, before it: writes the rows this transaction
    /// owes together with those waiting, or leaves them all waiting (the
    /// rule above). `waiting` changes only once the commit succeeded.
    mutating func save(id: Int64?, _ waiting: UnstoredRows, _ handle: SQLiteHandle) throws {
        guard let id, !owed.isEmpty || cleared else { return }
        let before = waitingBefore(waiting)
        let count = before.count + owed.count
        if !waiting.tableIsComplete || count >= Tuning.viewRowsWrittenAtOnce || count == 0 {
            // Merged only when earlier commits left rows: a copy of every row otherwise.
            try Self.write(before.isEmpty ? owed : before.merging(owed) { $1 }, id: id,
                           markingFresh: waiting.markedStale && waiting.tableIsComplete, handle)
            decision = .written
        } else {
            if !waiting.markedStale { try ViewStorage.setFresh(false, id: id, handle) }
            decision = .waiting
        }
    }

    /// Writes `rows` to view `id`'s table and, with `markingFresh`, marks
    /// it fresh: a commit's write, and the database thread's
    /// (`DeferredViewRows`). An incomplete table stays not fresh: the
    /// registration storing it marks it fresh at its end.
    static func write(_ rows: [Int64: UnstoredRows.Row], id: Int64, markingFresh: Bool,
                      _ handle: SQLiteHandle) throws {
        try ViewStorage.write(rows, id: id, handle)
        if markingFresh { try ViewStorage.setFresh(true, id: id, handle) }
    }

    /// The commit succeeded: what `save` decided now holds. Returns whether
    /// it left rows waiting.
    mutating func committed(_ waiting: UnstoredRows) -> Bool {
        if completes { waiting.tableIsComplete = true }
        defer { owed.removeAll() }
        switch decision {
        case .none:
            return false
        case .written:
            waiting.markStored()
            return false
        case .waiting:
            if cleared { waiting.rows = [:] }
            waiting.rows.merge(owed) { $1 }
            waiting.markedStale = true
            return true
        }
    }

    /// The transaction rolled back: the writes it owed are void.
    mutating func rolledBack() { owed.removeAll() }

    /// Debug builds, before the commit: the rows the table will hold once
    /// the commit and the waiting rows are written are exactly `state`'s.
    func check(_ state: ViewState, id: Int64?, _ waiting: UnstoredRows, view: String,
               _ handle: SQLiteHandle) throws {
        guard let id else { return }
        var stored = try ViewStorage.places(id: id, handle)
        var unstored = decision == .written ? [:] : waitingBefore(waiting)
        if decision == .waiting { unstored.merge(owed) { $1 } }
        for (rowid, row) in unstored {
            switch row {
            case .put(let group, let label, _): stored[rowid] = (group, label)
            case .removed: stored[rowid] = nil
            }
        }
        precondition(stored.count == state.totalCount,
                     "view '\(view)': \(stored.count) stored rows, \(state.totalCount) in memory")
        state.forEachPlace { rowid, place in
            let row = stored[rowid]
            precondition(row.map { bytesEqual($0.0, place.group) && $0.1 == place.label } ?? false,
                         "view '\(view)': row \(rowid) stored as \(String(describing: row)), in memory \(place)")
            return true
        }
    }
}

/// A view's waiting rows as the store's deferred writes: written with the
/// view marked fresh, by the database's thread once commits pause and by
/// closing the database.
struct DeferredViewRows: DeferredWrites {
    let id: Int64
    let waiting: UnstoredRows

    var owesWrites: Bool { waiting.owesWrites }

    func write(_ handle: SQLiteHandle) throws {
        try StoragePlan.write(waiting.rows, id: id, markingFresh: true, handle)
    }

    func written() { waiting.markStored() }
}
