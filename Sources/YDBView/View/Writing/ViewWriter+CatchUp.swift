/// An asynchronous registration's side of a view: the view it populated
/// off to the side is brought up to date with the commits made meanwhile
/// (`catchUp`), then taken over by the view's writer (`adopt`).
extension ViewWriter {
    /// Takes over the rows of `built`, a writer that populated this view's
    /// new definition off to the side (an asynchronous registration), and
    /// logs and stores them as `repopulate` does: "all rows removed" when
    /// the view held rows, then `built`'s own log (its population, and what
    /// it caught up since). Call `takeDefinition` first. Without `storing`,
    /// the rows are left for the caller to store (`ViewStorage.put`), and
    /// only what changes from here on is stored.
    func adopt(_ built: ViewWriter, storing: Bool, _ context: ExtensionWriteContext) throws {
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
        touchedAll = true
        instance.hint = .none
        // The rows `built` compared against: still as they are, but for the
        // rows changed since, which `catchUp` forgets first.
        instance.rowCache = built.instance.rowCache
        // In rowid order, as `repopulate` writes them.
        if storing, let id = instance.storageID { try ViewStorage.putAll(state, id: id, context.storage) }
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
                 _ context: ExtensionWriteContext) throws {
        let flavour = definition.grouping.flavour.union(definition.sorting.flavour)
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

    var unplacedCount: Int { unplaced.count }
}
