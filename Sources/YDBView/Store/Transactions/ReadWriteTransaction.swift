/// A read-write transaction: atomic, one at a time per database.
///
/// Every change is passed to each registered extension (view), which
/// updates itself in the same SQLite transaction (`ExtensionWriter`). If any operation fails (SQLite, or a view's
/// callback), the transaction is poisoned: later operations throw and
/// `commit()` rolls everything back and throws the first error.
/// A value longer than SQLite stores is refused (`.tooBig`) before anything
/// is written, and like a bad argument leaves the transaction usable.
public final class ReadWriteTransaction: ReadTransaction, @unchecked Sendable {
    /// Writers of the extensions this transaction touched, made on first
    /// use: a transaction that touches one (a registration) costs the same
    /// however many exist. `state.extensions` names every one.
    var writers: [Name: any ExtensionWriter] = [:]
    /// Every extension's writer in name order, once a row write has needed
    /// them all: each later write of the transaction then skips listing
    /// them and looking each one up. Dropped when the extensions change.
    private var everyWriter: [any ExtensionWriter]?
    var changedRows: [RowKey: RowChangeKind] = [:]
    /// The same changes by row id, kept only while a `CommitFollower` (an
    /// asynchronous registration) records commits (decided at begin, under
    /// the write lock).
    var changedRowids: [Int64: RowChangeKind]?
    /// Every row id `record` saw, repeats included: the commit's
    /// `CommitNotification.changedRowids`.
    var recordedRowids: [Int64] = []
    var removedCollections: Set<Name> = []
    var removedAll = false
    var changed = false
    /// In shared mode, this commit's entry for the commit log (nil in
    /// exclusive mode, and while replaying another process's commit).
    private var logRecorder: CommitLogRecorder?
    /// Replaying other processes' logged commits (`replay`): the last
    /// one's number is this commit's, and nothing is written.
    var replayed: [LoggedCommit]?
    /// An extension was installed or removed (shared mode compares the
    /// views' version tags with other processes' as it commits).
    private var extensionsChanged = false
    private var failure: YDBError?
    let startSnapshot: UInt64
    /// Run once the transaction has ended, outside every engine lock: with
    /// true after a commit, false after a rollback (`whenEnded`).
    private var endHooks: [(Bool) -> Void] = []

    override init(connection: Connection, state: PublishedState) {
        startSnapshot = state.snapshot
        changedRowids = connection.database.followersRecord ? [:] : nil
        logRecorder = connection.database.isMultiProcess ? CommitLogRecorder() : nil
        super.init(connection: connection, state: state)
    }

    /// A transaction that replays another process's commit on the
    /// database's replay connection (`replay`).
    init(replaying connection: Connection, state: PublishedState) {
        startSnapshot = state.snapshot
        changedRowids = connection.database.followersRecord ? [:] : nil
        super.init(connection: connection, state: state)
    }

    // MARK: Ending

    /// Makes every change durable and visible, publishes one commit
    /// notification (when anything changed) and ends the transaction.
    public func commit() throws {
        let outcome: Result<Void, YDBError> = try connection.lock.withLock {
            if ended { throw endReason ?? YDBError(.misuse, "transaction used after it ended") }
            try connection.checkReentry(.end("commit the transaction"))
            if let failure {
                return .failure(YDBError(failure.code, "transaction rolled back: \(failure.message)"))
            }
            do {
                try finishCommit()
                return .success(())
            } catch let error as YDBError {
                return .failure(error)
            }
        }
        if case .failure(let error) = outcome {
            rollback()
            throw error
        }
        runEndHooks(committed: true)
        // Observers run with no lock held: they may read or write themselves.
        connection.database.afterCommit()
    }

    /// Runs `hook` once this transaction ends, outside every engine lock:
    /// `hook(true)` after a commit, `hook(false)` after a rollback. How the
    /// view layer releases the definitions a transaction replaced or failed
    /// to install.
    func whenEnded(_ hook: @escaping (Bool) -> Void) {
        endHooks.append(hook)
    }

