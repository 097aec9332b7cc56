/// The seam between the store and everything that follows its rows: views
/// today (`View/`), and any other kind of extension later (a filtered or
/// search view, a log applier for other processes). YapDatabase's own
/// extension contract, in Swift terms. The store knows extensions only
/// through these protocols; an extension knows the store's public types.
///
/// Three parts, each with one job:
/// - `RegisteredExtension`: an extension as of one snapshot, kept in the
///   published state (read by every transaction, never changed once
///   published);
/// - `ExtensionWriter`: follows one read-write transaction, told of every
///   row event and of each step of the commit;
/// - `CommitFollower`: work outside the write path that must see every
///   commit's row changes (background registrations).
///
/// The database's own thread runs an extension's deferred writes
/// (`RegisteredExtension.deferredWrites`) once commits pause, and before
/// the database closes.
protocol RegisteredExtension {
    var name: String { get }
    /// Starts following a read-write transaction from this snapshot.
    func makeWriter() -> any ExtensionWriter
    /// Run when the database closes (releases the extension's callbacks).
    var releaseHook: ReleaseHook? { get }
    /// The extension's id in the registry table that lists it
    /// (`storageRegistry`; `Schema.markStoredExtensionsStale`), nil when it
    /// is not stored.
    var storageID: Int64? { get }
    /// Which registry table lists it: the ids of two tables may be equal.
    var storageRegistry: StoredExtensionRegistry { get }
    /// What kind of extension it is, for messages ("a full-text index").
    var kindDescription: String { get }
    /// What committed transactions left for the database's thread to write.
    var deferredWrites: (any DeferredWrites)? { get }
    /// Extensions whose row events this one's callbacks read, so they must
    /// hear of a row change first (a search view reads its full-text
    /// index): every transaction tells extensions after those they name.
    /// The definition's version tag, for the kinds that have one: in
    /// shared mode, every process registering the name must use the same.
    var versionTag: String? { get }
    /// Shared mode: what to write when the database closes so that a
    /// later process can load the extension instead of building it (nil:
    /// nothing).
    func sharedImage(at snapshot: UInt64) -> (any DeferredWrites)?
    var dependencies: [String] { get }
}

extension RegisteredExtension {
    var dependencies: [String] { [] }
    var versionTag: String? { nil }
    func sharedImage(at snapshot: UInt64) -> (any DeferredWrites)? { nil }
}

extension RegisteredExtension {
    /// Views, the first kind, are listed in `ydb_views`; other kinds say
    /// where they are.
    var storageRegistry: StoredExtensionRegistry { .views }
    var kindDescription: String { "another kind of extension" }
}

/// One extension's part of one read-write transaction.
///
/// Row events come after the row table is written, in the order of the
/// writes; a thrown error poisons the transaction. Then, at a commit:
/// `prepareCommit` (write what the extension owes its tables), `check`
/// (debug builds), `finish` (its new snapshot and the commit's log), and
/// after SQLite's `COMMIT`, `committed`. A rollback calls `rolledBack`.
protocol ExtensionWriter: AnyObject {
    /// The extension as this transaction has changed it so far: what reads
    /// inside the transaction see.
    var working: any RegisteredExtension { get }

    func rowInserted(_ rowid: Int64, _ row: ViewRow, _ context: ExtensionWriteContext) throws
    /// `row` carries the row's current object and metadata.
    func rowUpdated(_ rowid: Int64, _ row: ViewRow, _ kind: RowChangeKind, _ context: ExtensionWriteContext) throws
    func rowsRemoved(_ rows: [(rowid: Int64, rowKey: RowKey)], _ context: ExtensionWriteContext) throws
    /// Every row of every collection was removed; `keys` names them.
    func allRemoved(keys: RowKeys, _ context: ExtensionWriteContext) throws

    /// A `setObjects` batch (see `SetBatch`): before any of its rows is
    /// stored, each row as it is stored, and at its end.
    /// Whether `prepareBatch` does anything, and whether it needs the
    /// rowids of the batch's rows that exist already.
    var preparesBatches: Bool { get }
    var batchNeedsExistingRowids: Bool { get }
    /// Whether placing a batch's rows of `collection` runs no user code.
    func placesBatchWithoutCallbacks(inCollection collection: String) -> Bool
    func prepareBatch(_ rows: [SetBatch.Row], _ context: ExtensionWriteContext) throws
    /// Set when no extension's callbacks can run while the batch's rows
    /// are placed: new rows may then be placed together at its end.
    func holdNewRowsUntilBatchEnds()
    func rowSet(at position: Int, _ rowid: Int64, _ row: ViewRow, inserted: Bool,
                _ context: ExtensionWriteContext) throws
    func finishBatch(_ context: ExtensionWriteContext) throws
    /// The batch is over, placed or failed.
    func endBatch()

