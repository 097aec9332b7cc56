/// Keeps one view up to date during one read-write transaction: runs the
/// callbacks, moves rows in the working `ViewState`, owes their places to
/// the storage table (`StoragePlan`) and records the view log
/// (docs/behaviour.md, "Views"). The store reaches it as an
/// `ExtensionWriter` (`ViewExtension.swift`). Its other jobs are in their
/// own files: a `setObjects` batch (`ViewWriter+Batch.swift`), a
/// population (`ViewPopulation`), an asynchronous registration's catch-up
/// (`ViewWriter+CatchUp.swift`).
final class ViewWriter {
    var instance: ViewInstance
    /// The view as the transaction found it.
    let before: ViewState
    var entries = ViewLogEntries()
    var keys = RowKeys()
    // Group names are compared as bytes (`Name`), never as Strings.
    var loggedCreated: Set<Name> = []
    /// Groups a removal emptied (they may be filled again before the commit).
    var emptiedGroups: Set<Name> = []
    var wasReset = false
    var rowCache: SortingRowCache { instance.rowCache }
    /// What the transaction owes the view's table (`StoragePlan.swift`).
    var storage = StoragePlan()
    /// The `setObjects` batch under way (`ViewWriter+Batch.swift`).
    var batching = BatchState()
    /// Rows a catch-up took out of the view and has not placed again yet,
    /// with their group when it is not run again (`ViewWriter+CatchUp.swift`).
    var unplaced: [Int64: String?] = [:]
    /// Debug builds: the rows whose place changed since the last check,
    /// or all of them (`ViewWriter+Checks.swift`).
    var touchedRows: [Int64] = []
    var touchedAll = false
    /// Set by an asynchronous registration (`BackgroundRegistration.populate`):
    /// called every few thousand steps of a population with the steps done
    /// so far (one per row grouped, then one per row sorted). It reports
    /// progress, and throws to stop the population (cancellation).
    var populationTick: ((Int) throws -> Void)?
    /// Set by an asynchronous registration: the population's scan reads
    /// the rows in chunks, and calls this between them (with `more`) and
    /// after the last (without), when no statement is open, so that the
    /// registration's read snapshot moves on instead of pinning the
    /// write-ahead log for the whole scan.
    var populationPause: ((_ more: Bool) throws -> Void)?

    init(instance: ViewInstance) {
        self.instance = instance
        before = instance.state
    }

    var definition: View { instance.definition }

    /// Swaps in new callbacks for the same grouping and sorting (a
    /// re-registration with an unchanged version tag): nothing to redo.
    func replaceCallbacks(_ view: View) { instance.definition = view }
    /// `_read`/`_modify`, not get/set: a getter copies the state (a retain
    /// per tree) on every read, and a get/set pair would hand each mutation a
    /// second reference to the trees, so every change copied its whole path.
    var state: ViewState {
        _read { yield instance.state }
        _modify { yield &instance.state }
    }

    // MARK: Row events from the store

    func rowInserted(_ rowid: Int64, _ row: ViewRow, _ context: ExtensionWriteContext) throws {
        guard definition.allows(row.collection) else { return }
        guard let group = try runGrouping(row, context) else { return }
        try insert(rowid, row, into: group, context)
    }

