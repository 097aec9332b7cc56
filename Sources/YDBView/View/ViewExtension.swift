/// How views plug into the store: a registered view is a
/// `RegisteredExtension` (`ViewInstance`), its writer an `ExtensionWriter`,
/// its commit log the commit's log for its name, and the asynchronous
/// registrations a `CommitFollower`. The rest of the view feature reaches
/// the store's generic parts through the accessors here.
extension ViewInstance: RegisteredExtension {
    func makeWriter() -> any ExtensionWriter { ViewWriter(instance: self) }
    var releaseHook: ReleaseHook? { definition.releaseHook }
    var deferredWrites: (any DeferredWrites)? { storageID.map { DeferredViewRows(id: $0, waiting: unstored) } }
    /// A filtered view's parent (and a search view's index) hear of a row
    /// change first.
    var dependencies: [String] { definition.filtering?.dependencies ?? [] }
    var versionTag: String? { definition.versionTag }
    func sharedImage(at snapshot: UInt64) -> (any DeferredWrites)? {
        definition.isPersistent ? SharedViewImage(instance: self, snapshot: snapshot) : nil
    }
}

extension ViewWriter: ExtensionWriter {
    var working: any RegisteredExtension { instance }

    /// Writes what the transaction owes the view's table, or leaves it
    /// waiting (`StoragePlan.swift`).
    func prepareCommit(_ handle: SQLiteHandle) throws {
        try storage.save(id: instance.storageID, instance.unstored, handle)
    }

    func finish(snapshotBefore: UInt64, snapshot: UInt64) -> (any RegisteredExtension, (any Sendable)?) {
        let log = commitLog(snapshotBefore: snapshotBefore, snapshot: snapshot)
        return (instance, log)
    }

    func committed() -> Bool {
        rowCache.transactionEnded()
        return storage.committed(instance.unstored)
    }

    /// A persistent view loads the last image another process stored, when
    /// the log holds every commit since (`viewFromSharedImage`: callbacks
    /// for the rows those changed only); any other view populates from
    /// scratch, logged as a reset and one insert per row. (The connections
    /// reload either way: the image's log is the reset alone.)
    func rebuildFromRows(_ context: ExtensionWriteContext) throws {
        if let transaction = try context.transaction as? ReadWriteTransaction,
           let image = try transaction.viewFromSharedImage(definition, name: instance.name) {
            if state.totalCount > 0 { try reset(keys: [:], context) }
            state = image.state
            instance.rowCache = SortingRowCache()
            instance.hint = .none
            return
        }
        try repopulate(context)
    }

    /// As an asynchronous registration catches up (`catchUp`): every row
    /// that must move is taken out before any is placed again, so a
    /// comparator never compares a row whose place disagrees with its
    /// contents (all the rows changed at once, as the other process left
    /// them). The rows the view knew are named first; new ones are not.
    func followRows(_ rows: [LoggedCommit.Row], _ context: ExtensionWriteContext) throws {
        var changes: [Int64: RowChangeKind] = [:]
        changes.reserveCapacity(rows.count)
        for row in rows {
            changes[row.rowid, default: []].formUnion(row.kind)
            if !row.inserted { keys[row.rowid] = row.rowKey }
        }
        try catchUp(changes, context)
    }

    /// The cache may hold rows as the transaction changed them, and the
    /// storage writes it owed are void.
    func rolledBack() {
        rowCache.transactionRolledBack()
        storage.rolledBack()
    }
}

extension ReadTransaction {
    /// The view `name` as this transaction sees it (nil: no such view).
    func viewInstance(named name: String) -> ViewInstance? {
        registeredExtension(named: name) as? ViewInstance
    }
}

extension ReadWriteTransaction {
    /// The writer of view `name` in this transaction, made on first use.
    func viewWriter(named name: String) -> ViewWriter? {
        writer(named: name) as? ViewWriter
    }
}

extension CommitNotification {
    /// What the commit did to the view registered as `name` (nil: nothing).
    public func viewLog(named name: String) -> ViewCommitLog? { extensionLogs[Name(name)] as? ViewCommitLog }

    /// Names of the views the commit changed, in byte order.
    public var changedViewNames: [String] {
        extensionLogs.compactMap { $0.value is ViewCommitLog ? $0.key : nil }.sorted().map(\.value)
    }
}

extension Database {
    /// The asynchronous registrations under way (none once closed).
    var registrations: PendingRegistrations {
        follower(PendingRegistrations.self) ?? .ofClosedDatabase
    }
}