    private func runEndHooks(committed: Bool) {
        let hooks = connection.lock.withLock {
            defer { endHooks.removeAll() }
            return endHooks
        }
        for hook in hooks { hook(committed) }
    }

    func finishCommit() throws {
        var newState = state
        var logs: [Name: any Sendable] = [:]
        let snapshot = replayed?.last?.snapshot ?? (changed ? startSnapshot + 1 : startSnapshot)
        // (A replayed batch changes the extensions in its last commit.)
        let snapshotBefore = replayed != nil ? snapshot - 1 : startSnapshot
        for writer in writers.values { try writer.prepareCommit(handle) }
        let database = connection.database
        for (name, writer) in writers {
            if Tuning.checksInvariants { try writer.checkBeforeCommit(handle, database) }
            let (registered, log) = writer.finish(snapshotBefore: snapshotBefore, snapshot: snapshot)
            newState.extensions[name] = registered
            if let log { logs[name] = log }
        }
        newState.snapshot = snapshot
        var notification: CommitNotification?
        let rowsChanged = !changedRows.isEmpty || !removedCollections.isEmpty || removedAll
        if rowsChanged && database.storedExtensionsMayMissCommits && replayed == nil {
            // Stored extensions that are not registered miss these row changes.
            try Schema.markStoredExtensionsStale(except: state.extensions.names.compactMap { name in
                registeredExtension(named: name.value).flatMap { registered in
                    registered.storageID.map { (registered.storageRegistry, $0) }
                }
            }, handle)
        }
        if extensionsChanged && replayed == nil && database.isMultiProcess {
            // (`state` has the transaction's own changes; the published state is
            // its start, as it holds the write gate.)
            try database.recordViewTags(before: database.latestExtensions, after: newState.extensions, handle)
        }
        var reservedThrough: UInt64?
        var storedLargestRowid: Int64?
        if changed && replayed == nil, let logRecorder {
            try database.commitLogAppend(logRecorder.entry(
                snapshot: snapshot, changedRows: changedRows, removedCollections: removedCollections,
                removedAll: removedAll), handle)
        } else if changed && replayed == nil {
            if snapshot > database.snapshotsReservedThrough {
                reservedThrough = snapshot + Schema.snapshotsReservedAtOnce - 1
                try Schema.reserveSnapshots(handle, through: reservedThrough!)
            }
        }
        if changed && replayed == nil {
            // Deleting the rows with the largest ids lowers the table's
            // largest id; the stored one keeps them from being reused.
            if deletesRows, database.storedLargestRowid < database.largestRowid,
               try rows.largestRowid() < database.largestRowid {
                storedLargestRowid = database.largestRowid
                try Schema.writeLargestRowid(handle, database.largestRowid)
            }
        }
        if changed {
            notification = CommitNotification(
                snapshot: snapshot, changedRows: changedRows, removedCollections: removedCollections,
                removedAll: removedAll, extensionLogs: logs, changedRowids: recordedRowids)
        }
        if let replayed {
            database.publishReplayed(state: newState, notifications: Self.rowOnlyNotifications(replayed.dropLast())
                                     + (notification.map { [$0] } ?? []), rowChanges: changedRowids)
            markEnded()
            return
        }
        try database.commit(on: handle, by: connection, state: newState, notification: notification,
                            rowChanges: changedRowids)
        // Every writer hears of the commit (no early exit), then the
        // checkpointer, once, if any left rows waiting.
        var rowsWait = false
        for writer in writers.values {
            if writer.committed() { rowsWait = true }
        }
        if rowsWait { database.checkpointer.deferredWritesWaiting() }
        if let reservedThrough { database.snapshotsReservedThrough = reservedThrough }
        if let storedLargestRowid { database.storedLargestRowid = storedLargestRowid }
        // This connection's cached rows move past its own commit.
        connection.rowCache.move(to: snapshot, through: notification.map { [$0] })
        if rowsChanged { database.storedExtensionsMayMissCommits = false }
        markEnded()
        connection.writeTransactionEnded(self, snapshot: snapshot)
    }