    /// `row` carries the row's current object and metadata.
    func rowUpdated(_ rowid: Int64, _ row: ViewRow, _ kind: RowChangeKind,
                    _ context: ExtensionWriteContext) throws {
        guard definition.allows(row.collection) else { return }
        rowCache.forget(rowid)
        let rowKey = RowKey(collection: row.collection, key: row.key)
        let current = state.place(of: rowid)
        let newGroup = definition.grouping.options.isTriggered(by: kind) ? try runGrouping(row, context) : current?.group
        guard let newGroup else {
            if current != nil { try remove(rowid, rowKey, context) }
            return
        }
        guard let current else {
            try insert(rowid, row, into: newGroup, context)
            return
        }
        if !bytesEqual(current.group, newGroup) {
            try remove(rowid, rowKey, context)
            try insert(rowid, row, into: newGroup, context)
            return
        }
        let oldIndex = state.group(newGroup)!.index(of: current.label)!
        guard definition.sorting.options.isTriggered(by: kind) else {
            logUpdate(rowid, rowKey, newGroup, oldIndex, kind)
            return
        }
        let subject = try self.subject(row, in: newGroup, context)
        keepSortingRow(rowid, subject)
        if try fitsInPlace(subject, newGroup, oldIndex, context) {
            if let key = subject.sortKey, state.sortKey(inGroup: newGroup, label: current.label) != key {
                state.setSortKey(key, for: rowid)
                touched(rowid)
                try persist(rowid, newGroup, current.label, key, context)
            }
            logUpdate(rowid, rowKey, newGroup, oldIndex, kind)
            return
        }
        state.removeFromOrder(rowid: rowid)
        do {
            let newIndex = try position(of: subject, in: newGroup, context)
            if newIndex == oldIndex {
                // An inconsistent comparator can send it back where it was: the
                // old label still sits between the same neighbours.
                state.insert(rowid: rowid, group: newGroup, label: current.label, sortKey: subject.sortKey, moving: true)
                touched(rowid)
                if let key = subject.sortKey { try persist(rowid, newGroup, current.label, key, context) }
                logUpdate(rowid, rowKey, newGroup, oldIndex, kind)
                return
            }
            keys[rowid] = rowKey
            entries.append(.delete(rowid: rowid, group: newGroup, index: oldIndex))
            try place(rowid, rowKey, subject.sortKey, in: newGroup, at: newIndex, moving: true, context)
        } catch {
            // The transaction is poisoned, but may still be read.
            state.dropPlaceIfUnplaced(rowid: rowid)
            throw error
        }
    }

    /// Several rows were removed at once. Each group loses its rows from the
    /// bottom up, so the index logged for each delete is also its index before
    /// the removal — and cell-drawing dependencies mark the rows YapDatabase's
    /// would (it removes a batch from the end of each group too).
    func rowsRemoved(_ rows: [(rowid: Int64, rowKey: RowKey)], _ context: ExtensionWriteContext) throws {
        // One row has no order to find: no need to locate it first.
        if rows.count == 1 { return try remove(rows[0].rowid, rows[0].rowKey, context) }
        let placed = rows.compactMap { row in state.locate(rowid: row.rowid).map { (row, $0.index) } }
        for (row, _) in placed.sorted(by: { $0.1 > $1.1 }) {
            try remove(row.rowid, row.rowKey, context)
        }
    }

    /// Everything was removed. `keys` holds the (collection, key) of every
    /// row that existed, so the log can name the rows the view held.
    func allRemoved(keys allKeys: RowKeys, _ context: ExtensionWriteContext) throws {
        guard state.totalCount > 0 else { return }
        try reset(keys: allKeys, context)
    }

    /// Replaces grouping/sorting/tag; the rows stay until a population
    /// replaces them.
    func takeDefinition(_ view: View) {
        instance.definition = view
        instance.rowCache = SortingRowCache()
    }

    /// Moves the view to new, empty storage (`storageID`; nil: none): what
    /// it owed the old storage goes with it. `complete`: false when an
    /// asynchronous registration will store its rows, a chunk at a time.
    func replaceStorage(with storageID: Int64?, complete: Bool = true) {
        instance.storageID = storageID
        instance.unstored = UnstoredRows(tableIsComplete: complete)
        storage.forgetOwed()
    }

    /// Called by the transaction that stores the last chunk of an
    /// asynchronous registration's rows: from its commit on, commits may
    /// leave rows unstored.
    func storageIsComplete() {
        storage.completesTable()
    }

    // MARK: Finishing

