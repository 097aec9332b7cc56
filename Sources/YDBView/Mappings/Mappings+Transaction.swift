/// Mappings driven by transactions and commit notifications: the way an
/// application uses them (YapDatabase's `updateWithTransaction:` and
/// `getSectionChanges:rowChanges:forNotifications:withMappings:`).
///
/// ```swift
/// try reader.beginLongLivedReadTransaction()
/// try reader.read { try mappings.update(with: $0) }
/// // after commits:
/// let notifications = try reader.beginLongLivedReadTransaction()
/// let changeset = try mappings.changes(for: notifications)
/// ```
extension Mappings {
    /// Caches the view's groups and counts as of `transaction` and moves the
    /// mappings to its snapshot. A view not registered at that snapshot
    /// reads as empty.
    public func update(with transaction: ReadTransaction) throws {
        update(with: try transaction.viewContents(named: viewName), snapshot: transaction.snapshot)
    }

    /// The section and row changes for `notifications` (as returned by
    /// `Connection.beginLongLivedReadTransaction()`), moving the mappings to
    /// the snapshot of the last one. The mappings must be at the snapshot just
    /// before the first notification; otherwise this throws
    /// `YDBError` `.mismatch` (reason `.mismatchedMappingsAndNotifications`) and changes nothing.
    public func changes(for notifications: [CommitNotification]) throws -> Changeset {
        try changes(for: commitLogs(for: notifications))
    }

    /// Whether `notifications` touch any group of these mappings. Cheap; it
    /// does not move the mappings (call `update(with:)` or `changes(for:)`).
    public func hasChanges(for notifications: [CommitNotification]) -> Bool {
        hasChanges(for: notifications.compactMap { $0.viewLog(named: viewName) })
    }

    /// One log per commit, in order: commits that did not touch the view get
    /// an empty log whose before and after are the unchanged view, so the
    /// logs form one unbroken chain from the mappings' snapshot.
    func commitLogs(for notifications: [CommitNotification]) throws -> [ViewCommitLog] {
        guard let first = notifications.first else { return [] }
        guard let snapshot = lastSnapshot, var unchanged = lastContents, first.snapshot == snapshot + 1 else {
            throw YDBError(.mismatchedMappingsAndNotifications(mappingsSnapshot: lastSnapshot,
                                                               logsStart: first.snapshot &- 1))
        }
        var logs: [ViewCommitLog] = []
        for notification in notifications {
            if let log = notification.viewLog(named: viewName) {
                logs.append(log)
                unchanged = log.after
            } else {
                logs.append(ViewCommitLog(viewName: viewName, snapshotBefore: notification.snapshot &- 1,
                                          snapshot: notification.snapshot, before: unchanged, after: unchanged,
                                          entries: [], keys: [:]))
            }
        }
        return logs
    }
}

/// The contents of a view that does not exist (not registered at a snapshot).
struct EmptyViewContents: ViewContents {
    var groupNames: [String] { [] }
    func count(inGroup group: String) -> Int { 0 }
    func rowid(at index: Int, inGroup group: String) -> Int64? { nil }
    func locate(rowid: Int64) -> (group: String, index: Int)? { nil }
}

extension ReadTransaction {
    /// The contents of view `name` as of this transaction (empty when the
    /// view is not registered at this snapshot).
    public func viewContents(named name: String) throws -> any ViewContents {
        try access { () -> any ViewContents in
            if let state = viewInstance(named: name)?.state { return state }
            return EmptyViewContents()
        }
    }
}

/// YapDatabase's `YapDatabaseViewTransaction (Mappings)`: rows by table index path.
extension ViewTransaction {
    /// The (collection, key) shown at `indexPath`, or nil when nothing is shown there.
    public func rowKey(at indexPath: TableIndexPath, mappings: Mappings) throws -> RowKey? {
        guard let (group, index) = mappings.groupAndIndex(forRow: indexPath.row, inSection: indexPath.section) else {
            return nil
        }
        return try rowKey(at: index, inGroup: group)
    }

    /// Key, object and metadata shown at `indexPath` in one call.
    public func row(at indexPath: TableIndexPath, mappings: Mappings) throws
        -> (key: RowKey, object: [UInt8], metadata: [UInt8]?)? {
        guard let (group, index) = mappings.groupAndIndex(forRow: indexPath.row, inSection: indexPath.section) else {
            return nil
        }
        return try row(at: index, inGroup: group)
    }

    public func object(at indexPath: TableIndexPath, mappings: Mappings) throws -> [UInt8]? {
        try row(at: indexPath, mappings: mappings)?.object
    }

    public func metadata(at indexPath: TableIndexPath, mappings: Mappings) throws -> [UInt8]? {
        try row(at: indexPath, mappings: mappings)?.metadata
    }

    /// Where the row (collection, key) is shown, or nil when it is not shown
    /// (not in the view, not in the mappings' visible groups, or outside a range).
    public func indexPath(forKey key: String, inCollection collection: String,
                          mappings: Mappings) throws -> TableIndexPath? {
        guard let (group, index) = try position(forKey: key, inCollection: collection) else { return nil }
        return mappings.rowAndSection(forIndex: index, inGroup: group)
    }
}