    /// Debug builds: after each row event, a check proportional to what
    /// the event changed.
    func checkAfterWrite()
    /// Writes what the transaction owes the extension's tables, in it.
    func prepareCommit(_ handle: SQLiteHandle) throws
    /// Debug builds, before the commit: the extension agrees with itself
    /// and with its tables.
    func checkBeforeCommit(_ handle: SQLiteHandle, _ database: Database) throws
    /// The extension's new snapshot and what the commit did to it (nil:
    /// nothing), for `CommitNotification.extensionLogs`.
    func finish(snapshotBefore: UInt64, snapshot: UInt64) -> (any RegisteredExtension, (any Sendable)?)
    /// SQLite committed. True when it left deferred writes waiting.
    func committed() -> Bool
    func rolledBack()

    /// Builds the extension again from the rows as `context` reads them: in
    /// shared mode, this process missed commits of others that the commit
    /// log no longer holds (`ReadWriteTransaction.replayMissedCommits`).
    func rebuildFromRows(_ context: ExtensionWriteContext) throws

    /// Shared mode: another process's commit changed `rows` (every row id,
    /// how, whether it inserted it, and its names). Brings the extension
    /// forward from the rows as `context` reads them now; a row no longer
    /// there has left (`ReadWriteTransaction+Replay.swift`).
    func followRows(_ rows: [LoggedCommit.Row], _ context: ExtensionWriteContext) throws
}

/// Writes an extension's committed transactions deferred, all at once, on
/// the database's thread (`Database.writeDeferred`).
protocol DeferredWrites {
    var owesWrites: Bool { get }
    /// Writes them inside the caller's transaction on `handle`.
    func write(_ handle: SQLiteHandle) throws
    /// That transaction committed.
    func written()
}

/// Background work that must see the row changes of every commit
/// (`Database.commit`), made on first use by the feature that needs it
/// (`Database.follower(_:)`).
protocol CommitFollower: AnyObject, Sendable {
    init()
    /// Whether commits must record their row changes by row id now.
    var isRecording: Bool { get }
    func record(_ rows: [Int64: RowChangeKind], snapshot: UInt64)
    /// The database is closing: stop at the next step; no new work starts.
    func stop()
    /// Waits until the work stopped (after the database closed its
    /// connections; never on a thread that holds the write lock).
    func waitUntilStopped()
}

/// What a `setObjects` batch tells extensions before storing its rows.
enum SetBatch {
    /// One row of the batch before it is stored: its position in the
    /// batch, its rowid when it exists already (always nil unless some
    /// extension `batchNeedsExistingRowids`), and the row.
    struct Row {
        let index: Int
        let rowid: Int64?
        let row: ViewRow
    }
}

/// An extension that does nothing special with batches: each row is an
/// insert or an update.
extension ExtensionWriter {
    var preparesBatches: Bool { false }
    var batchNeedsExistingRowids: Bool { false }
    func placesBatchWithoutCallbacks(inCollection collection: String) -> Bool { true }
    func prepareBatch(_ rows: [SetBatch.Row], _ context: ExtensionWriteContext) throws {}
    func holdNewRowsUntilBatchEnds() {}
    func rowSet(at position: Int, _ rowid: Int64, _ row: ViewRow, inserted: Bool,
                _ context: ExtensionWriteContext) throws {
        if inserted {
            try rowInserted(rowid, row, context)
        } else {
            try rowUpdated(rowid, row, .set, context)
        }
    }
    func finishBatch(_ context: ExtensionWriteContext) throws {}
    func endBatch() {}
    func rebuildFromRows(_ context: ExtensionWriteContext) throws {
        throw YDBError(.error, "'\(working.name)' (\(working.kindDescription)) cannot be rebuilt from the rows")
    }
    func followRows(_ rows: [LoggedCommit.Row], _ context: ExtensionWriteContext) throws {
        throw YDBError(.error, "'\(working.name)' (\(working.kindDescription)) cannot follow other processes' commits")
    }
}
