/// Shared mode: other processes' commits, read from the commit log, are
/// replayed as one transaction of this process that writes nothing. Its
/// extensions (views) take the commits' row changes from the rows as they
/// are now, all at once — as an asynchronous registration catches up — so
/// that a comparator never meets a row that a later commit of the batch
/// removed or changed. It publishes one notification per commit, under
/// the logged number and made of the logged rows; the extensions' logs
/// go with the last one (the earlier ones leave the views as they were),
/// and no reader sees the state in between. Everything downstream
/// (changesets, edit scripts, row caches, observers) treats them as local
/// commits.
///
/// Another process's commit cannot be refused: an extension whose callback
/// fails on its rows is dropped from this process (with the extensions
/// that depend on it), and the others go on (`Database.replayFailure`
/// says why, and reading the view says so).
extension ReadWriteTransaction {
    /// Replays `commits` (consecutive, oldest first) and publishes them.
    func replay(_ commits: [LoggedCommit]) throws {
        guard let last = commits.last else { return }
        replayed = commits
        changed = true
        changedRows = last.changedRows
        removedCollections = Set(last.removedCollections.map { Name($0) })
        removedAll = last.removedAll
        recordedRowids = last.rows.map(\.rowid)
        if changedRowids != nil {
            for commit in commits {
                for row in commit.rows { changedRowids![row.rowid, default: []].formUnion(row.kind) }
            }
        }
        let (rows, removedAll) = LoggedCommit.merged(commits)
        try finishReplay { writer in
            if let removedAll { try writer.allRemoved(keys: removedAll, writeContext) }
            try writer.followRows(rows, writeContext)
        }
    }

    /// The process missed commits the log no longer holds: every extension
    /// is built again (from the rows, or from what is stored), published
    /// as one commit numbered `snapshot`.
    func replayMissedCommits(through snapshot: UInt64) throws {
        replayed = [LoggedCommit(snapshot: snapshot, changedRows: [:], removedCollections: [], removedAll: false,
                                 rows: [])]
        changed = true
        try finishReplay { try $0.rebuildFromRows(writeContext) }
    }

    /// The notifications of replayed commits whose extensions' changes go
    /// with a later one: their rows only.
    static func rowOnlyNotifications(_ commits: ArraySlice<LoggedCommit>) -> [CommitNotification] {
        commits.map { commit in
            CommitNotification(snapshot: commit.snapshot, changedRows: commit.changedRows,
                               removedCollections: Set(commit.removedCollections.map { Name($0) }),
                               removedAll: commit.removedAll, extensionLogs: [:],
                               changedRowids: commit.rows.map(\.rowid))
        }
    }

    /// Runs `body` on each extension's writer (those it depends on first),
    /// drops the ones that fail, and publishes.
    private func finishReplay(_ body: (any ExtensionWriter) throws -> Void) throws {
        var ordered: [any ExtensionWriter] = []
        if !state.extensions.isEmpty { try forEachExtension { ordered.append($0) } }
        var failed: [String: YDBError] = [:]
        connection.runningUserCode(.viewCallback) {
            for writer in ordered {
                let name = writer.working.name
                if let dependency = writer.working.dependencies.first(where: { failed[$0] != nil }) {
                    failed[name] = YDBError(.callbackFailed, "it depends on '\(dependency)', which failed")
                    continue
                }
                do {
                    try body(writer)
                } catch {
                    failed[name] = error as? YDBError ?? YDBError(.callbackFailed, "\(error)")
                }
            }
        }
        var released: [ReleaseHook] = []
        for (name, error) in failed {
            if let hook = writer(named: name)?.working.releaseHook { released.append(hook) }
            removeWriter(named: name)
            connection.database.noteReplayFailure(of: name, error)
        }
        try finishCommit()
        for hook in released { hook.release() }
    }
}
