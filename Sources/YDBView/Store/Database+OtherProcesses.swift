#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Shared mode (docs/behaviour.md, "Several processes"): every commit is
/// logged in the database file (`CommitLog`) in its own SQLite
/// transaction; every process replays the commits of the others
/// (`ReadWriteTransaction+Replay.swift`) before a transaction of its own
/// begins on a snapshot that holds them, and its watcher thread
/// (`OtherProcessWatcher`) replays them as soon as they are announced.
extension Database {
    /// Shared mode: how many commits the commit log keeps (10,000 unless
    /// changed; at least 1). A process that falls further behind than
    /// this — asleep, stopped, or busy — rebuilds its views from the rows
    /// when it next looks, and its connections report `.reloadRequired`.
    /// Each process prunes the log to its own setting as it commits.
    public var commitLogLimit: UInt64 {
        get { stateLock.withLock { commitLogKept } }
        set { stateLock.withLock { commitLogKept = max(1, newValue) } }
    }

    /// Why the extension `name` was dropped from this process while it
    /// replayed another process's commits (its callback failed on their
    /// rows), or nil. Registering it again clears this.
    public func replayFailure(ofView name: String) -> String? {
        stateLock.withLock { replayFailures[Name(name)] }
    }

    func noteReplayFailure(of name: String, _ error: YDBError) {
        stateLock.withLock {
            replayFailures[Name(name)] = "dropped from this process: its callback failed on another process's commit (\(error.message))"
        }
    }

    func clearReplayFailure(of name: String) {
        stateLock.withLock { _ = replayFailures.removeValue(forKey: Name(name)) }
    }