    /// Discards every change and ends the transaction. No-op when ended.
    /// From inside one of its own callbacks, it rolls back when the running
    /// call returns.
    public func rollback() {
        if connection.deferInsideUserCode({ self.rollback() }) { return }
        let rolledBack: Bool = connection.lock.withLock {
            guard !ended else { return false }
            for writer in writers.values { writer.rolledBack() }
            handle.resetAll()
            try? handle.run("ROLLBACK")
            markEnded()
            connection.writeTransactionEnded(self, snapshot: startSnapshot)
            return true
        }
        if rolledBack { runEndHooks(committed: false) }
    }

    /// Every write goes through here: checks the transaction is usable, and
    /// poisons it when the write fails half-way.
    /// `refuse` checks the arguments before anything is written: what it
    /// throws leaves the transaction usable.
    private func write<T>(refusing refuse: () throws -> Void = {}, _ body: () throws -> T) throws -> T {
        try access {
            if let failure {
                throw YDBError(.misuse, "transaction already failed (\(failure.message)); roll it back")
            }
            try connection.checkReentry(.write)
            try refuse()
            do {
                // Everything user code can run inside a write is a view callback.
                return try connection.runningUserCode(.viewCallback, body)
            } catch let error as YDBError {
                failure = error
                throw error
            } catch {
                let wrapped = YDBError(.callbackFailed, "\(error)")
                failure = wrapped
                throw wrapped
            }
        }
    }

    /// Refuses, before anything is written, values SQLite would not store:
    /// otherwise a too-long blob binds as NULL (a row without its metadata)
    /// and SQLite's own error names neither the size nor the limit.
    /// (A replaced value shares its row with the kept one; SQLite still
    /// refuses that row as a whole, without naming sizes.)
    private func checkStorable(object: [UInt8]?, metadata: [UInt8]?, key: String, collection: String) throws {
        let limit = handle.maxValueBytes
        let sizes = [("object", object?.count ?? 0), ("metadata", metadata?.count ?? 0),
                     ("key", key.utf8.count), ("collection name", collection.utf8.count)]
        for (what, size) in sizes where size > limit {
            throw YDBError(.tooBig, "\(what) of \(size) bytes is larger than the limit of \(limit) bytes")
        }
        let total = sizes.reduce(0) { $0 + $1.1 }
        if total > limit {
            throw YDBError(.tooBig, "row of \(total) bytes (key, collection, object and metadata) is larger than the limit of \(limit) bytes")
        }
    }

    /// The row table's writes (all its SQL is in `RowTable.swift`).
    private var table: RowTable { RowTable(handle: handle) }

    /// What extensions see of this write: the rows, read only, the handle
    /// of their own tables, and this transaction only to lend callbacks a
    /// read-only handle of it.
    var writeContext: ExtensionWriteContext { ExtensionWriteContext(rows: rows, storage: handle, transaction: self) }

    /// Whether it deleted rows (its commit then may store the largest row id):
    /// a removal stays in `changedRows` even when the key is set again, and
    /// emptying a collection or everything is recorded apart.
    private var deletesRows: Bool {
        removedAll || !removedCollections.isEmpty || changedRows.values.contains { $0.contains(.removed) }
    }

    private func record(_ kind: RowChangeKind, _ rowKey: RowKey, _ rowid: Int64) {
        changed = true
        changedRows[rowKey, default: []].formUnion(kind)
        changedRowids?[rowid, default: []].formUnion(kind)
        recordedRowids.append(rowid)
        logRecorder?.record(rowid, kind, rowKey)
    }

    // MARK: Writing rows

    /// Sets the object and metadata of a row, inserting it when absent.
    public func setObject(_ object: [UInt8], forKey key: String, inCollection collection: String,
                          metadata: [UInt8]?) throws {
        try write(refusing: { try checkStorable(object: object, metadata: metadata, key: key, collection: collection) }) {
            try validateName(key, "key")
            try validateName(collection, "collection")
            let row = ViewRow(collection: collection, key: key, object: object, metadata: metadata)
            let (rowid, inserted) = try store(row)
            if inserted {
                try forEachExtension { try $0.rowInserted(rowid, row, writeContext) }
            } else {
                try forEachExtension { try $0.rowUpdated(rowid, row, .set, writeContext) }
            }
        }
    }