    /// Logs groups that are empty at commit and returns the commit's log (nil
    /// when the view did nothing).
    func commitLog(snapshotBefore: UInt64, snapshot: UInt64) -> ViewCommitLog? {
        // Most commits create and empty no group: no set to build then.
        if wasReset || !emptiedGroups.isEmpty || !loggedCreated.isEmpty {
            var candidates = emptiedGroups.union(loggedCreated)
            if wasReset { candidates.formUnion(before.groupNames.map { Name($0) }) }
            for group in candidates.sorted() where state.group(group.value) == nil {
                if before.group(group.value) != nil || loggedCreated.contains(group) {
                    entries.append(.groupEmptied(group.value))
                }
            }
        }
        guard !entries.isEmpty else { return nil }
        return ViewCommitLog(viewName: instance.name, snapshotBefore: snapshotBefore, snapshot: snapshot,
                             before: before, after: state, entries: entries, keys: keys)
    }

    // MARK: Moving rows

    func insert(_ rowid: Int64, _ row: ViewRow, into group: String,
                        _ context: ExtensionWriteContext) throws {
        let subject = try self.subject(row, in: group, context)
        keepSortingRow(rowid, subject)
        let index = try position(of: subject, in: group, context)
        try place(rowid, RowKey(collection: row.collection, key: row.key), subject.sortKey, in: group, at: index,
                  context)
    }

    /// Puts a row (not in the view) at `index` of `group`: chooses its label
    /// (spreading out neighbours' labels when there is no room), stores it
    /// and logs the insert.
    /// `moving`: the row was taken out of this group's order by
    /// `ViewState.removeFromOrder` (an update that moves it).
    func place(_ rowid: Int64, _ rowKey: RowKey, _ sortKey: SortKey?, in group: String, at index: Int,
                       moving: Bool = false, _ context: ExtensionWriteContext) throws {
        // No local reference to the group's tree may outlive the reads
        // below: the insert would then copy the tree's whole path again.
        let (left, right, count) = state.group(group).map { tree in
            (index > 0 ? tree.element(at: index - 1)?.key : nil,
             index < tree.count ? tree.element(at: index)?.key : nil,
             tree.count + 1)
        } ?? (nil, nil, 1)
        var label: Int64
        if let free = OrderLabels.between(left, right) {
            label = free
        } else {
            let tree = state.group(group) ?? GroupTree(keyed: sortKey != nil)
            let spread = OrderLabels.respread(tree, insertingAt: index)
            var moved: [(rowid: Int64, label: Int64)] = []
            var position = spread.window.lowerBound
            tree.forEach(in: spread.window) { _, movedRowid in
                moved.append((movedRowid, spread.labels[position - spread.window.lowerBound]))
                position += 1
                return true
            }
            state.relabel(group: group, rows: moved)
            for entry in moved {
                touched(entry.rowid)
                try persist(entry.rowid, group, entry.label, state.sortKey(of: entry.rowid), context)
            }
            label = spread.newLabel
        }
        if state.group(group) == nil { logCreatedIfNew(group) }
        state.insert(rowid: rowid, group: group, label: label, sortKey: sortKey, moving: moving)
        touched(rowid)
        try persist(rowid, group, label, sortKey, context)
        keys[rowid] = rowKey
        entries.append(.insert(rowid: rowid, group: group, index: index))
        instance.hint = index == count - 1 ? .end(group) : index == 0 ? .beginning(group) : .none
    }

    func remove(_ rowid: Int64, _ rowKey: RowKey, _ context: ExtensionWriteContext) throws {
        guard let (group, index, emptied) = state.remove(rowid: rowid) else { return }
        touched(rowid)
        rowCache.forget(rowid)
        storage.owe(rowid, .removed, id: instance.storageID)
        keys[rowid] = rowKey
        entries.append(.delete(rowid: rowid, group: group, index: index))
        // Only a group this removal emptied may be empty at the commit: a
        // later removal that empties another records that one.
        if emptied { emptiedGroups.insert(Name(group)) }
    }

