/// A filtered view brought level with its parent without repopulating: a
/// new filter, or a parent whose rows changed all at once (its own new
/// filter). Only rows that enter or leave are inserted or removed, so the
/// log — and the changeset — names exactly those.
extension ViewWriter {
    /// Makes this filtered view hold exactly the rows of `parent` (the
    /// parent's contents in this transaction) that its filter keeps, in the
    /// parent's groups. `reevaluating`: the filter changed, so it runs on
    /// every row of the parent; otherwise only on the parent's rows this
    /// view does not show (those it shows already passed it).
    /// Costs one pass over the rows (read in rowid order for the filter),
    /// plus O(log n) per row entering or leaving.
    func refilter(over parent: ViewState, reevaluating: Bool, _ context: ExtensionWriteContext) throws {
        guard let filtering = definition.filtering else { return }
        // Rows the parent no longer shows in the same group leave first.
        var gone: [Int64] = []
        state.forEachPlace { rowid, place in
            if parent.place(of: rowid).map({ !bytesEqual($0.group, place.group) }) ?? true { gone.append(rowid) }
            return true
        }
        try remove(gone, context)
        // One scan of the row table in rowid order (cheaper than looking the
        // parent's rows up one by one), skipping rows the parent does not show.
        let flavour = filtering.filter.flavour.union(definition.sorting.flavour)
        try context.rows.scan(flavour, collections: definition.allowedCollections) { rowid, row in
            guard let place = parent.place(of: rowid) else { return }
            let shown = state.contains(rowid: rowid)
            guard reevaluating || !shown else { return }
            let keeps = try ViewCallbacks.run(instance.name, "filter") {
                try filtering.filter.run(try context.transaction, place.group, row.narrowed(to: filtering.filter.flavour))
            }
            if shown && !keeps {
                try remove(rowid, RowKey(collection: row.collection, key: row.key), context)
            } else if !shown && keeps {
                try insert(rowid, row, into: place.group, parentKey: parent.sortKey(of: rowid), context)
            }
        }
    }

    /// Makes this filtered view hold exactly the rows of `parent` that are
    /// in `kept` (a search view's matches, found by one query), in the
    /// parent's groups: only its own rows and `kept` are looked at, so a
    /// new query costs what enters and leaves, not a pass over the parent.
    func refilter(over parent: ViewState, keeping kept: Set<Int64>, _ context: ExtensionWriteContext) throws {
        var gone: [Int64] = []
        state.forEachPlace { rowid, place in
            let stays = kept.contains(rowid) && parent.place(of: rowid).map { bytesEqual($0.group, place.group) } == true
            if !stays { gone.append(rowid) }
            return true
        }
        try remove(gone, context)
        // In the parent's order, so that runs of rows land where the last one did.
        var entering: [(group: String, index: Int, rowid: Int64)] = []
        for rowid in kept where !state.contains(rowid: rowid) {
            guard let (group, index) = parent.locate(rowid: rowid) else { continue }
            entering.append((group, index, rowid))
        }
        entering.sort { $0.group != $1.group ? $0.group < $1.group : $0.index < $1.index }
        // With the parent's sort keys only the row's name is read.
        let flavour: ViewFlavour = definition.sorting.usesSortKeys ? .key : definition.sorting.flavour
        var start = 0
        while start < entering.count {
            let batch = entering[start ..< min(start + RowReader.batchSize, entering.count)]
            start = batch.endIndex
            let rows = try context.rows.loadRows(ArraySlice(batch.map(\.rowid)), flavour)
            for (entry, row) in zip(batch, rows) {
                try insert(entry.rowid, row, into: entry.group, parentKey: parent.sortKey(of: entry.rowid), context)
            }
        }
    }

    /// Makes this view hold exactly the rows of `parent` in `scores`, in the
    /// parent's groups, each placed by the sort key `key` makes of its score
    /// and row (a search view ordered by rank, whose every row's place
    /// changes with the query). Logged as what changed (`loggingDifference`).
    func rebuild(over parent: ViewState, scores: [Int64: Double], key: (Double, ViewRow) -> SortKey,
                 _ context: ExtensionWriteContext) throws {
        var shown: [Int64] = []
        state.forEachPlace { rowid, _ in
            shown.append(rowid)
            return true
        }
        try name(shown, context)   // the difference names the rows that leave
        var entering: [(group: String, rowid: Int64, score: Double)] = []
        for (rowid, score) in scores {
            if let place = parent.place(of: rowid) { entering.append((place.group, rowid, score)) }
        }
        try loggingDifference {
            try reset(keys: [:], context)
            var keyed: [(group: String, rowid: Int64, rowKey: RowKey, key: SortKey)] = []
            var start = 0
            while start < entering.count {
                let batch = entering[start ..< min(start + RowReader.batchSize, entering.count)]
                start = batch.endIndex
                for (entry, row) in zip(batch, try context.rows.loadRows(ArraySlice(batch.map(\.rowid)), .key)) {
                    keyed.append((entry.group, entry.rowid, RowKey(collection: row.collection, key: row.key),
                                  key(entry.score, row)))
                }
            }
            // In order, so that each lands after the last (one comparison).
            keyed.sort { $0.group != $1.group ? $0.group < $1.group : SortKey.compare($0.key, $1.key) < 0 }
            for row in keyed {
                let index = try position(of: .key(row.key), in: row.group, context)
                try place(row.rowid, row.rowKey, row.key, in: row.group, at: index, context)
            }
        }
    }

    /// Reads the names of `rowids` the log does not know, a batch at a time.
    private func name(_ rowids: [Int64], _ context: ExtensionWriteContext) throws {
        let unnamed = rowids.filter { keys[$0] == nil }
        var start = 0
        while start < unnamed.count {
            let batch = unnamed[start ..< min(start + RowReader.batchSize, unnamed.count)]
            start = batch.endIndex
            for (rowid, row) in zip(batch, try context.rows.loadRows(batch, .key)) {
                keys[rowid] = RowKey(collection: row.collection, key: row.key)
            }
        }
    }

    /// Removes rows this view shows, their names read a batch at a time
    /// (one statement per batch, not per row) unless the log knows them.
    private func remove(_ rowids: [Int64], _ context: ExtensionWriteContext) throws {
        try name(rowids, context)
        for rowid in rowids { try remove(rowid, keys[rowid]!, context) }
    }

    /// Places a row the parent shows in `group`: by the parent's own sort
    /// key when it has one (no callback runs), else as any insert.
    private func insert(_ rowid: Int64, _ row: ViewRow, into group: String, parentKey: SortKey?,
                        _ context: ExtensionWriteContext) throws {
        guard let key = parentKey, definition.sorting.usesSortKeys else {
            return try insert(rowid, row, into: group, context)
        }
        let index = try position(of: .key(key), in: group, context)
        try place(rowid, RowKey(collection: row.collection, key: row.key), key, in: group, at: index, context)
    }
}