    /// Sets many rows of one collection: the same as `setObject` for each
    /// `(key, object, metadata)` in order (a key given twice keeps only its
    /// last row), but refused as a whole when any row is invalid, before
    /// anything is written. For a binding, views whose callbacks have a
    /// batch form (`ViewGrouping.Batch`) are first asked for all of the
    /// batch's groups, then its keys, in one call each -- before any row is
    /// stored, so such a callback reads the transaction as it was before
    /// the batch; the rows are then stored and placed one by one.
    public func setObjects(_ rows: [(key: String, object: [UInt8], metadata: [UInt8]?)],
                           inCollection collection: String) throws {
        try write(refusing: {
            for row in rows {
                try checkStorable(object: row.object, metadata: row.metadata, key: row.key, collection: collection)
            }
        }) {
            try validateName(collection, "collection")
            for row in rows { try validateName(row.key, "key") }
            // The last row of each key: a set that a later one replaces
            // would be undone within the transaction anyway.
            var last: [String: Int] = [:]
            last.reserveCapacity(rows.count)
            for (index, row) in rows.enumerated() { last[row.key] = index }
            var kept: [(index: Int, row: ViewRow)] = []
            kept.reserveCapacity(last.count)
            for (index, given) in rows.enumerated() where last[given.key] == index {
                kept.append((index, ViewRow(collection: collection, key: given.key, object: given.object,
                                            metadata: given.metadata)))
            }
            guard !kept.isEmpty else { return }
            // Grown once, not doubling (and rehashing) as the rows come.
            changedRows.reserveCapacity(changedRows.count + kept.count)
            var batching: [any ExtensionWriter] = []
            try forEachExtension { if $0.preparesBatches { batching.append($0) } }
            defer { for writer in batching { writer.endBatch() } }
            if !batching.isEmpty {
                // What the callbacks' invoke options may depend on: is the
                // row new? (The names are checked above: the table is asked
                // directly.) Nil for all when no view's options depend on it.
                let table = self.rows
                let asks = batching.contains { $0.batchNeedsExistingRowids }
                let pending = try kept.map { index, row in
                    SetBatch.Row(index: index,
                                          rowid: asks ? try table.rowid(forKey: row.key, inCollection: collection) : nil,
                                          row: row)
                }
                for writer in batching { try writer.prepareBatch(pending, writeContext) }
                // New rows are held and placed together at the end, when
                // no callback can look at a view meanwhile.
                var quiet = true
                try forEachExtension { quiet = quiet && $0.placesBatchWithoutCallbacks(inCollection: collection) }
                if quiet { for writer in batching { writer.holdNewRowsUntilBatchEnds() } }
            }
            for (position, (_, row)) in kept.enumerated() {
                let (rowid, inserted) = try store(row)
                try forEachExtension { try $0.rowSet(at: position, rowid, row, inserted: inserted, writeContext) }
            }
            for writer in batching { try writer.finishBatch(writeContext) }
        }
    }

    /// Writes a set's row to the row table and records the change: its
    /// rowid, and whether it was inserted (else updated).
    private func store(_ row: ViewRow) throws -> (rowid: Int64, inserted: Bool) {
        let (collection, key) = (row.collection, row.key)
        let rowKey = RowKey(collection: collection, key: key)
        let database = connection.database
        func insert() throws -> Int64? {
            try table.insertUnlessPresent(key, collection, object: row.object ?? [], metadata: row.metadata,
                                          after: database.largestRowid)
        }
        // Try first what the connection's last set did: a loop of new
        // rows then finds no row to update before each insert, and a
        // loop of updates tries no insert.
        var inserted = connection.lastSetInserted ? try insert() : nil
        if inserted == nil,
           let rowid = try table.update(key: key, collection: collection, object: row.object ?? [],
                                        metadata: row.metadata) {
            connection.lastSetInserted = false
            record(.set, rowKey, rowid)
            return (rowid, false)
        }
        if inserted == nil { inserted = try insert() }
        guard let rowid = inserted else {
            throw YDBError(.corrupt, "row \(collection)/\(key) is neither present nor insertable")
        }
        connection.lastSetInserted = true
        // Kept even if the transaction rolls back: an id is never
        // handed out twice.
        database.largestRowid = rowid
        record(.set, rowKey, rowid)
        logRecorder?.record(rowid, .set, rowKey, inserted: true)
        return (rowid, true)
    }

