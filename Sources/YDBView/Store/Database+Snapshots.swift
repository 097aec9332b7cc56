/// Beginning a transaction: SQLite's snapshot and the published state
/// (views, notifications) that matches it, taken together.
extension Database {
    /// Begins SQLite's read snapshot and captures the matching published
    /// state in one step, so no commit can fall between the two. Other
    /// programs' commits are not looked for: the file lock keeps every other
    /// ydbview out, and another SQLite client's row writes are counted by
    /// triggers and mark the stored views stale at the next open.
    /// With `collectSkipped` (a long-lived read, or a connection whose row
    /// cache holds rows to forget), also returns the notifications of the
    /// commits this connection had not seen — or nil when it fell more than
    /// `maxCommitsBehind` commits behind and they were dropped. Without, the
    /// list is empty: no copy of it is made on every begin.
    func beginSnapshot(on handle: SQLiteHandle, for connection: Connection, immediate: Bool = false,
                       collectSkipped: Bool) throws -> (PublishedState, [CommitNotification]?) {
        // Shared mode: SQLite's snapshot may hold commits of other
        // processes this one has not replayed yet (replay them and look
        // again), or rows other SQLite clients wrote (fold them into the
        // log, then replay them too): no transaction sees rows its views
        // do not hold.
        while true {
            switch try beginSnapshotIfCurrent(on: handle, for: connection, immediate: immediate,
                                              collectSkipped: collectSkipped) {
            case .begun(let state, let skipped): return (state, skipped)
            case .behind: try replayOtherProcessesCommits()
            case .externalWrites: try foldExternalChanges()
            }
        }
    }

    private enum SnapshotBegin {
        case begun(PublishedState, [CommitNotification]?)
        /// SQLite's snapshot holds other processes' commits not replayed.
        case behind
        /// Other SQLite clients wrote rows not folded into the log yet.
        case externalWrites
    }

    /// `beginSnapshot`, or why not yet (and then nothing is begun).
    private func beginSnapshotIfCurrent(on handle: SQLiteHandle, for connection: Connection, immediate: Bool,
                                        collectSkipped: Bool) throws -> SnapshotBegin {
        try stateLock.withLock {
            guard !closed else { throw YDBError(.closed, "database is closed") }
            try handle.run(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
            if !immediate {
                // A deferred transaction takes its read snapshot at its first
                // read: read now, under the lock. The schema cookie is on
                // page 1, which every statement reads anyway.
                do {
                    try handle.run("PRAGMA schema_version")
                } catch {
                    try? handle.run("ROLLBACK")
                    throw error
                }
            }
            if isMultiProcess, !isReplayingOnThisThread {
                do {
                    let (latest, externalWrites) = try CommitLog.state(handle)
                    if let latest, latest > published.snapshot {
                        try? handle.run("ROLLBACK")
                        return .behind
                    }
                    if externalWrites {
                        try? handle.run("ROLLBACK")
                        return .externalWrites
                    }
                    // Other processes hand out row ids too.
                    if immediate { try readRowidCounters(handle) }
                } catch {
                    try? handle.run("ROLLBACK")
                    throw error
                }
            }
            let (state, skipped) = try caughtUpSnapshot(for: connection, collectSkipped: collectSkipped,
                                                        prune: !immediate)
            return .begun(state, skipped)
        }
    }

    /// The published state for a transaction `connection` began, with the
    /// notifications it skipped (see `beginSnapshot`). Under `stateLock`.
    private func caughtUpSnapshot(for connection: Connection, collectSkipped: Bool,
                                  prune: Bool = false) throws -> (PublishedState, [CommitNotification]?) {
            guard !closed else { throw YDBError(.closed, "database is closed") }
            guard connection.tracksNotifications else { return (published, []) }
            let id = ObjectIdentifier(connection)
            let tracked = connections[id] ?? TrackedConnection(connection: connection, seen: published.snapshot)
            let skipped = !collectSkipped ? []
                : tracked.behind ? nil
                : tracked.seen == published.snapshot ? []
                : Array(notifications[firstNotification(after: tracked.seen)...])
            connections[id] = tracked.caughtUp(to: published.snapshot)
            // A read-write transaction prunes when it commits (or the next
            // begin does): once per commit, not twice.
            if prune { pruneNotifications() }
            return (published, skipped)
    }

    /// The descriptor that is readable while `connection` has not caught
    /// up with the latest commit (`WakeupDescriptor`), made on first use;
    /// it stays valid until the connection closes.
    func wakeupDescriptor(for connection: Connection) throws -> Int32 {
        guard connection.tracksNotifications else {
            throw YDBError(.misuse, "an internal connection has no wakeup descriptor")
        }
        return try stateLock.withLock {
            guard !closed else { throw YDBError(.closed, "database is closed") }
            let id = ObjectIdentifier(connection)
            guard var tracked = connections[id] else { throw YDBError(.closed, "connection is closed") }
            if let wakeup = tracked.wakeup { return wakeup.readEnd }
            let wakeup = try WakeupDescriptor()
            if tracked.seen < published.snapshot { wakeup.set() }
            tracked.wakeup = wakeup
            connections[id] = tracked
            wakeups += 1
            return wakeup.readEnd
        }
    }

    /// Whether `connection` fell too far behind (test and C layer helper).
    func isBehind(_ connection: Connection) -> Bool {
        stateLock.withLock { connections[ObjectIdentifier(connection)]?.behind ?? false }
    }
}