    /// Whether this thread is replaying (its callbacks may begin reads of
    /// their own, which must not wait for the replay to end). Under
    /// `stateLock`.
    var isReplayingOnThisThread: Bool {
        replayingThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    /// Appends a local commit to the log, in its transaction, and now and
    /// then drops the entries no live process needs any more — and those
    /// past `commitLogLimit` even if one does (it will rebuild). The
    /// latest entry always stays: it numbers the next commit.
    func commitLogAppend(_ entry: LoggedCommit, _ handle: SQLiteHandle) throws {
        try CommitLog.append(entry, handle)
        let kept = commitLogLimit, latest = entry.snapshot
        guard latest % min(16, kept) == 0, latest > 1 else { return }
        let needed = otherProcessWatcher?.slowestOtherSnapshot() ?? latest
        let beyondLimit = latest > kept ? latest - kept : 0
        try CommitLog.remove(through: min(latest - 1, max(needed, beyondLimit)), handle)
    }

    /// Shared mode, at the begin of a write (under SQLite's write lock):
    /// other processes hand out row ids too, so the largest ever used is
    /// read from the file — the table's and the one `ydb_meta` keeps —
    /// instead of trusted from memory. A row id is never used twice, by
    /// any process.
    func readRowidCounters(_ handle: SQLiteHandle) throws {
        let (stored, table) = try Schema.largestRowids(handle)
        storedLargestRowid = stored
        largestRowid = max(stored, table)
    }

    /// Shared mode, in a commit that installs or removes extensions: records
    /// the version tag of each name this process now registers (and drops
    /// the names it no longer does) in `ydb_shared_views`, and refuses the
    /// commit (`.misuse`) when a live process registered the same name with
    /// another tag: the two would show different lists under one name.
    func recordViewTags(before: ExtensionRegistry, after: ExtensionRegistry, _ handle: SQLiteHandle) throws {
        guard let watcher = otherProcessWatcher, let slot = watcher.slot else { return }
        var changed: [(Name, String?)] = []
        after.forEachName { name in
            let tag = after[name]?.versionTag
            if before[name] == nil || before[name]?.versionTag != tag { changed.append((name, tag)) }
        }
        before.forEachName { name in
            if after[name] == nil { changed.append((name, nil)) }
        }
        for (name, tag) in changed {
            guard let tag else {
                let drop = try handle.statement("DELETE FROM ydb_shared_views WHERE name = ?1 AND slot = ?2")
                drop.bind(1, name.value)
                drop.bind(2, slot)
                try drop.run()
                continue
            }
            let others = try handle.statement(
                "SELECT slot, instance, version_tag FROM ydb_shared_views WHERE name = ?1 AND slot != ?2")
            others.bind(1, name.value)
            others.bind(2, slot)
            var conflict: String?
            while try others.step() {
                let theirs = others.string(2)
                if theirs != tag, watcher.isLive(slot: others.int(0), instance: UInt64(bitPattern: others.int64(1))) {
                    conflict = theirs
                }
            }
            others.reset()
            if let conflict {
                throw YDBError(.misuse, "'\(name.value)' is registered with version tag '\(conflict)' by another process sharing this database; every process must register it with the same tag (here: '\(tag)')")
            }
            let record = try handle.statement(
                "INSERT OR REPLACE INTO ydb_shared_views (name, slot, instance, version_tag) VALUES (?1, ?2, ?3, ?4)")
            record.bind(1, name.value)
            record.bind(2, slot)
            record.bind(3, Int64(bitPattern: watcher.instance))
            record.bind(4, tag)
            try record.run()
        }
    }

    /// Turns the row writes of other SQLite clients into logged commits
    /// (`ExternalChanges.fold`), in a write transaction of its own, and
    /// announces them; they are replayed like other processes' commits.
    /// Run by a transaction that finds such writes as it begins, and by the
    /// watcher. It needs SQLite's write lock, not the write gate: it
    /// changes no published state (the replay that follows does), and a
    /// local writer holding the lock has folded them already as it began.
    func foldExternalChanges() throws {
        try foldLock.withLock { try foldExternalChangesNow() }
    }

    private func foldExternalChangesNow() throws {
        guard !isClosed else { throw YDBError(.closed, "database is closed") }
        let connection: Connection
        if let made = foldConnection {
            connection = made
        } else {
            connection = try Connection(database: self, tracksNotifications: false)
            foldConnection = connection
        }
        let handle = connection.handle
        let folded: UInt64? = try connection.lock.withLock {
            try handle.run("BEGIN IMMEDIATE")
            do {
                guard try ExternalChanges.any(handle), let latest = try CommitLog.latestSnapshot(handle) else {
                    try handle.run("COMMIT")
                    return nil
                }
                let commits = try ExternalChanges.fold(handle, after: latest)
                for commit in commits { try CommitLog.append(commit, handle) }
                try handle.run("COMMIT")
                return commits.last?.snapshot
            } catch {
                handle.resetAll()
                try? handle.run("ROLLBACK")
                throw error
            }
        }
        if let folded { otherProcessWatcher?.tellOthers(folded) }
    }

    /// Replays the commits other processes logged that this one has not
    /// published yet, oldest first, each published as it is replayed;
    /// when the log no longer holds them all, rebuilds the extensions and
    /// marks every connection behind (`.reloadRequired`). Observers are
    /// called afterwards by the watcher thread. A no-op in exclusive mode
    /// and on a thread already replaying.
    func replayOtherProcessesCommits() throws {
        guard isMultiProcess, !stateLock.withLock({ isReplayingOnThisThread }) else { return }
        let replayed: Bool = try replayLock.withLock {
            stateLock.withLock { replayingThread = pthread_self() }
            defer { stateLock.withLock { replayingThread = nil } }
            let connection = try replayConnectionMade()
            return try connection.lock.withLock {
                let handle = connection.handle
                try handle.run("BEGIN DEFERRED")
                defer {
                    handle.resetAll()
                    try? handle.run("COMMIT")
                }
                guard let latest = try CommitLog.latestSnapshot(handle) else { return false }
                let base = try latestPublished()
                guard latest > base.snapshot else { return false }
                let entries = try CommitLog.entries(after: base.snapshot, through: latest, handle)
                guard entries.first?.snapshot == base.snapshot + 1 else {
                    try ReadWriteTransaction(replaying: connection, state: base).replayMissedCommits(through: latest)
                    stateLock.withLock { markEveryConnectionBehind() }
                    return true
                }
                try ReadWriteTransaction(replaying: connection, state: base).replay(entries)
                return true
            }
        }
        if replayed {
            otherProcessWatcher?.deliverSoon()
            measureTheLogNowAndThen()
        }
    }

    /// SQLite tells only the committing process how long the write-ahead
    /// log grew; a process that replays (and may never commit) asks now
    /// and then — a passive checkpoint, which also copies what it can —
    /// so that its long-lived reads copy the log back between their reads
    /// as a writer's do (`Checkpointer`), and the log can restart. (Not by
    /// reading the `-shm` file: closing any descriptor of a file drops
    /// every POSIX lock the process holds on it, SQLite's included.)
    private func measureTheLogNowAndThen() {
        let due: Bool = stateLock.withLock {
            replaysSinceLogMeasured += 1
            guard replaysSinceLogMeasured >= 16 else { return false }
            replaysSinceLogMeasured = 0
            return true
        }
        guard due else { return }
        replayLock.withLock {
            guard let connection = replayConnection else { return }
            let measured = connection.lock.withLock { connection.handle.checkpointPassive() }
            if let measured { checkpointer.committed(frames: Int(measured.log)) }
        }
    }

    private func latestPublished() throws -> PublishedState {
        try stateLock.withLock {
            guard !closed else { throw YDBError(.closed, "database is closed") }
            return published
        }
    }

    /// The internal connection replays run on (under `replayLock`): it
    /// reads only, and tracks no notifications.
    private func replayConnectionMade() throws -> Connection {
        if let replayConnection { return replayConnection }
        let made = try Connection(database: self, tracksNotifications: false)
        try made.handle.execute("PRAGMA query_only = 1")
        replayConnection = made
        return made
    }

    /// The process missed commits: no connection can be brought forward
    /// by notifications. Under `stateLock`.
    private func markEveryConnectionBehind() {
        for id in Array(connections.keys) { connections[id]?.behind = true }
        notifications.removeAll()
    }

    func startWatchingOtherProcesses() throws {
        guard let watcher = otherProcessWatcher else { return }
        try watcher.start(replay: { [weak self] checkLog in
            guard let self, !self.isClosed else { return }
            // (A failure is met again, and reported, by the next transaction.)
            if checkLog { try? self.foldExternalChanges() }
            if checkLog || watcher.announced > self.snapshot {
                // A failure here (a callback that throws on the rows, a
                // closed database) is met again, and reported, by the next
                // transaction that begins.
                try? self.replayOtherProcessesCommits()
            }
        }, deliver: { [weak self] in
            self?.releaseLaggardsAndDeliver()
        })
    }

    /// Stops the watcher thread and closes the replay connection.
    func stopWatchingOtherProcesses() {
        otherProcessWatcher?.stop()
        let connection: Connection? = replayLock.withLock {
            defer { replayConnection = nil }
            return replayConnection
        }
        connection?.close(because: YDBError(.closed, "database is closed"))
        let folding: Connection? = foldLock.withLock {
            defer { foldConnection = nil }
            return foldConnection
        }
        folding?.close(because: YDBError(.closed, "database is closed"))
    }

    /// Tells the other processes of a local commit (after it, with no lock held).
    func announceCommit() {
        guard let watcher = otherProcessWatcher else { return }
        let snapshot = self.snapshot
        if snapshot > watcher.announced { watcher.tellOthers(snapshot) }
    }
}
