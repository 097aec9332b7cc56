/// Keeps one view up to date during one read-write transaction: runs the
/// callbacks, moves rows in the working `ViewState`, writes the storage table
/// and records the view log (docs/behaviour.md, "Views").
final class ViewWriter {
    var instance: ViewInstance
    /// The view as the transaction found it.
    private let before: ViewState
    private var entries = ViewLogEntries()
    private var keys = RowKeys()
    // Group names are compared as bytes (`Name`), never as Strings.
    private var loggedCreated: Set<Name> = []
    /// Groups a removal emptied (they may be filled again before the commit).
    private var emptiedGroups: Set<Name> = []
    private var wasReset = false
    private var rowCache: SortingRowCache { instance.rowCache }
    /// Storage writes this transaction owes, by rowid: a row's last place,
    /// or its removal. Collected, not written as they happen: at the commit
    /// they join the rows earlier commits left unstored, and are written
    /// with them, in rowid order and 64 rows a statement, or left with them
    /// (`saveStorage`). A transaction that changes many rows runs neither
    /// a statement per change nor two writes of one row (a bulk insert
    /// spent a sixth of its time on those statements).
    private var unsaved: [Int64: UnstoredRows.Row] = [:]
    /// The view's storage table was emptied in this transaction (it is
    /// rewritten from scratch): the rows earlier commits left unstored no
    /// longer apply.
    private var storageCleared = false
    /// What the commit does with the unstored rows, once it succeeded.
    private var storageDecision = StorageDecision.none
    /// An asynchronous registration stored the view's last rows in this
    /// transaction (`storageIsComplete`).
    private var completesStorage = false
    private enum StorageDecision {
        /// Nothing to store.
        case none
        /// This commit wrote them all.
        case written
        /// They wait, with this transaction's.
        case waiting
    }
    /// What a batch callback already answered for the row being placed
    /// (`prepareBatch`): `runGrouping` and `subject` take it instead of
    /// calling back. Set only around that row's `rowSet(at:…)`.
    private var answered = Answered()
    /// `prepareBatch`'s answers, one per row of the batch.
    private var batchAnswers: [Answered] = []
    /// The batch's new rows, by group (the groups in the order met), each
    /// in batch order: placed together when the batch ends
    /// (`placeHeldRows`). Only while `holdsNewRows`. Each one's insert is
    /// logged when it comes, as a loop logs it; its index there is filled
    /// in when it is placed.
    private var heldRows: [Name: [HeldRow]] = [:]
    private var heldGroups: [String] = []
    private struct HeldRow {
        let rowid: Int64
        let rowKey: RowKey
        let key: SortKey
        /// Its insert's position in `entries`.
        let entry: Int
    }
    /// Set by the batch's transaction when no callback can run while the
    /// batch's rows are placed (`placesBatchWithoutCallbacks`, for every
    /// view): nothing then reads a group before the batch ends.
    var holdsNewRows = false
    private struct Answered {
        /// nil: not answered (the grouping runs); `.some(nil)`: no group.
        var group: String??
        var sortKey: SortKey?
    }
    /// Set by an asynchronous registration (`AsyncRegistration.swift`):
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
    /// Rows per chunk of such a scan.
    static let populationChunk = 10_000

    init(instance: ViewInstance) {
        self.instance = instance
        before = instance.state
    }

    private var definition: View { instance.definition }

    /// Swaps in new callbacks for the same grouping and sorting (a
    /// re-registration with an unchanged version tag): nothing to redo.
    func replaceCallbacks(_ view: View) { instance.definition = view }
    /// `_read`/`_modify`, not get/set: a getter copies the state (a retain
    /// per tree) on every read, and a get/set pair would hand each mutation a
    /// second reference to the trees, so every change copied its whole path.
    private var state: ViewState {
        _read { yield instance.state }
        _modify { yield &instance.state }
    }

    // MARK: Row events from the store

    func rowInserted(_ rowid: Int64, _ row: ViewRow, _ context: ViewWriteContext) throws {
        guard definition.allows(row.collection) else { return }
        guard let group = try runGrouping(row, context) else { return }
        try insert(rowid, row, into: group, context)
    }

