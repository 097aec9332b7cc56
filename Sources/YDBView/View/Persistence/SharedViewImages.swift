/// Shared mode's way of keeping a persistent view (docs/behaviour.md,
/// "Several processes"). No process stores a view commit by commit: each
/// keeps its own in memory, with its own order labels, so their rows could
/// not be mixed in one table. Instead a process that closes the database
/// writes each persistent view it holds, whole, as an *image*: the view's
/// rows as of the snapshot it had reached, in the usual tables, marked not
/// fresh (exclusive mode repopulates it) and with that snapshot. A process
/// registering the view later loads the image — no callback — and brings it
/// forward by the commit log's entries since (callbacks for the rows those
/// changed only), as long as the log still holds them all; otherwise it
/// populates the view, as in exclusive mode.
extension ViewStorage {
    /// The snapshot a shared-mode image holds its view as of (nil: the
    /// stored view is not such an image).
    static func imageSnapshot(id: Int64, _ handle: SQLiteHandle) throws -> UInt64? {
        let select = try handle.statement("SELECT shared_snapshot FROM ydb_views WHERE id = ?1")
        defer { select.reset() }
        select.bind(1, id)
        guard try select.step(), !select.isNull(0) else { return nil }
        return UInt64(bitPattern: select.int64(0))
    }

    /// Replaces whatever is stored under `name` with `state`, as of `snapshot`.
    static func writeImage(named name: String, versionTag: String, state: ViewState, snapshot: UInt64,
                           _ handle: SQLiteHandle) throws {
        try drop(named: name, handle)
        let id = try create(named: name, versionTag: versionTag, handle)
        let mark = try handle.statement("UPDATE ydb_views SET fresh = 0, shared_snapshot = ?1 WHERE id = ?2")
        mark.bind(1, Int64(bitPattern: snapshot))
        mark.bind(2, id)
        try mark.run()
        try putAll(state, id: id, handle)
    }
}

/// A persistent view's image, written when the database closes.
struct SharedViewImage: DeferredWrites {
    let instance: ViewInstance
    let snapshot: UInt64

    var owesWrites: Bool { true }

    func write(_ handle: SQLiteHandle) throws {
        // Nothing new since this process last wrote or loaded it.
        if let stored = try ViewStorage.registration(named: instance.name, handle),
           stored.versionTag == instance.definition.versionTag,
           try ViewStorage.imageSnapshot(id: stored.id, handle) == snapshot { return }
        try ViewStorage.writeImage(named: instance.name, versionTag: instance.definition.versionTag,
                                   state: instance.state, snapshot: snapshot, handle)
    }

    func written() {}
}

extension ReadWriteTransaction {
    /// Shared mode: the view `name` loaded from its image and brought
    /// forward to this transaction's snapshot (a replay's: the last commit
    /// it replays), or nil when there is no
    /// usable image (another tag or format, keys missing, or the log no
    /// longer holds every commit since).
    func viewFromSharedImage(_ view: View, name: String) throws -> ViewInstance? {
        // The transaction's snapshot, or the last commit it replays.
        let target = replayed?.last?.snapshot ?? state.snapshot
        guard connection.database.isMultiProcess, view.isPersistent,
              let stored = try ViewStorage.registration(named: name, handle),
              stored.versionTag == view.versionTag, stored.format == ViewStorage.formatVersion,
              let imageSnapshot = try ViewStorage.imageSnapshot(id: stored.id, handle),
              imageSnapshot <= target else { return nil }
        if imageSnapshot < target {
            guard let oldest = try CommitLog.oldestSnapshot(handle), oldest <= imageSnapshot + 1 else { return nil }
        }
        let (loaded, allKeyed) = try ViewStorage.load(id: stored.id, withSortKeys: view.sorting.usesSortKeys, handle)
        if view.sorting.usesSortKeys && !allKeyed { return nil }
        let writer = ViewWriter(instance: ViewInstance(name: name, definition: view, storageID: nil, state: loaded))
        let commits = try CommitLog.entries(after: imageSnapshot, through: target, handle)
        if !commits.isEmpty {
            let (rows, removedAll) = LoggedCommit.merged(commits)
            try connection.runningUserCode(.viewCallback) {
                if let removedAll { try writer.allRemoved(keys: removedAll, writeContext) }
                try writer.followRows(rows, writeContext)
            }
        }
        var instance = writer.instance
        instance.registration = .loaded
        return instance
    }
}
