/// What changed about a row, as reported with row changes.
public struct RowChangeFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The object was set or touched.
    public static let object = RowChangeFlags(rawValue: 1)
    /// The metadata was set or touched.
    public static let metadata = RowChangeFlags(rawValue: 2)
    /// Reloaded only because a neighbouring cell changed (cell drawing dependency).
    public static let dependency = RowChangeFlags(rawValue: 4)
}

/// One operation a view performed during a read-write transaction.
/// Indexes are those at the moment of the operation (see docs/behaviour.md, "What a transaction logs").
public enum ViewLogEntry: Equatable, Sendable {
    case insert(rowid: Int64, group: String, index: Int)
    case delete(rowid: Int64, group: String, index: Int)
    case update(rowid: Int64, group: String, index: Int, changes: RowChangeFlags)
    /// A group received its first row.
    case groupCreated(String)
    /// A group was empty at commit and is gone (logged once, at commit).
    case groupEmptied(String)
    /// Every row was removed from the view (remove-all, or a repopulation
    /// that starts from scratch). Rows inserted afterwards are logged as inserts.
    case reset
    /// The group's rows changed their order among themselves without leaving
    /// it (a new sorting or grouping, `setViewDefinition`): from here on the
    /// group holds the same rows in their new relative order. Rows that leave
    /// the group are deleted before it, rows that enter are inserted after it.
    case reordered(String)
}

/// Everything one commit did to one view.
/// `@unchecked Sendable`: its before/after states are persistent trees,
/// never mutated once the commit is published.
public struct ViewCommitLog: @unchecked Sendable {
    /// The view's registered name.
    public let viewName: String
    /// Snapshot the commit started from.
    public let snapshotBefore: UInt64
    /// Snapshot the commit produced (`snapshotBefore + 1`).
    public let snapshot: UInt64
    /// The view as of `snapshotBefore` and as of `snapshot`.
    public let before: any ViewContents
    public let after: any ViewContents
    /// The operations, in order.
    public let entries: ViewLogEntries
    /// (collection, key) of every rowid named in `entries`, and of every row
    /// held by `before` when `entries` contains `.reset`.
    public let keys: RowKeys

    public init(viewName: String, snapshotBefore: UInt64, snapshot: UInt64,
                before: any ViewContents, after: any ViewContents,
                entries: ViewLogEntries, keys: RowKeys) {
        self.viewName = viewName
        self.snapshotBefore = snapshotBefore
        self.snapshot = snapshot
        self.before = before
        self.after = after
        self.entries = entries
        self.keys = keys
    }
}

/// A view log's entries, in order: a random-access collection of
/// `ViewLogEntry`.
///
/// A population logs one insert per row, every row of a group in order. Such
/// a run is kept as the group's name and its rowids (8 bytes a row instead
/// of an entry's 40), and read back as the `.insert` entries it stands for:
/// a registration's log was the largest allocation left at the end of a
/// population. Any other entry is kept as it is.
public struct ViewLogEntries: RandomAccessCollection, Equatable, Sendable, ExpressibleByArrayLiteral,
                              CustomStringConvertible {
    /// The entries outside runs, in order.
    private var singles: [ViewLogEntry] = []
    /// The runs, in order.
    private var runs: [Run] = []
    /// Entries the runs stand for, in all.
    private var runEntries = 0

    /// `rowids.count` inserts into `group` at indexes 0, 1, …, starting at
    /// position `start` of the log, after `singlesBefore` singles.
    private struct Run: Sendable {
        var start: Int
        var singlesBefore: Int
        var group: String
        var rowids: [Int64]
    }

    public init() {}
    public init(_ entries: [ViewLogEntry]) { singles = entries }
    public init(arrayLiteral entries: ViewLogEntry...) { singles = entries }

    public var startIndex: Int { 0 }
    public var endIndex: Int { singles.count + runEntries }

    public subscript(position: Int) -> ViewLogEntry {
        switch locate(position) {
        case .single(let index): return singles[index]
        case .inRun(let run, let offset):
            return .insert(rowid: runs[run].rowids[offset], group: runs[run].group, index: offset)
        }
    }

    /// Where the entry at `position` is kept: a single, or a run's insert.
    private enum Location { case single(Int), inRun(Int, offset: Int) }

    private func locate(_ position: Int) -> Location {
        precondition(position >= 0 && position < endIndex, "view log position \(position) out of range")
        if runs.isEmpty { return .single(position) }
        // The last run starting at or before `position`.
        var low = 0, high = runs.count
        while low < high {
            let mid = (low + high) / 2
            if runs[mid].start <= position { low = mid + 1 } else { high = mid }
        }
        guard low > 0 else { return .single(position) }
        let run = runs[low - 1], offset = position - run.start
        if offset < run.rowids.count { return .inRun(low - 1, offset: offset) }
        return .single(run.singlesBefore + offset - run.rowids.count)
    }

    /// Replaces the entry at `position`, one `append` logged (not a run's).
    mutating func replace(at position: Int, with entry: ViewLogEntry) {
        guard case .single(let index) = locate(position) else { preconditionFailure("a run's entry is not replaced") }
        singles[index] = entry
    }

    /// Moves the last entry, an `append`, to `position` (replacing the
    /// entry there), as `replace` would put it.
    mutating func moveLast(to position: Int) {
        precondition(runs.last.map { $0.start + $0.rowids.count < endIndex } ?? true, "the last entry is a run's")
        replace(at: position, with: singles.removeLast())
    }

    public static func == (lhs: ViewLogEntries, rhs: ViewLogEntries) -> Bool { lhs.elementsEqual(rhs) }

    public var description: String { Array(self).description }

    mutating func append(_ entry: ViewLogEntry) { singles.append(entry) }

    /// Logs the inserts of `rowids` into `group` at indexes 0, 1, … in turn
    /// (a population of the group).
    mutating func appendInserts(into group: String, rowids: [Int64]) {
        guard !rowids.isEmpty else { return }
        runs.append(Run(start: endIndex, singlesBefore: singles.count, group: group, rowids: rowids))
        runEntries += rowids.count
    }

    mutating func append(contentsOf other: ViewLogEntries) {
        let start = endIndex, singlesBefore = singles.count
        runs += other.runs.map { run in
            var moved = run
            moved.start += start
            moved.singlesBefore += singlesBefore
            return moved
        }
        singles += other.singles
        runEntries += other.runEntries
    }
}