    func reset(keys allKeys: RowKeys, _ context: ExtensionWriteContext) throws {
        state.places.forEach { rowid, _ in
            if let rowKey = allKeys[rowid] { keys[rowid] = rowKey }
            return true
        }
        try clearStorage(context)
        state = ViewState()
        rowCache.removeAll()
        instance.hint = .none
        entries.append(.reset)
        wasReset = true
        touchedAll = true
    }

    /// Owes a row's place to the table; `sortKey` is its key (nil for a
    /// comparator).
    func persist(_ rowid: Int64, _ group: String, _ label: Int64, _ sortKey: SortKey?,
                 _ context: ExtensionWriteContext) throws {
        storage.owe(rowid, .put(group: group, label: label, sortKey: sortKey), id: instance.storageID)
    }

    /// Empties the view's table, for a view rewritten from scratch.
    func clearStorage(_ context: ExtensionWriteContext) throws {
        try storage.clear(id: instance.storageID, context.storage)
    }

    func logUpdate(_ rowid: Int64, _ rowKey: RowKey, _ group: String, _ index: Int, _ kind: RowChangeKind) {
        var changes: RowChangeFlags = []
        if !kind.isDisjoint(with: [.objectChanged, .objectTouched]) { changes.insert(.object) }
        if !kind.isDisjoint(with: [.metadataChanged, .metadataTouched]) { changes.insert(.metadata) }
        keys[rowid] = rowKey
        entries.append(.update(rowid: rowid, group: group, index: index, changes: changes))
    }

    func logCreatedIfNew(_ group: String) {
        guard wasReset || before.group(group) == nil, !loggedCreated.contains(Name(group)) else { return }
        loggedCreated.insert(Name(group))
        entries.append(.groupCreated(group))
    }

    // MARK: Sorting

    /// What a row is placed by: the row itself (comparator form) or its key.
    enum Subject {
        case row(ViewRow)
        case key(SortKey)

        var sortKey: SortKey? {
            if case .key(let key) = self { return key }
            return nil
        }
    }

    func subject(_ row: ViewRow, in group: String, _ context: ExtensionWriteContext) throws -> Subject {
        let narrowed = row.narrowed(to: definition.sorting.flavour)
        switch definition.sorting.form {
        case .comparator: return .row(narrowed)
        case .key(let key):
            if let answered = batching.answered.sortKey { return .key(answered) }
            return .key(try ViewCallbacks.run(instance.name, "sorting") { try key(context.transaction, group, narrowed) })
        }
    }

    /// A view that keeps its sorting rows in memory keeps a row it places
    /// as its comparator will read it (the row is never compared with
    /// itself: it is out of its group's order while it is placed).
    func keepSortingRow(_ rowid: Int64, _ subject: Subject) {
        guard definition.keepsSortingRowsInMemory, case .row(let row) = subject else { return }
        rowCache.forget(rowid)
        _ = rowCache.store(row, for: rowid, unbounded: true)
    }

    /// The upper-bound index for `subject` in `group`: after every equal row.
    /// A key is searched among the group's keys (`GroupTree.keyedRows`,
    /// bytes compared in memory), a row through the comparator.
    func position(of subject: Subject, in group: String, _ context: ExtensionWriteContext) throws -> Int {
        switch subject {
        case .key(let key):
            guard let keyed = state.group(group)?.keyedRows else { return 0 }
            return upperBound(in: keyed, of: group) { Self.order(key, $0.key) == .ascending }
        case .row(let row):
            guard let rows = state.group(group)?.rows else { return 0 }
            return try withComparisons(of: row, in: group, context) { compare in
                try upperBound(in: rows, of: group) { try compare($0) == .ascending }
            }
        }
    }

    /// The index in `tree` (a group's rows or keyed rows) of the first element
    /// `goesBefore` says the placed row sorts before. Tries the spot of the
    /// last insert first (appends and prepends cost one comparison), then a
    /// binary search in one descent of the tree.
    func upperBound<Value>(in tree: CountedTree<Int64, Value>, of group: String,
                                   _ goesBefore: (Value) throws -> Bool) rethrows -> Int {
        guard !tree.isEmpty else { return 0 }
        switch instance.hint {
        case .end(let last) where bytesEqual(last, group):
            if try !goesBefore(tree.last!.value) { return tree.count }
        case .beginning(let first) where bytesEqual(first, group):
            if try goesBefore(tree.first!.value) { return 0 }
        default:
            break
        }
        return try tree.firstIndex(where: goesBefore)
    }

