/// A `setObjects` batch, for one view: its batch callbacks are asked for
/// every row's group and key before any row is stored, and new rows may be
/// held and placed together when the batch ends (`ExtensionWriter`'s batch
/// steps).
extension ViewWriter {
    /// Asks the definition's batch callbacks (bindings,
    /// `ViewGrouping.Batch`) for what placing the rows of a `setObjects`
    /// batch will need, before any of them is stored: the groups of the
    /// rows whose grouping would run, then the keys of the rows whose sort
    /// key would be asked for. The same invoke options decide which rows,
    /// so each callback runs for exactly the rows it would have run for
    /// one by one; `rowSet(at:…)` then places each row as `rowInserted`
    /// and `rowUpdated` do, with these answers. Without batch callbacks
    /// it asks nothing, and the rows' callbacks run as they are placed.
    func prepareBatch(_ rows: [SetBatch.Row], _ context: ExtensionWriteContext) throws {
        batching.answers = []
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
            let answers = try ViewCallbacks.askGroups(instance.name, asked, groupBatch, context)
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
            for (position, answer) in zip(keyed, try ViewCallbacks.askKeys(instance.name, asked, keyBatch, context)) { keys[position] = answer }
        }
        batching.answers = zip(groups, keys).map { BatchState.Answered(group: $0, sortKey: $1) }
    }

    /// Places row `position` of the batch `prepareBatch` was given, just
    /// stored (`inserted`: it was new), with the answers asked for it.
    func rowSet(at position: Int, _ rowid: Int64, _ row: ViewRow, inserted: Bool,
                _ context: ExtensionWriteContext) throws {
        if position < batching.answers.count { batching.answered = batching.answers[position] }
        defer { batching.answered = BatchState.Answered() }
        if batching.holdsNewRows, inserted, definition.allows(row.collection),
           case .some(.some(let group)) = batching.answered.group, let key = batching.answered.sortKey {
            let name = Name(group)
            if batching.heldRows[name] == nil {
                batching.heldGroups.append(group)
                if state.group(group) == nil { logCreatedIfNew(group) }
            }
            let rowKey = RowKey(collection: row.collection, key: row.key)
            keys[rowid] = rowKey
            entries.append(.insert(rowid: rowid, group: group, index: 0))
            batching.heldRows[name, default: []].append(BatchState.HeldRow(rowid: rowid, rowKey: rowKey, key: key, entry: entries.count - 1))
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
    var preparesBatches: Bool { definition.grouping.batch != nil }

    /// Whether placing a batch's rows in this view calls back no user code:
    /// its batch forms answered every group and key (the sort-key form
    /// with both batch callbacks), or the collection is not the view's.
    func placesBatchWithoutCallbacks(inCollection collection: String) -> Bool {
        !definition.allows(collection) || (definition.grouping.batch != nil && definition.sorting.keyBatch != nil)
    }

    /// The batch's rows are all set: the held ones are placed.
    func finishBatch(_ context: ExtensionWriteContext) throws { try placeHeldRows(context) }

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
    private func placeHeldRows(_ context: ExtensionWriteContext) throws {
        guard !batching.heldGroups.isEmpty else { return }
        for group in batching.heldGroups {
            let rows = batching.heldRows[Name(group)]!
            if rows.count * 8 < (state.group(group)?.count ?? 0) || !merge(rows, into: group) {
                RarePaths.count(\.heldRowsPlacedSingly)
                for row in rows {
                    let index = try position(of: .key(row.key), in: group, context)
                    // The group has rows: `place` logs the insert alone,
                    // and it goes where the row's waits.
                    try place(row.rowid, row.rowKey, row.key, in: group, at: index, context)
                    entries.moveLast(to: row.entry)
                }
            }
        }
        batching.heldGroups = []
        batching.heldRows = [:]
    }

    /// `placeHeldRows`' merge of `rows` (in batch order) into `group`;
    /// false, changing nothing, when some run of them has no room for
    /// labels between the group's rows.
    private func merge(_ rows: [BatchState.HeldRow], into group: String) -> Bool {
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
        RarePaths.count(\.heldGroupPlacements)
        if !existing.isEmpty { RarePaths.count(\.heldMergesIntoRows) }
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
            touched(row.rowid)
            let newRank = rank[batchPosition]
            var index = mergedPosition[batchPosition] - newRank, slot = newRank
            while slot > 0 { index += Int(placed[slot]); slot &= slot - 1 }
            slot = newRank + 1
            while slot <= rows.count { placed[slot] += 1; slot += slot & -slot }
            storage.owe(row.rowid, .put(group: group, label: label[batchPosition], sortKey: row.key),
                        id: instance.storageID)
            entries.replace(at: row.entry, with: .insert(rowid: row.rowid, group: group, index: index))
        }
        return true
    }

    /// Whether `prepareBatch` needs to know which rows exist: only when a
    /// set of an existing row skips a callback a new row runs (the default
    /// for a key-flavour grouping or sorting). Otherwise every row is asked
    /// either way, and the batch's lookups are saved.
    var batchNeedsExistingRowids: Bool { !regroupsOnSet || (definition.sorting.keyBatch != nil && !resortsOnSet) }

    /// Whether a set of a row already in the view runs the grouping, the
    /// sorting (its invoke options).
    private var regroupsOnSet: Bool { definition.grouping.options.isTriggered(by: .set) }
    private var resortsOnSet: Bool { definition.sorting.options.isTriggered(by: .set) }

    /// Forgets what `prepareBatch` asked (its batch is placed, or failed:
    /// rows still held then go with the transaction).
    func endBatch() { batching = BatchState() }

    func holdNewRowsUntilBatchEnds() { batching.holdsNewRows = true }
}

/// What a `ViewWriter` keeps during one batch; a fresh one after it.
struct BatchState {
    /// What a batch callback already answered for the row being placed
    /// (`prepareBatch`): `runGrouping` and `subject` take it instead of
    /// calling back. Set only around that row's `rowSet(at:…)`.
    var answered = Answered()
    /// `prepareBatch`'s answers, one per row of the batch.
    var answers: [Answered] = []
    /// The batch's new rows, by group (the groups in the order met), each
    /// in batch order: placed together when the batch ends
    /// (`placeHeldRows`). Only while `holdsNewRows`. Each one's insert is
    /// logged when it comes, as a loop logs it; its index there is filled
    /// in when it is placed.
    var heldRows: [Name: [HeldRow]] = [:]
    var heldGroups: [String] = []
    struct HeldRow {
        let rowid: Int64
        let rowKey: RowKey
        let key: SortKey
        /// Its insert's position in `entries`.
        let entry: Int
    }
    /// Set by the batch's transaction when no callback can run while the
    /// batch's rows are placed (`placesBatchWithoutCallbacks`, for every
    /// extension): nothing then reads a group before the batch ends.
    var holdsNewRows = false
    struct Answered {
        /// nil: not answered (the grouping runs); `.some(nil)`: no group.
        var group: String??
        var sortKey: SortKey?
    }
}