    /// Replaces the object of an existing row, keeping its metadata. No-op when absent.
    public func replaceObject(_ object: [UInt8], forKey key: String, inCollection collection: String) throws {
        try write(refusing: { try checkStorable(object: object, metadata: nil, key: key, collection: collection) }) {
            guard let rowid = try rowid(forKey: key, inCollection: collection) else { return }
            try table.update(rowid, object: object)
            try rowChanged(rowid, key, collection, .objectChanged, object: object)
        }
    }

    /// Replaces the metadata of an existing row (nil removes it). No-op when absent.
    public func replaceMetadata(_ metadata: [UInt8]?, forKey key: String, inCollection collection: String) throws {
        try write(refusing: { try checkStorable(object: nil, metadata: metadata, key: key, collection: collection) }) {
            guard let rowid = try rowid(forKey: key, inCollection: collection) else { return }
            try table.update(rowid, metadata: metadata)
            try rowChanged(rowid, key, collection, .metadataChanged, metadata: .some(metadata))
        }
    }

    /// Marks the object as changed without changing it (views and observers
    /// see an object change). No-op when the row is absent.
    public func touchObject(forKey key: String, inCollection collection: String) throws {
        try touch(key, collection, .objectTouched)
    }

    public func touchMetadata(forKey key: String, inCollection collection: String) throws {
        try touch(key, collection, .metadataTouched)
    }

    public func touchRow(forKey key: String, inCollection collection: String) throws {
        try touch(key, collection, [.objectTouched, .metadataTouched])
    }

    /// Touches many rows at once (object and metadata), as `touchRow` does
    /// each: every view runs its callbacks on them again (a filter that
    /// depends on the time or on other rows answers anew). Absent keys are
    /// skipped.
    public func touchRows(forKeys keys: [String], inCollection collection: String) throws {
        for key in keys { try touch(key, collection, [.objectTouched, .metadataTouched]) }
    }

    /// Touches every row that view `view` shows in `group`, as `touchRows`
    /// does: a whole group re-evaluated without changing its rows.
    public func touchRows(inGroup group: String, ofView view: String) throws {
        try write {
            guard let instance = viewInstance(named: view) else {
                throw YDBError(.notFound, "no view named '\(view)' is registered")
            }
            var rowids: [Int64] = []
            instance.state.group(group)?.forEach { _, rowid in
                rowids.append(rowid)
                return true
            }
            for rowid in rowids {
                guard let rowKey = try rows.rowKey(forRowid: rowid) else { continue }
                try rowChanged(rowid, rowKey.key, rowKey.collection, [.objectTouched, .metadataTouched])
            }
        }
    }

    private func touch(_ key: String, _ collection: String, _ kind: RowChangeKind) throws {
        try write {
            guard let rowid = try rowid(forKey: key, inCollection: collection) else { return }
            try rowChanged(rowid, key, collection, kind)
        }
    }

    /// Records a change to an existing row and tells the views. A value the
    /// caller just wrote is passed along, so only the other part is read back.
    private func rowChanged(_ rowid: Int64, _ key: String, _ collection: String, _ kind: RowChangeKind,
                            object: [UInt8]? = nil, metadata: [UInt8]?? = nil) throws {
        record(kind, RowKey(collection: collection, key: key), rowid)
        guard !state.extensions.isEmpty else { return }
        let missing: ViewFlavour = object != nil ? .metadata : metadata != nil ? .object : .row
        var row = try loadRow(rowid, missing)
        if let object { row.object = object }
        if let metadata { row.metadata = metadata }
        try forEachExtension { try $0.rowUpdated(rowid, row, kind, writeContext) }
    }