    /// `row` carries the row's current object and metadata.
    func rowUpdated(_ rowid: Int64, _ row: ViewRow, _ kind: RowChangeKind,
                    _ context: ViewWriteContext) throws {
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
        if try fitsInPlace(subject, newGroup, oldIndex, context) {
            if let key = subject.sortKey, state.sortKey(inGroup: newGroup, label: current.label) != key {
                state.setSortKey(key, for: rowid)
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

    /// Asks the definition's batch callbacks (bindings,
    /// `ViewGrouping.Batch`) for what placing the rows of a `setObjects`
    /// batch will need, before any of them is stored: the groups of the
    /// rows whose grouping would run, then the keys of the rows whose sort
    /// key would be asked for. The same invoke options decide which rows,
    /// so each callback runs for exactly the rows it would have run for
    /// one by one; `rowSet(at:…)` then places each row as `rowInserted`
    /// and `rowUpdated` do, with these answers. Without batch callbacks
    /// it asks nothing, and the rows' callbacks run as they are placed.
    func prepareBatch(_ rows: [PendingRow], _ context: ViewWriteContext) throws {
        batchAnswers = []
        guard let groupBatch = definition.grouping.batch else { return }
        let regroups = regroupsOnSet
        let allowed = rows.indices.filter { definition.allows(rows[$0].row.collection) }
        // The groups: asked for every new row, and for every existing one
        // whose grouping runs on a set.
        var groups: [String??] = Array(repeating: nil, count: rows.count)
        let grouped = allowed.filter { rows[$0].rowid == nil || regroups }
        if !grouped.isEmpty {
            let flavour = definition.grouping.flavour
            let asked = grouped.map { BatchedRow(index: rows[$0].index, group: "", row: rows[$0].row.narrowed(to: flavour)) }
            let answers = try askGroups(asked, groupBatch, context)
            for (position, answer) in zip(grouped, answers) { groups[position] = .some(answer) }
        }
        // The keys: asked for every row that lands in a group it is not in,
        // and for every row staying in its group whose sorting runs on a set.
        var keys: [SortKey?] = Array(repeating: nil, count: rows.count)
        if let keyBatch = definition.sorting.keyBatch {
            let resorts = resortsOnSet
            let flavour = definition.sorting.flavour
            var keyed: [Int] = []
            var asked: [BatchedRow] = []
            for position in allowed {
                let current = rows[position].rowid.flatMap { state.place(of: $0) }
                guard let group = groups[position] ?? current?.group else { continue }
                guard resorts || current == nil || !bytesEqual(current!.group, group) else { continue }
                keyed.append(position)
                asked.append(BatchedRow(index: rows[position].index, group: group,
                                        row: rows[position].row.narrowed(to: flavour)))
            }
            for (position, answer) in zip(keyed, try askKeys(asked, keyBatch, context)) { keys[position] = answer }
        }
        batchAnswers = zip(groups, keys).map { Answered(group: $0, sortKey: $1) }
    }

    /// Places row `position` of the batch `prepareBatch` was given, just
    /// stored (`inserted`: it was new), with the answers asked for it.
    func rowSet(at position: Int, _ rowid: Int64, _ row: ViewRow, inserted: Bool,
                _ context: ViewWriteContext) throws {
        if position < batchAnswers.count { answered = batchAnswers[position] }
        defer { answered = Answered() }
        if holdsNewRows, inserted, definition.allows(row.collection),
           case .some(.some(let group)) = answered.group, let key = answered.sortKey {
            let name = Name(group)
            if heldRows[name] == nil {
                heldGroups.append(group)
                if state.group(group) == nil { logCreatedIfNew(group) }
            }
            let rowKey = RowKey(collection: row.collection, key: row.key)
            keys[rowid] = rowKey
            entries.append(.insert(rowid: rowid, group: group, index: 0))
            heldRows[name, default: []].append(HeldRow(rowid: rowid, rowKey: rowKey, key: key, entry: entries.count - 1))
            return
        }
        // An update may move a row into a group whose new rows are held:
        // they go in first, as they came first.
        if !inserted { try placeHeldRows(context) }
        if inserted {
            try rowInserted(rowid, row, context)
        } else {
            try rowUpdated(rowid, row, .set, context)
        }
    }

    /// Whether `prepareBatch` asks anything of this view.
    var hasBatchCallbacks: Bool { definition.grouping.batch != nil }

    /// Whether placing a batch's rows in this view calls back no user code:
    /// its batch forms answered every group and key (the sort-key form
    /// with both batch callbacks), or the collection is not the view's.
    func placesBatchWithoutCallbacks(inCollection collection: String) -> Bool {
        !definition.allows(collection) || (definition.grouping.batch != nil && definition.sorting.keyBatch != nil)
    }

    /// The batch's rows are all set: the held ones are placed.
    func finishBatch(_ context: ViewWriteContext) throws { try placeHeldRows(context) }

    /// Places the held new rows of each group. Nothing else changed the
    /// group since the batch began, so when they are many (an eighth of
    /// the group or more) they are sorted by key once (ties in batch order,
    /// where a loop of upper-bound inserts puts them, after the group's
    /// equal rows) and merged with the group's rows into a tree built at
    /// once, as a population builds one, instead of searched for and
    /// inserted one at a time; the rows already there keep their labels.
    /// Otherwise (or when the labels have no room) they are placed one by
    /// one. Either way the log already holds what a loop of one-row
    /// inserts logs, in the same order, and each insert gets the index its
    /// row had when it came, so changesets, flexible ranges and
    /// dependencies see the same history.
    private func placeHeldRows(_ context: ViewWriteContext) throws {
        guard !heldGroups.isEmpty else { return }
        for group in heldGroups {
            let rows = heldRows[Name(group)]!
            if rows.count * 8 < (state.group(group)?.count ?? 0) || !merge(rows, into: group) {
                RarePaths.shared.count(\.heldRowsPlacedSingly)
                for row in rows {
                    let index = try position(of: .key(row.key), in: group, context)
                    // The group has rows: `place` logs the insert alone,
                    // and it goes where the row's waits.
                    try place(row.rowid, row.rowKey, row.key, in: group, at: index, context)
                    entries.moveLast(to: row.entry)
                }
            }
        }
        heldGroups = []
        heldRows = [:]
        if Tuning.checksInvariants { checkInvariants() }
    }

    /// `placeHeldRows`' merge of `rows` (in batch order) into `group`;
    /// false, changing nothing, when some run of them has no room for
    /// labels between the group's rows.
    private func merge(_ rows: [HeldRow], into group: String) -> Bool {
        // The group's rows, and the new ones sorted with each one's batch
        // position where its rowid goes.
        var existing: [(label: Int64, row: KeyedRow)] = []
        state.group(group)?.keyedRows!.forEach { label, row in
            existing.append((label, row))
            return true
        }
        var order = rows.indices.map { KeyedRow(key: rows[$0].key, rowid: Int64($0)) }
        KeyOrder.sort(&order)
        // Merged: a new row goes after the group's rows with an equal key.
        // Each run of new rows between two of the group's gets labels in
        // the gap between theirs.
        var merged: [(label: Int64, row: KeyedRow)] = []
        merged.reserveCapacity(existing.count + order.count)
        var label = [Int64](repeating: 0, count: rows.count)
        var mergedPosition = [Int](repeating: 0, count: rows.count)
        var next = 0
        for slot in 0...existing.count {
            let right = slot < existing.count ? existing[slot] : nil
            var end = next
            while end < order.count, right.map({ SortKey.compare(order[end].key, $0.row.key) < 0 }) ?? true { end += 1 }
            if end > next {
                guard let labels = OrderLabels.spread(end - next, between: merged.last?.label, and: right?.label) else {
                    return false
                }
                for (offset, entry) in order[next..<end].enumerated() {
                    let batchPosition = Int(entry.rowid)
                    label[batchPosition] = labels[offset]
                    mergedPosition[batchPosition] = merged.count
                    merged.append((labels[offset], KeyedRow(key: entry.key, rowid: rows[batchPosition].rowid)))
                }
                next = end
            }
            if let right { merged.append(right) }
        }
        RarePaths.shared.count(\.heldGroupPlacements)
        if !existing.isEmpty { RarePaths.shared.count(\.heldMergesIntoRows) }
        state.replaceGroup(group, GroupTree(sortedKeyed: merged.lazy.map { ($0.label, $0.row) }),
                           adding: rows.indices.map { (rows[$0].rowid, label[$0]) })
        // Each row's index when a loop would have inserted it: the group's
        // rows before it (its merged position less the new rows before it)
        // and the batch's earlier rows before it, counted in a Fenwick tree
        // over the new rows' ranks.
        var rank = [Int](repeating: 0, count: rows.count)
        for (position, entry) in order.enumerated() { rank[Int(entry.rowid)] = position }
        var placed = [Int32](repeating: 0, count: rows.count + 1)
        for (batchPosition, row) in rows.enumerated() {
            let newRank = rank[batchPosition]
            var index = mergedPosition[batchPosition] - newRank, slot = newRank
            while slot > 0 { index += Int(placed[slot]); slot &= slot - 1 }
            slot = newRank + 1
            while slot <= rows.count { placed[slot] += 1; slot += slot & -slot }
            if instance.storageID != nil {
                unsaved[row.rowid] = .put(group: group, label: label[batchPosition], sortKey: row.key)
            }
            entries.replace(at: row.entry, with: .insert(rowid: row.rowid, group: group, index: index))
        }
        return true
    }

    /// Whether `prepareBatch` needs to know which rows exist: only when a
    /// set of an existing row skips a callback a new row runs (the default
    /// for a key-flavour grouping or sorting). Otherwise every row is asked
    /// either way, and the batch's lookups are saved.
    var batchAsksWhichRowsExist: Bool { !regroupsOnSet || (definition.sorting.keyBatch != nil && !resortsOnSet) }

    /// Whether a set of a row already in the view runs the grouping, the
    /// sorting (its invoke options).
    private var regroupsOnSet: Bool { definition.grouping.options.isTriggered(by: .set) }
    private var resortsOnSet: Bool { definition.sorting.options.isTriggered(by: .set) }

    /// Forgets what `prepareBatch` asked (its batch is placed, or failed:
    /// rows still held then go with the transaction).
    func endBatch() {
        batchAnswers = []
        heldRows = [:]
        heldGroups = []
        holdsNewRows = false
    }

    /// One row of a `setObjects` batch before it is stored: its position
    /// in the batch, its rowid when it exists already (always nil when no
    /// view `batchAsksWhichRowsExist`), and the row.
    struct PendingRow {
        let index: Int
        let rowid: Int64?
        let row: ViewRow
    }

    /// The groups a batch form gives `asked` (nil: left out), one a row
    /// and each name checked; for `setObjects` and populations alike.
    private func askGroups(_ asked: [BatchedRow], _ batch: ViewGrouping.Batch,
                           _ context: ViewWriteContext) throws -> [String?] {
        let groups = try Self.callback(instance.name, "grouping") { try batch(context.transaction, asked) }
        try Self.checkCount(groups.count, asked.count, instance.name, "grouping")
        for case let group? in groups { try validateName(group, "group name") }
        return groups
    }

    /// The keys a batch form gives `asked`, one a row (none asked: no call).
    private func askKeys(_ asked: [BatchedRow], _ batch: ViewSorting.KeyBatch,
                         _ context: ViewWriteContext) throws -> [SortKey] {
        if asked.isEmpty { return [] }
        let keys = try Self.callback(instance.name, "sorting") { try batch(context.transaction, asked) }
        try Self.checkCount(keys.count, asked.count, instance.name, "sorting")
        return keys
    }

    private static func checkCount(_ answers: Int, _ asked: Int, _ view: String, _ kind: String) throws {
        guard answers != asked else { return }
        throw YDBError(.callbackFailed, "view '\(view)': \(kind) batch callback answered \(answers) rows of \(asked)")
    }

    /// Several rows were removed at once. Each group loses its rows from the
    /// bottom up, so the index logged for each delete is also its index before
    /// the removal — and cell-drawing dependencies mark the rows YapDatabase's
    /// would (it removes a batch from the end of each group too).
    func rowsRemoved(_ rows: [(rowid: Int64, rowKey: RowKey)], _ context: ViewWriteContext) throws {
        // One row has no order to find: locating it first cost 3% of a
        // one-row delete commit.
        if rows.count == 1 { return try remove(rows[0].rowid, rows[0].rowKey, context) }
        let placed = rows.compactMap { row in state.locate(rowid: row.rowid).map { (row, $0.index) } }
        for (row, _) in placed.sorted(by: { $0.1 > $1.1 }) {
            try remove(row.rowid, row.rowKey, context)
        }
    }

    /// Everything was removed. `keys` holds the (collection, key) of every
    /// row that existed, so the log can name the rows the view held.
    func allRemoved(keys allKeys: RowKeys, _ context: ViewWriteContext) throws {
        guard state.totalCount > 0 else { return }
        try reset(keys: allKeys, context)
    }

    // MARK: Population

    /// Rebuilds the view from every allowed row, calling grouping once per
    /// row, and sorting O(n log n) times per group (comparator form) or once
    /// per row (sort-key form, then a native sort). Logged as a reset
    /// followed by inserts, so mappings of an existing view get a changeset.
    /// A population's peak memory per row, with room to spare (measured:
    /// 119 bytes with a comparator, 144 with sort keys; Benchmarks/README.md).
    static let populationBytesPerRow = 256

    func repopulate(_ context: ViewWriteContext) throws {
        if MemoryBudget.limit != nil {
            // Under an address-space limit, fail the registration rather
            // than the process (Swift stops it when an allocation fails).
            let rows = try context.rows.countAll()
            try MemoryBudget.check(rows * Self.populationBytesPerRow,
                                   for: "populating view '\(instance.name)' from \(rows) rows")
        }
        var (groups, scannedKeys) = try sortedGroups(context)
        if state.totalCount > 0 { try reset(keys: scannedKeys, context) } else { try clearStorage(context) }
        // Every row logged below was scanned: the scan's keys are the log's
        // (a row the grouping left out is named too, and never looked up).
        // One table for both instead of a second copy, row by row.
        keys.merge(scannedKeys, keepingOwn: true)
        scannedKeys = RowKeys()
        // The steps below are ordered for peak memory (a population of a
        // million rows should need little more than the view keeps): the
        // sorted groups are the one full copy of the rows until the trees
        // are built, and each group's is freed as its trees are.
        var ids = GroupIDs()
        var steps: [Int64] = []
        var total = 0
        for (name, rows) in groups {
            _ = ids.id(for: name.value)   // group ids are positions in `groups`
            steps.append(min(OrderLabels.step, (OrderLabels.highest - OrderLabels.lowest) / Int64(rows.count + 2)))
            total += rows.count
        }
        func label(_ group: UInt32, _ index: UInt32) -> Int64 { OrderLabels.lowest + steps[Int(group)] * Int64(index + 1) }
        // Every row's group and position, in rowid order.
        var places = PlacesInRowidOrder(groups, total: total)
        // Written in rowid order: appending to the table's B-tree instead of
        // touching random pages (10x faster at a million rows).
        if let id = instance.storageID {
            var writer = ViewStorage.BulkPut(id: id, context.storage)
            for place in places {
                try writer.put(rowid: place.rowid, group: ids[place.group], label: label(place.group, place.index),
                               sortKey: groups[Int(place.group)].1.key(at: Int(place.index)))
            }
            try writer.finish()
        }
        let placeTree = CountedTree<Int64, StoredPlace>(sorted: places.lazy.map {
            ($0.rowid, StoredPlace(groupID: $0.group, label: label($0.group, $0.index)))
        })
        places = PlacesInRowidOrder()
        var trees: [(GroupName, GroupTree)] = []
        for position in groups.indices {
            var rows = SortedRows.compared([])
            swap(&rows, &groups[position].1)   // each group's sorted rows are freed once its tree is built
            let name = groups[position].0, group = UInt32(position)
            // The trees are built from the sorted rows as they are read, with
            // no array of their elements in between.
            switch rows {
            case .compared(let rowids):
                trees.append((name, GroupTree(sorted: rowids.indices.lazy.map { (label(group, UInt32($0)), rowids[$0]) })))
            case .keyed(let keyed):
                trees.append((name, GroupTree(sortedKeyed: keyed.indices.lazy.map { (label(group, UInt32($0)), keyed[$0]) })))
            }
        }
        state = ViewState(groups: trees, places: placeTree, groupIDs: ids)
        // Logged from the finished trees: each group as one run of inserts
        // (8 bytes a row, `ViewLogEntries`).
        for (name, tree) in trees {
            logCreatedIfNew(name.value)
            var rowids: [Int64] = []
            rowids.reserveCapacity(tree.count)
            tree.forEach { _, rowid in
                rowids.append(rowid)
                return true
            }
            entries.appendInserts(into: name.value, rowids: rowids)
        }
        instance.hint = .none
    }

    /// One group's rows in sort order, as a population sorts them: rowids,
    /// with each row's key in the sort-key form.
    private enum SortedRows {
        case compared([Int64])
        case keyed([KeyedRow])

        var count: Int {
            switch self {
            case .compared(let rowids): return rowids.count
            case .keyed(let rows): return rows.count
            }
        }

        func rowid(at index: Int) -> Int64 {
            switch self {
            case .compared(let rowids): return rowids[index]
            case .keyed(let rows): return rows[index].rowid
            }
        }

        func key(at index: Int) -> SortKey? {
            if case .keyed(let rows) = self { return rows[index].key }
            return nil
        }
    }

    /// A population's rows in rowid order, each with its group (a position
    /// in the population's groups) and its position in the group: the
    /// order in which they are stored and their rowid → place tree built.
    /// Row ids are mostly dense (they are never reused, and rows are seldom
    /// removed in bulk), so each row usually takes the slot of its rowid
    /// in a table spanning the smallest to the largest, 8 bytes a slot:
    /// no sort. When the ids are sparser than one row in two slots, the
    /// rows are sorted instead (16 bytes a row).
    private struct PlacesInRowidOrder: Sequence {
        typealias Element = (rowid: Int64, group: UInt32, index: UInt32)
        private static let empty = UInt64.max
        private var first: Int64 = 0
        /// Group << 32 | index, or `empty`, by rowid - first.
        private var slots: [UInt64] = []
        private var sorted: [Element] = []

        init() {}

        init(_ groups: [(Name, SortedRows)], total: Int) {
            var smallest = Int64.max, largest = Int64.min
            for (_, rows) in groups {
                for index in 0 ..< rows.count {
                    let rowid = rows.rowid(at: index)
                    smallest = Swift.min(smallest, rowid)
                    largest = Swift.max(largest, rowid)
                }
            }
            guard total > 0 else { return }
            let (span, overflow) = largest.subtractingReportingOverflow(smallest)
            if !overflow, span < 2 * Int64(total) {
                first = smallest
                slots = [UInt64](repeating: Self.empty, count: Int(span) + 1)
                for (group, (_, rows)) in groups.enumerated() {
                    for index in 0 ..< rows.count {
                        slots[Int(rows.rowid(at: index) - smallest)] = UInt64(group) << 32 | UInt64(index)
                    }
                }
            } else {
                sorted.reserveCapacity(total)
                for (group, (_, rows)) in groups.enumerated() {
                    for index in 0 ..< rows.count { sorted.append((rows.rowid(at: index), UInt32(group), UInt32(index))) }
                }
                sorted.sort { $0.rowid < $1.rowid }
            }
        }

        struct Iterator: IteratorProtocol {
            fileprivate let places: PlacesInRowidOrder
            fileprivate var position = 0

            mutating func next() -> Element? {
                if places.slots.isEmpty {
                    guard position < places.sorted.count else { return nil }
                    defer { position += 1 }
                    return places.sorted[position]
                }
                while position < places.slots.count {
                    let slot = places.slots[position]
                    position += 1
                    if slot != PlacesInRowidOrder.empty {
                        return (places.first + Int64(position - 1), UInt32(slot >> 32), UInt32(truncatingIfNeeded: slot))
                    }
                }
                return nil
            }
        }

        func makeIterator() -> Iterator { Iterator(places: self) }
    }

    /// Every allowed row, grouped, each group in sort order (groups in byte
    /// order), and the (collection, key) of every row scanned.
    private func sortedGroups(_ context: ViewWriteContext) throws
        -> (groups: [(Name, SortedRows)], keys: RowKeys) {
        let flavour = Self.union(definition.grouping.flavour, definition.sorting.flavour)
        let sortingFlavour = definition.sorting.flavour
        let viewName = instance.name
        var scannedKeys = RowKeys()
        var rowsScanned = 0
        switch definition.sorting.form {
        case .key(let keyFunction):
            // Equal keys keep the scan order, as the comparator form's stable
            // sort does: this sort is stable too.
            final class KeyedGroup {
                var rows: [KeyedRow] = []
            }
            var grouped = ScanGroups { KeyedGroup() }
            try scanGrouped(flavour, context, keys: keyFunction) { rowid, row in
                scannedKeys.appendScanned(rowid, RowKey(collection: row.collection, key: row.key))
                rowsScanned += 1
            } into: { rowid, _, group, key in
                grouped[group].rows.append(KeyedRow(key: key!, rowid: rowid))
            }
            var done = rowsScanned
            let groups = try grouped.inNameOrder.map { name, keyed -> (Name, SortedRows) in
                var rows = keyed.rows
                keyed.rows = []   // sorted in place: no second copy
                KeyOrder.sort(&rows)
                done += rows.count
                try populationTick?(done)
                return (name, .keyed(rows))
            }
            return (groups, scannedKeys)
        case .comparator(let compare):
            // A binding's comparator gets each group's rows as they are
            // scanned, in its own form (`PreparedRows`); the engine then
            // keeps only their rowids.
            final class ScannedGroup {
                var rowids: [Int64] = []
                var rows: [ViewRow] = []
                var prepared: (any PreparedRows)?
                init(_ prepared: (any PreparedRows)?) { self.prepared = prepared }
            }
            let prepare = definition.sorting.prepare
            var grouped = ScanGroups { ScannedGroup(prepare?()) }
            try scanGrouped(flavour, context, keys: nil) { rowid, row in
                scannedKeys.appendScanned(rowid, RowKey(collection: row.collection, key: row.key))
                rowsScanned += 1
            } into: { rowid, row, group, _ in
                let scanned = grouped[group]
                scanned.rowids.append(rowid)
                if let prepared = scanned.prepared {
                    prepared.append(row.narrowed(to: sortingFlavour))
                } else {
                    scanned.rows.append(row.narrowed(to: sortingFlavour))
                }
            }
            // Progress (an asynchronous registration): pass by pass, and a
            // cancellation check every few thousand comparisons.
            let tick = populationTick
            var done = rowsScanned
            let groups = try grouped.inNameOrder.map { name, scanned -> (Name, SortedRows) in
                let group = name.value, count = scanned.rowids.count
                let start = done
                var comparisons = 0
                let afterPass: ((Int, Int) throws -> Void)? = tick.map { tick in
                    { pass, passes in
                        done = start + count * pass / passes
                        try tick(done)
                    }
                }
                // Sort positions, not rows: the merge then moves integers.
                func sortPositions(_ compare: (Int, Int) throws -> ViewOrder) throws -> [Int] {
                    try StableSort.sort(Array(0..<count), afterPass: afterPass) { a, b in
                        if let tick {
                            comparisons += 1
                            if comparisons & 4095 == 0 { try tick(done) }
                        }
                        return try Self.callback(viewName, "sorting") { try compare(a, b) } == .ascending
                    }
                }
                // The running transaction is looked up once a group and not
                // handed to each comparison: it is weakly referenced (by the
                // handles lent to callbacks), which makes every retain of it
                // slow, and a population compares some twenty million times.
                let running = try context.transaction
                var order: [Int] = []
                if let prepared = scanned.prepared {
                    // Errors pass as they are: the comparisons' are already
                    // named, and a cancellation must stay one.
                    try prepared.sort(in: group, lending: running) { compare in
                        order = try sortPositions(compare)
                    }
                    guard order.count == count else {
                        throw YDBError(.callbackFailed, "view '\(viewName)': the sorting binding did not sort the group")
                    }
                } else {
                    let rows = scanned.rows
                    order = try sortPositions { a, b in try compare(running, group, rows[a], rows[b]) }
                }
                let sorted = SortedRows.compared(order.map { scanned.rowids[$0] })
                scanned.rows = []
                scanned.prepared = nil
                scanned.rowids = []
                done = start + count
                return (name, sorted)
            }
            return (groups, scannedKeys)
        }
    }

    /// Replaces grouping/sorting/tag and repopulates, in the same
    /// transaction and storage.
    func redefine(_ view: View, _ context: ViewWriteContext) throws {
        takeDefinition(view)
        try repopulate(context)
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
        unsaved.removeAll()
        storageCleared = false
    }

    /// Called by the transaction that stores the last chunk of an
    /// asynchronous registration's rows: from its commit on, commits may
    /// leave rows unstored.
    func storageIsComplete() {
        completesStorage = true
    }

    // MARK: Asynchronous registration

    /// Takes over the rows of `built`, a writer that populated this view's
    /// new definition off to the side (an asynchronous registration), and
    /// logs and stores them as `repopulate` does: "all rows removed" when
    /// the view held rows, then `built`'s own log (its population, and what
    /// it caught up since). Call `takeDefinition` first. Without `storing`,
    /// the rows are left for the caller to store (`ViewStorage.put`), and
    /// only what changes from here on is stored.
    func adopt(_ built: ViewWriter, storing: Bool, _ context: ViewWriteContext) throws {
        // Taken, not shared: `built` is left empty, so that the changes
        // below do not copy what it held.
        defer {
            built.keys = RowKeys()
            built.entries = ViewLogEntries()
            built.state = ViewState()
        }
        keys.merge(built.keys, keepingOwn: true)
        if state.totalCount > 0 {
            // The log names every row the view held: the scan knew most of
            // them; rows written since it ran are looked up.
            var unnamed: [Int64] = []
            state.places.forEach { rowid, _ in
                if keys[rowid] == nil { unnamed.append(rowid) }
                return true
            }
            for rowid in unnamed { keys[rowid] = try context.rows.rowKey(forRowid: rowid) }
            try reset(keys: [:], context)
        } else {
            try clearStorage(context)
        }
        if entries.isEmpty { entries = built.entries } else { entries.append(contentsOf: built.entries) }
        unplaced = built.unplaced
        loggedCreated.formUnion(built.loggedCreated)
        emptiedGroups.formUnion(built.emptiedGroups)
        state = built.state
        instance.hint = .none
        // The rows `built` compared against: still as they are, but for the
        // rows changed since, which `catchUp` forgets first.
        instance.rowCache = built.instance.rowCache
        // In rowid order, as `repopulate` writes them.
        if storing, let id = instance.storageID {
            var failure: Error?
            var writer = ViewStorage.BulkPut(id: id, context.storage)
            state.forEachPlace { rowid, place in
                do {
                    try writer.put(rowid: rowid, group: place.group, label: place.label,
                                   sortKey: state.sortKey(inGroup: place.group, label: place.label))
                    return true
                } catch {
                    failure = error
                    return false
                }
            }
            if let failure { throw failure }
            try writer.finish()
        }
    }

    /// Brings a view populated at an earlier snapshot up to `context`'s:
    /// `changes` names every row changed since (by row id, with every way
    /// it changed). A row gone leaves the view; a row the view never saw is
    /// inserted; the others are updated as a commit updates them (their
    /// callbacks run again as their invoke options say). Rows that must
    /// move are all taken out first and then placed again, so a comparator
    /// only ever compares rows whose places agree with their contents.
    /// At most `limit` rows are placed again; the others wait, out of the
    /// view, for the next call (`unplacedCount`), which reads them afresh.
    func catchUp(_ changes: [Int64: RowChangeKind], placing limit: Int = .max,
                 _ context: ViewWriteContext) throws {
        let flavour = Self.union(definition.grouping.flavour, definition.sorting.flavour)
        let rowids = changes.keys.sorted()
        for rowid in rowids { rowCache.forget(rowid) }
        var loaded: [Int64: ViewRow] = [:]
        for rowid in rowids {
            guard let row = try context.rows.row(rowid, flavour) else {
                unplaced.removeValue(forKey: rowid)
                if state.contains(rowid: rowid), let rowKey = keys[rowid] {
                    try remove(rowid, rowKey, context)
                }
                continue
            }
            guard definition.allows(row.collection) else { continue }
            let rowKey = RowKey(collection: row.collection, key: row.key)
            let seen = keys[rowid] != nil
            keys[rowid] = rowKey
            loaded[rowid] = row
            guard seen else {
                unplaced.updateValue(nil, forKey: rowid)
                continue
            }
            let kind = changes[rowid]!
            let regroup = definition.grouping.options.isTriggered(by: kind)
            guard let current = state.place(of: rowid) else {
                // Left out, or waiting to be placed again.
                if regroup { unplaced.updateValue(nil, forKey: rowid) }
                continue
            }
            if regroup || definition.sorting.options.isTriggered(by: kind) {
                try remove(rowid, rowKey, context)
                unplaced.updateValue(regroup ? nil : current.group, forKey: rowid)
            } else {
                let index = state.group(current.group)!.index(of: current.label)!
                logUpdate(rowid, rowKey, current.group, index, kind)
            }
        }
        for rowid in unplaced.keys.sorted().prefix(limit) {
            let known = unplaced.removeValue(forKey: rowid)!
            guard let row = try loaded[rowid] ?? context.rows.row(rowid, flavour),
                  let group = try known ?? runGrouping(row, context) else { continue }
            try insert(rowid, row, into: group, context)
        }
    }

    /// Rows a catch-up took out of the view and has not placed again yet,
    /// with their group when it is not run again.
    private var unplaced: [Int64: String?] = [:]
    var unplacedCount: Int { unplaced.count }

    /// Scans the rows a population reads (`scanned` sees each), asks their
    /// groups and, with `keys`, their sort keys, `Tuning.populationBatchSize`
    /// rows at a time (through the binding's population forms when it has
    /// them: `ViewGrouping.populationBatch`), and hands each
    /// row that has a group to `body` with its group and key, in scan
    /// order. A background population's batch never spans two of its read
    /// transactions.
    private func scanGrouped(_ flavour: ViewFlavour, _ context: ViewWriteContext,
                             keys keyFunction: (@Sendable (ReadTransaction, String, ViewRow) throws -> SortKey)?,
                             _ scanned: (Int64, ViewRow) -> Void,
                             into body: (Int64, ViewRow, String, SortKey?) throws -> Void) throws {
        var rowids: [Int64] = [], rows: [ViewRow] = []
        rowids.reserveCapacity(Tuning.populationBatchSize)
        rows.reserveCapacity(Tuning.populationBatchSize)
        func flush() throws {
            guard !rows.isEmpty else { return }
            let groups = try populationGroups(of: rows, context)
            let keys = try keyFunction.map { try populationKeys(of: rows, in: groups, $0, context) }
            var keyed = 0
            for position in rows.indices {
                guard let group = groups[position] else { continue }
                try body(rowids[position], rows[position], group, keys?[keyed])
                keyed += 1
            }
            rowids.removeAll(keepingCapacity: true)
            rows.removeAll(keepingCapacity: true)
        }
        try scanRows(flavour, context, beforePause: flush) { rowid, row in
            scanned(rowid, row)
            rowids.append(rowid)
            rows.append(row)
            if rows.count == Tuning.populationBatchSize { try flush() }
        }
        try flush()
    }

    /// The groups of a population's `rows` (nil: left out), checked.
    private func populationGroups(of rows: [ViewRow], _ context: ViewWriteContext) throws -> [String?] {
        guard let batch = definition.grouping.populationBatch else {
            return try rows.map { try runGrouping($0, context) }
        }
        let flavour = definition.grouping.flavour
        var asked: [BatchedRow] = []
        asked.reserveCapacity(rows.count)
        for (position, row) in rows.enumerated() {
            asked.append(BatchedRow(index: position, group: "", row: row.narrowed(to: flavour)))
        }
        return try askGroups(asked, batch, context)
    }

    /// The sort keys of those of `rows` that have a group, in order.
    private func populationKeys(of rows: [ViewRow], in groups: [String?],
                                _ keyFunction: @Sendable (ReadTransaction, String, ViewRow) throws -> SortKey,
                                _ context: ViewWriteContext) throws -> [SortKey] {
        let flavour = definition.sorting.flavour
        var asked: [BatchedRow] = []
        asked.reserveCapacity(rows.count)
        for (position, row) in rows.enumerated() {
            guard let group = groups[position] else { continue }
            asked.append(BatchedRow(index: position, group: group, row: row.narrowed(to: flavour)))
        }
        guard let batch = definition.sorting.populationKeyBatch else {
            return try asked.map { batched in
                try Self.callback(instance.name, "sorting") { try keyFunction(context.transaction, batched.group, batched.row) }
            }
        }
        return try askKeys(asked, batch, context)
    }

    /// Every allowed row, as a callback of `flavour` reads it.
    /// `beforePause` runs before a background population's scan pauses
    /// (`populationPause`), while the read transaction it scans is open.
    private func scanRows(_ flavour: ViewFlavour, _ context: ViewWriteContext, beforePause: () throws -> Void,
                          _ body: (Int64, ViewRow) throws -> Void) throws {
        let collections = definition.allowedCollections.map { Set($0.map { Name($0) }).sorted().map(\.value) }
        guard let tick = populationTick, let pause = populationPause else {
            try context.rows.scan(flavour, collections: collections, body)
            return
        }
        var scanned = 0
        try context.rows.scan(flavour, collections: collections, chunk: Self.populationChunk, between: { more in
            try beforePause()
            try pause(more)
        }) { rowid, row in
            try body(rowid, row)
            scanned += 1
            if scanned & 1023 == 0 { try tick(scanned) }
        }
        try tick(scanned)
    }

    private static func union(_ a: ViewFlavour, _ b: ViewFlavour) -> ViewFlavour {
        let object = a.readsObject || b.readsObject, metadata = a.readsMetadata || b.readsMetadata
        return object && metadata ? .row : object ? .object : metadata ? .metadata : .key
    }

    // MARK: Invariants (debug builds, after every update)

    func checkInvariants() {
        if let problem = state.invariantViolation() {
            preconditionFailure("view '\(instance.name)': \(problem)")
        }
        guard definition.sorting.usesSortKeys else { return }
        // The state checked that its groups are all of one form; here, that
        // it is the sort-key form and the keys rise with the labels.
        state.groups.forEach { name, tree in
            precondition(tree.isKeyed, "view '\(instance.name)': group \(name) has no sort keys")
            var previous: SortKey?
            tree.keyedRows!.forEach { _, row in
                if let previous {
                    precondition(previous <= row.key, "view '\(instance.name)': group \(name) is out of key order")
                }
                previous = row.key
                return true
            }
            return true
        }
    }

    /// Also: the view's stored rows are exactly its rows in memory.
    func checkInvariants(storedIn handle: SQLiteHandle) throws {
        checkInvariants()
        guard let id = instance.storageID else { return }
        var stored = try ViewStorage.places(id: id, handle)
        // The rows still unstored after this commit.
        var unstored = storageDecision == .written ? [:] : unstoredBefore
        if storageDecision == .waiting { unstored.merge(unsaved) { $1 } }
        for (rowid, row) in unstored {
            switch row {
            case .put(let group, let label, _): stored[rowid] = (group, label)
            case .removed: stored[rowid] = nil
            }
        }
        precondition(stored.count == state.totalCount,
                     "view '\(instance.name)': \(stored.count) stored rows, \(state.totalCount) in memory")
        state.forEachPlace { rowid, place in
            let row = stored[rowid]
            precondition(row.map { bytesEqual($0.0, place.group) && $0.1 == place.label } ?? false,
                         "view '\(instance.name)': row \(rowid) stored as \(String(describing: row)), in memory \(place)")
            return true
        }
    }

    // MARK: Finishing

    /// Logs groups that are empty at commit and returns the commit's log (nil
    /// when the view did nothing).
    func finish(snapshotBefore: UInt64, snapshot: UInt64) -> ViewCommitLog? {
        var candidates = emptiedGroups.union(loggedCreated)
        if wasReset { candidates.formUnion(before.groupNames.map { Name($0) }) }
        for group in candidates.sorted() where state.group(group.value) == nil {
            if before.group(group.value) != nil || loggedCreated.contains(group) {
                entries.append(.groupEmptied(group.value))
            }
        }
        guard !entries.isEmpty else { return nil }
        return ViewCommitLog(viewName: instance.name, snapshotBefore: snapshotBefore, snapshot: snapshot,
                             before: before, after: state, entries: entries, keys: keys)
    }

    // MARK: Moving rows

    private func insert(_ rowid: Int64, _ row: ViewRow, into group: String,
                        _ context: ViewWriteContext) throws {
        let subject = try self.subject(row, in: group, context)
        let index = try position(of: subject, in: group, context)
        try place(rowid, RowKey(collection: row.collection, key: row.key), subject.sortKey, in: group, at: index,
                  context)
    }

    /// Puts a row (not in the view) at `index` of `group`: chooses its label
    /// (spreading out neighbours' labels when there is no room), stores it
    /// and logs the insert.
    /// `moving`: the row was taken out of this group's order by
    /// `ViewState.removeFromOrder` (an update that moves it).
    private func place(_ rowid: Int64, _ rowKey: RowKey, _ sortKey: SortKey?, in group: String, at index: Int,
                       moving: Bool = false, _ context: ViewWriteContext) throws {
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
                try persist(entry.rowid, group, entry.label, state.sortKey(of: entry.rowid), context)
            }
            label = spread.newLabel
        }
        if state.group(group) == nil { logCreatedIfNew(group) }
        state.insert(rowid: rowid, group: group, label: label, sortKey: sortKey, moving: moving)
        try persist(rowid, group, label, sortKey, context)
        keys[rowid] = rowKey
        entries.append(.insert(rowid: rowid, group: group, index: index))
        instance.hint = index == count - 1 ? .end(group) : index == 0 ? .beginning(group) : .none
    }

    private func remove(_ rowid: Int64, _ rowKey: RowKey, _ context: ViewWriteContext) throws {
        guard let (group, index, emptied) = state.remove(rowid: rowid) else { return }
        rowCache.forget(rowid)
        if instance.storageID != nil { unsaved[rowid] = .removed }
        keys[rowid] = rowKey
        entries.append(.delete(rowid: rowid, group: group, index: index))
        // Only a group this removal emptied may be empty at the commit: a
        // later removal that empties another records that one.
        if emptied { emptiedGroups.insert(Name(group)) }
    }

    private func reset(keys allKeys: RowKeys, _ context: ViewWriteContext) throws {
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
    }

    /// Stores a row's place (when the transaction commits, `unsaved`);
    /// `sortKey` is its key (nil for a comparator).
    private func persist(_ rowid: Int64, _ group: String, _ label: Int64, _ sortKey: SortKey?,
                         _ context: ViewWriteContext) throws {
        if instance.storageID != nil { unsaved[rowid] = .put(group: group, label: label, sortKey: sortKey) }
    }

    /// Empties the view's storage table, for a view rewritten from scratch:
    /// what this transaction and earlier commits owed it no longer applies.
    private func clearStorage(_ context: ViewWriteContext) throws {
        unsaved.removeAll()
        guard let id = instance.storageID else { return }
        try ViewStorage.deleteAll(id: id, context.storage)
        storageCleared = true
    }

    /// At the commit: the rows earlier commits left unstored, as this
    /// transaction found them (none once it emptied the storage).
    private var unstoredBefore: [Int64: UnstoredRows.Row] {
        storageCleared ? [:] : instance.unstored.rows
    }

    /// Called once per commit, before it: writes the rows this transaction
    /// owes its storage (`unsaved`) together with those earlier commits
    /// left unstored, once they are `Tuning.viewRowsWrittenAtOnce` or more,
    /// or always while the table is not complete (an asynchronous
    /// registration storing the view counts on every commit storing its
    /// changes); otherwise writes nothing but, the first time, the
    /// registry row's "not fresh" (`UnstoredRows`). The unstored rows
    /// themselves change only once the commit succeeded (`storageCommitted`).
    func saveStorage(_ handle: SQLiteHandle) throws {
        guard let id = instance.storageID, !unsaved.isEmpty || storageCleared else { return }
        let unstored = instance.unstored
        let before = unstoredBefore
        let count = before.count + unsaved.count
        if !unstored.tableIsComplete || count >= Tuning.viewRowsWrittenAtOnce || count == 0 {
            // Merged only when earlier commits left rows: a copy of every row otherwise.
            try ViewStorage.write(before.isEmpty ? unsaved : before.merging(unsaved) { $1 }, id: id, handle)
            // An incomplete table stays not fresh (the registration marks
            // it fresh when it has stored every row).
            if unstored.markedStale && unstored.tableIsComplete { try ViewStorage.setFresh(true, id: id, handle) }
            storageDecision = .written
        } else {
            if !unstored.markedStale { try ViewStorage.setFresh(false, id: id, handle) }
            storageDecision = .waiting
        }
    }

    /// The commit succeeded: what `saveStorage` decided now holds. Returns
    /// whether it left rows waiting.
    func storageCommitted() -> Bool {
        let unstored = instance.unstored
        if completesStorage { unstored.tableIsComplete = true }
        defer { unsaved.removeAll() }
        switch storageDecision {
        case .none:
            return false
        case .written:
            unstored.markStored()
            return false
        case .waiting:
            if storageCleared { unstored.rows = [:] }
            unstored.rows.merge(unsaved) { $1 }
            unstored.markedStale = true
            return true
        }
    }

    /// The transaction rolled back: the cache may hold rows as it changed
    /// them, and the storage writes it owed are void.
    func rolledBack() {
        rowCache.removeAll()
        unsaved.removeAll()
    }

    private func logUpdate(_ rowid: Int64, _ rowKey: RowKey, _ group: String, _ index: Int, _ kind: RowChangeKind) {
        var changes: RowChangeFlags = []
        if !kind.isDisjoint(with: [.objectChanged, .objectTouched]) { changes.insert(.object) }
        if !kind.isDisjoint(with: [.metadataChanged, .metadataTouched]) { changes.insert(.metadata) }
        keys[rowid] = rowKey
        entries.append(.update(rowid: rowid, group: group, index: index, changes: changes))
    }

    private func logCreatedIfNew(_ group: String) {
        guard wasReset || before.group(group) == nil, !loggedCreated.contains(Name(group)) else { return }
        loggedCreated.insert(Name(group))
        entries.append(.groupCreated(group))
    }

    // MARK: Sorting

    /// What a row is placed by: the row itself (comparator form) or its key.
    private enum Subject {
        case row(ViewRow)
        case key(SortKey)

        var sortKey: SortKey? {
            if case .key(let key) = self { return key }
            return nil
        }
    }

    private func subject(_ row: ViewRow, in group: String, _ context: ViewWriteContext) throws -> Subject {
        let narrowed = row.narrowed(to: definition.sorting.flavour)
        switch definition.sorting.form {
        case .comparator: return .row(narrowed)
        case .key(let key):
            if let answered = answered.sortKey { return .key(answered) }
            return .key(try Self.callback(instance.name, "sorting") { try key(context.transaction, group, narrowed) })
        }
    }

    /// The upper-bound index for `subject` in `group`: after every equal row.
    /// A key is searched among the group's keys (`GroupTree.keyedRows`,
    /// bytes compared in memory), a row through the comparator.
    private func position(of subject: Subject, in group: String, _ context: ViewWriteContext) throws -> Int {
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
    private func upperBound<Value>(in tree: CountedTree<Int64, Value>, of group: String,
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
    private func fitsInPlace(_ subject: Subject, _ group: String, _ index: Int,
                             _ context: ViewWriteContext) throws -> Bool {
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
    private func withComparisons<T>(of row: ViewRow, in group: String, _ context: ViewWriteContext,
                                    _ body: ((Int64) throws -> ViewOrder) throws -> T) throws -> T {
        guard case .comparator(let compare) = definition.sorting.form else { preconditionFailure("form changed") }
        let name = instance.name
        guard let fixed = definition.sorting.fixed else {
            return try body { otherRowid in
                let other = try sortingRow(otherRowid, context)
                return try Self.callback(name, "sorting") { try compare(context.transaction, group, row, other.row) }
            }
        }
        // What `body` throws (a row's load, or a comparison's failure,
        // already named) passes through the binding untouched.
        var outcome: Result<T, Error>?
        try Self.callback(name, "sorting") {
            try fixed(try context.transaction, group, row) { compareFixed in
                // `body` calls it only before it returns, as `fixed` requires.
                withoutActuallyEscaping(compareFixed) { compareFixed in
                    outcome = Result {
                        try body { otherRowid in
                            let other = try sortingRow(otherRowid, context)
                            return try Self.callback(name, "sorting") { try compareFixed(other.row) }
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
    private func sortingRow(_ rowid: Int64, _ context: ViewWriteContext) throws -> SortingRowCache.Entry {
        if let cached = rowCache.entry(rowid) { return cached }
        return rowCache.store(try context.rows.loadRow(rowid, definition.sorting.flavour), for: rowid)
    }

    private func runGrouping(_ row: ViewRow, _ context: ViewWriteContext) throws -> String? {
        if let answered = answered.group { return answered }   // checked by `prepareBatch`
        let grouping = definition.grouping
        let group = try Self.callback(instance.name, "grouping") {
            try grouping.run(context.transaction, row.narrowed(to: grouping.flavour))
        }
        if let group { try validateName(group, "group name") }
        return group
    }

    /// Runs user code; any error becomes a `.callbackFailed` naming the view.
    static func callback<T>(_ view: String, _ kind: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as YDBError where error.code == .callbackFailed {
            throw error
        } catch {
            throw YDBError(.callbackFailed, "view '\(view)': \(kind) callback failed: \(error)")
        }
    }
}

/// A population's groups, as its scan meets them (by `GroupIDs`, so
/// consecutive rows of one group find it without hashing its name).
private struct ScanGroups<Group: AnyObject> {
    private var ids = GroupIDs()
    private var groups: [Group] = []
    private let make: () -> Group

    init(_ make: @escaping () -> Group) { self.make = make }

    subscript(name: String) -> Group {
        mutating get {
            let id = Int(ids.id(for: name))
            if id == groups.count { groups.append(make()) }
            return groups[id]
        }
    }

    /// Every group with its name, in byte order of the names.
    var inNameOrder: [(Name, Group)] {
        groups.indices.map { (Name(ids[UInt32($0)]), groups[$0]) }.sorted { $0.0 < $1.0 }
    }
}

/// A stable merge sort whose comparator may throw (user callbacks). Equal
/// rows keep their input order, which matches inserting them one by one at
/// their upper bound.
enum StableSort {
    /// `afterPass(pass, passes)` runs after each merge pass (progress).
    static func sort<T>(_ input: [T], afterPass: ((Int, Int) throws -> Void)? = nil,
                        by less: (T, T) throws -> Bool) throws -> [T] {
        guard input.count > 1 else { return input }
        var source = input, target = input
        var passes = 0
        while 1 << passes < source.count { passes += 1 }
        var width = 1, pass = 0
        while width < source.count {
            var start = 0
            while start < source.count {
                let middle = min(start + width, source.count), end = min(start + 2 * width, source.count)
                var left = start, right = middle, out = start
                while left < middle && right < end {
                    if try less(source[right], source[left]) {
                        target[out] = source[right]; right += 1
                    } else {
                        target[out] = source[left]; left += 1
                    }
                    out += 1
                }
                while left < middle { target[out] = source[left]; left += 1; out += 1 }
                while right < end { target[out] = source[right]; right += 1; out += 1 }
                start = end
            }
            swap(&source, &target)
            width *= 2
            pass += 1
            try afterPass?(pass, passes)
        }
        return source
    }
}
