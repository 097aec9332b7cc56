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
    public let entries: [ViewLogEntry]
    /// (collection, key) of every rowid named in `entries`, and of every row
    /// held by `before` when `entries` contains `.reset`.
    public let keys: RowKeys

    public init(viewName: String, snapshotBefore: UInt64, snapshot: UInt64,
                before: any ViewContents, after: any ViewContents,
                entries: [ViewLogEntry], keys: RowKeys) {
        self.viewName = viewName
        self.snapshotBefore = snapshotBefore
        self.snapshot = snapshot
        self.before = before
        self.after = after
        self.entries = entries
        self.keys = keys
    }
}