    public func removeObject(forKey key: String, inCollection collection: String) throws {
        try removeObjects(forKeys: [key], inCollection: collection)
    }

    public func removeObjects(forKeys keys: [String], inCollection collection: String) throws {
        try write {
            var removed: [(rowid: Int64, rowKey: RowKey)] = []
            for key in keys {
                guard try mayHaveRow(key, collection),
                      let rowid = try table.delete(key: key, collection: collection) else { continue }
                let rowKey = RowKey(collection: collection, key: key)
                record(.removed, rowKey, rowid)
                removed.append((rowid, rowKey))
            }
            guard !removed.isEmpty else { return }
            try forEachExtension { try $0.rowsRemoved(removed, writeContext) }
        }
    }

    /// Removes every row of `collection`.
    public func removeAllObjects(inCollection collection: String) throws {
        try write {
            try validateName(collection, "collection")
            let removed = try table.deleteAll(inCollection: collection)
            guard !removed.isEmpty else { return }
            changed = true
            removedCollections.insert(Name(collection))
            changedRows = changedRows.filter { !bytesEqual($0.key.collection, collection) }
            for (rowid, rowKey) in removed {
                changedRowids?[rowid, default: []].formUnion(.removed)
                logRecorder?.record(rowid, .removed, rowKey)
            }
            try forEachExtension { try $0.rowsRemoved(removed, writeContext) }
        }
    }

    /// Removes every row of every collection.
    public func removeAllObjectsInAllCollections() throws {
        try write {
            let removed = try table.deleteAll()
            guard !removed.isEmpty else { return }
            changed = true
            removedAll = true
            changedRows.removeAll()
            removedCollections.removeAll()
            for rowid in removed.rowids { changedRowids?[rowid, default: []].formUnion(.removed) }
            if logRecorder != nil {
                for (rowid, rowKey) in removed { logRecorder?.record(rowid, .removed, rowKey) }
            }
            try forEachExtension { try $0.allRemoved(keys: removed, writeContext) }
        }
    }

    // MARK: Extensions

    func forEachExtension(_ body: (any ExtensionWriter) throws -> Void) throws {
        if everyWriter == nil {
            // Room for every writer at once: grown one by one, the table
            // was rehashed several times a commit with many views.
            writers.reserveCapacity(state.extensions.count)
            everyWriter = state.extensions.writingOrder.compactMap { writer(for: $0) }
        }
        for writer in everyWriter! {
            try body(writer)
            if Tuning.checksInvariants { writer.checkAfterWrite() }
        }
    }

    /// The working copy of an extension, for reads inside this transaction.
    override func registeredExtension(named name: String) -> (any RegisteredExtension)? {
        writers[Name(name)]?.working ?? state.extensions[Name(name)]
    }

    /// The writer of extension `name` in this transaction, made on first use.
    func writer(named name: String) -> (any ExtensionWriter)? {
        writer(for: Name(name))
    }

    private func writer(for name: Name) -> (any ExtensionWriter)? {
        if let writer = writers[name] { return writer }
        guard let registered = state.extensions[name] else { return nil }
        let writer = registered.makeWriter()
        writers[name] = writer
        return writer
    }

    /// Adds (or replaces) an extension in this transaction: registration,
    /// and changing a view's grouping or sorting.
    func installWriter(_ writer: any ExtensionWriter) {
        everyWriter = nil
        extensionsChanged = true
        let registered = writer.working
        if replayed == nil { connection.database.clearReplayFailure(of: registered.name) }
        writers[Name(registered.name)] = writer
        state.extensions[Name(registered.name)] = registered
        state.extensions.orderMayHaveChanged()
        changed = true
    }

    func removeWriter(named name: String) {
        everyWriter = nil
        extensionsChanged = true
        writers.removeValue(forKey: Name(name))
        state.extensions[Name(name)] = nil
        changed = true
    }

    /// Runs an extension's work (a registration) with the transaction's
    /// failure rules.
    func extensionWork<T>(_ body: () throws -> T) throws -> T {
        try write(body)
    }
}
