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
    /// Costs one pass over the parent's rows (reading them a batch at a
    /// time for the filter), plus O(log n) per row entering or leaving.
    func refilter(over parent: ViewState, reevaluating: Bool, _ context: ExtensionWriteContext) throws {
        guard let filtering = definition.filtering else { return }
        // Rows the parent no longer shows in the same group leave first.
        var gone: [Int64] = []
        state.forEachPlace { rowid, place in
            if parent.place(of: rowid).map({ !bytesEqual($0.group, place.group) }) ?? true { gone.append(rowid) }
            return true
        }
        for rowid in gone {
            guard let rowKey = try keys[rowid] ?? context.rows.rowKey(forRowid: rowid) else {
                throw YDBError(.corrupt, "view '\(instance.name)' shows row \(rowid), which is missing")
            }
            try remove(rowid, rowKey, context)
        }
        let flavour = filtering.filter.flavour.union(definition.sorting.flavour)
        for group in parent.groupNames {
            var asked: [Int64] = []
            parent.group(group)!.forEach { _, rowid in
                if reevaluating || !state.contains(rowid: rowid) { asked.append(rowid) }
                return true
            }
            var start = 0
            while start < asked.count {
                let batch = asked[start ..< min(start + RowReader.batchSize, asked.count)]
                start = batch.endIndex
                for (rowid, row) in zip(batch, try context.rows.loadRows(batch, flavour)) {
                    let keeps = try ViewCallbacks.run(instance.name, "filter") {
                        try filtering.filter.run(try context.transaction, group, row.narrowed(to: filtering.filter.flavour))
                    }
                    let shown = state.contains(rowid: rowid)
                    if shown && !keeps {
                        try remove(rowid, RowKey(collection: row.collection, key: row.key), context)
                    } else if !shown && keeps {
                        try insert(rowid, row, into: group, parentKey: parent.sortKey(of: rowid), context)
                    }
                }
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
        for rowid in gone {
            guard let rowKey = try keys[rowid] ?? context.rows.rowKey(forRowid: rowid) else {
                throw YDBError(.corrupt, "view '\(instance.name)' shows row \(rowid), which is missing")
            }
            try remove(rowid, rowKey, context)
        }
        // In the parent's order, so that runs of rows land where the last one did.
        var entering: [(group: String, index: Int, rowid: Int64)] = []
        for rowid in kept where !state.contains(rowid: rowid) {
            guard let (group, index) = parent.locate(rowid: rowid) else { continue }
            entering.append((group, index, rowid))
        }
        entering.sort { $0.group != $1.group ? $0.group < $1.group : $0.index < $1.index }
        var start = 0
        while start < entering.count {
            let batch = entering[start ..< min(start + RowReader.batchSize, entering.count)]
            start = batch.endIndex
            let rows = try context.rows.loadRows(ArraySlice(batch.map(\.rowid)), definition.sorting.flavour)
            for (entry, row) in zip(batch, rows) {
                try insert(entry.rowid, row, into: entry.group, parentKey: parent.sortKey(of: entry.rowid), context)
            }
        }
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
