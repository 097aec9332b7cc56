/// Changesets for commit notifications: the way an application asks for
/// them (YapDatabase's `getSectionChanges:rowChanges:forNotifications:withMappings:`).
///
/// ```swift
/// let notifications = try reader.beginLongLivedReadTransaction()
/// let changeset = try mappings.changes(for: notifications)
/// ```
extension Mappings {
    /// The section and row changes for `notifications` (as returned by
    /// `Connection.beginLongLivedReadTransaction()`), moving the mappings to
    /// the snapshot of the last one. The mappings must be at the snapshot just
    /// before the first notification; otherwise this throws
    /// `YDBError` `.mismatch` (reason `.mismatchedMappingsAndNotifications`) and changes nothing.
    /// `transaction` (reading the last notification's snapshot) is what
    /// dynamic groups' filter and sort read, when they take one.
    public func changes(for notifications: [CommitNotification],
                        in transaction: ReadTransaction? = nil) throws -> Changeset {
        try changes(for: commitLogs(for: notifications), in: transaction)
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

extension Array where Element == CommitNotification {
    /// Whether any of these commits changed the view `name`.
    public func hasChanges(forView name: String) -> Bool {
        contains { $0.viewLog(named: name) != nil }
    }

    /// Whether any of these commits changed rows of `group` in view `name`
    /// (or removed everything from the view, or emptied/created the group).
    public func hasChanges(forGroup group: String, inView name: String) -> Bool {
        contains { notification in
            guard let log = notification.viewLog(named: name) else { return false }
            return log.entries.contains { entry in
                switch entry {
                case .insert(_, let g, _), .delete(_, let g, _), .update(_, let g, _, _): return bytesEqual(g, group)
                case .groupCreated(let g), .groupEmptied(let g), .reordered(let g): return bytesEqual(g, group)
                case .reset: return log.before.count(inGroup: group) > 0
                }
            }
        }
    }
}