    /// Whether an updated row still sorts between its neighbours.
    func fitsInPlace(_ subject: Subject, _ group: String, _ index: Int,
                             _ context: ExtensionWriteContext) throws -> Bool {
        switch subject {
        case .key(let key):
            return Self.fits(at: index, in: state.group(group)!.keyedRows!) { Self.order(key, $0.key) }
        case .row(let row):
            return try withComparisons(of: row, in: group, context) { compare in
                try Self.fits(at: index, in: state.group(group)!.rows!, compare)
            }
        }
    }

    /// Whether `order` (the placed row against an element of `tree`) puts
    /// the row at `index` between the elements before and after it.
    private static func fits<Value>(at index: Int, in tree: CountedTree<Int64, Value>,
                                    _ order: (Value) throws -> ViewOrder) rethrows -> Bool {
        if index > 0, try order(tree.element(at: index - 1)!.value) == .ascending { return false }
        if index + 1 < tree.count, try order(tree.element(at: index + 1)!.value) == .descending { return false }
        return true
    }

    private static func order(_ key: SortKey, _ other: SortKey) -> ViewOrder {
        let order = SortKey.compare(key, other)
        return order < 0 ? .ascending : order == 0 ? .same : .descending
    }

    /// Runs `body` with the order of `row` (being placed in `group`) against
    /// the row with a given id, by the comparator: the other row read back
    /// once and kept in `rowCache`, and through the sorting's fixed form
    /// when the binding has one (`ViewSorting.FixedComparator`: `row`
    /// converted once, not once a comparison).
    func withComparisons<T>(of row: ViewRow, in group: String, _ context: ExtensionWriteContext,
                                    _ body: ((Int64) throws -> ViewOrder) throws -> T) throws -> T {
        guard case .comparator(let compare) = definition.sorting.form else { preconditionFailure("form changed") }
        let name = instance.name
        guard let fixed = definition.sorting.fixed else {
            return try body { otherRowid in
                let other = try sortingRow(otherRowid, context)
                return try ViewCallbacks.run(name, "sorting") { try compare(context.transaction, group, row, other.row) }
            }
        }
        // What `body` throws (a row's load, or a comparison's failure,
        // already named) passes through the binding untouched.
        var outcome: Result<T, Error>?
        try ViewCallbacks.run(name, "sorting") {
            try fixed(try context.transaction, group, row) { compareFixed in
                // `body` calls it only before it returns, as `fixed` requires.
                withoutActuallyEscaping(compareFixed) { compareFixed in
                    outcome = Result {
                        try body { otherRowid in
                            let other = try sortingRow(otherRowid, context)
                            return try ViewCallbacks.run(name, "sorting") { try compareFixed(other.row) }
                        }
                    }
                }
            }
        }
        guard let outcome else { throw YDBError(.callbackFailed, "view '\(name)': sorting never compared") }
        return try outcome.get()
    }

    /// A row as the sorting callback reads it, from the sorting row cache
    /// or else from the row table (then kept in the cache).
    func sortingRow(_ rowid: Int64, _ context: ExtensionWriteContext) throws -> SortingRowCache.Entry {
        if let cached = rowCache.entry(rowid) { return cached }
        return rowCache.store(try context.rows.loadRow(rowid, definition.sorting.flavour), for: rowid,
                              unbounded: definition.keepsSortingRowsInMemory)
    }

    func runGrouping(_ row: ViewRow, _ context: ExtensionWriteContext) throws -> String? {
        if let answered = batching.answered.group { return answered }   // checked by `prepareBatch`
        return try ViewCallbacks.group(instance.name, definition.grouping, row, context)
    }
}
