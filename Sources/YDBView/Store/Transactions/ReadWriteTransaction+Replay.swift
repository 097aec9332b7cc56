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
        if !state.extensions.isEmpty {
            try connection.runningUserCode(.viewCallback) { try applyLoggedRows(of: commits) }
        }
        try finishCommit()
    }

    /// The process missed commits the log no longer holds: every extension
    /// is built again from the rows, published as one commit numbered
    /// `snapshot`.
    func replayMissedCommits(through snapshot: UInt64) throws {
        replayed = [LoggedCommit(snapshot: snapshot, changedRows: [:], removedCollections: [], removedAll: false,
                                 rows: [])]
        changed = true
        if !state.extensions.isEmpty {
            try connection.runningUserCode(.viewCallback) {
                try forEachExtension { try $0.rebuildFromRows(writeContext) }
            }
        }
        try finishCommit()
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

    /// Every row the commits changed, merged (`LoggedCommit.merged`):
    /// after a remove-all, the extensions are emptied first.
    private func applyLoggedRows(of commits: [LoggedCommit]) throws {
        let (rows, removedAll) = LoggedCommit.merged(commits)
        if let removedAll {
            try forEachExtension { try $0.allRemoved(keys: removedAll, writeContext) }
        }
        try forEachExtension { try $0.followRows(rows, writeContext) }
    }
}
