extension ReadTransaction {
    /// The view registered as `name`, as of this transaction (inside a
    /// read-write transaction: including its own changes so far). Throws
    /// `.notFound`, naming it, when no such view is registered at this
    /// snapshot (`hasView` asks without throwing).
    public func view(_ name: String) throws -> ViewTransaction {
        try access(.readViews) {
            guard viewInstance(named: name) != nil else {
                let why = connection.database.replayFailure(ofView: name).map { ": \($0)" } ?? ""
                throw YDBError(.notFound, "no view named '\(name)' is registered\(why)")
            }
            return ViewTransaction(transaction: self, name: name)
        }
    }

    /// Whether a view is registered as `name` as of this transaction.
    public func hasView(_ name: String) throws -> Bool {
        try access(.readViews) { viewInstance(named: name) != nil }
    }
}

/// Queries on one view inside one transaction (YapDatabaseViewTransaction).
/// Every lookup by index or by row is O(log n).
///
/// ```swift
/// try connection.read { t in
///     let view = try t.view("byTitle")
///     let first = try view.rowKey(at: 0, inGroup: "books")
/// }
/// ```
public struct ViewTransaction {
    let transaction: ReadTransaction
    public let name: String

    private func withState<T>(_ body: (ViewState) throws -> T) throws -> T {
        try transaction.access(.readViews) {
            guard let instance = transaction.viewInstance(named: name) else {
                throw YDBError(.notFound, "view '\(name)' is no longer registered")
            }
            return try body(instance.state)
        }
    }

    /// The current contents as an immutable value (for mappings).
    public func contents() throws -> any ViewContents { try withState { $0 } }

    public var versionTag: String {
        get throws {
            try transaction.access(.readViews) { transaction.viewInstance(named: name)?.definition.versionTag ?? "" }
        }
    }

    // MARK: Groups

    public func numberOfGroups() throws -> Int { try withState { $0.groups.count } }
    /// Every non-empty group, in ascending order.
    public func allGroups() throws -> [String] { try withState { $0.groupNames } }
    public func hasGroup(_ group: String) throws -> Bool { try withState { $0.group(group) != nil } }
    public func numberOfItems(inGroup group: String) throws -> Int { try withState { $0.count(inGroup: group) } }
    public func numberOfItemsInAllGroups() throws -> Int { try withState { $0.totalCount } }
    public func isEmpty() throws -> Bool { try withState { $0.totalCount == 0 } }

    // MARK: Rows by position

    /// The (collection, key) at `index` of `group`, or nil when out of range.
    public func rowKey(at index: Int, inGroup group: String) throws -> RowKey? {
        try withState { state in
            guard let rowid = state.rowid(at: index, inGroup: group) else { return nil }
            return try transaction.rowKey(forRowid: rowid)
        }
    }

    public func firstRowKey(inGroup group: String) throws -> RowKey? { try rowKey(at: 0, inGroup: group) }

    public func lastRowKey(inGroup group: String) throws -> RowKey? {
        try rowKey(at: numberOfItems(inGroup: group) - 1, inGroup: group)
    }

    /// Object and metadata of the row at `index` of `group`.
    public func row(at index: Int, inGroup group: String) throws -> (key: RowKey, object: [UInt8], metadata: [UInt8]?)? {
        try withState { state in
            guard let rowid = state.rowid(at: index, inGroup: group) else { return nil }
            let row = try transaction.loadRow(rowid, .row, cached: true)
            return (RowKey(collection: row.collection, key: row.key), row.object ?? [], row.metadata)
        }
    }

    public func object(at index: Int, inGroup group: String) throws -> [UInt8]? {
        try row(at: index, inGroup: group)?.object
    }

    public func metadata(at index: Int, inGroup group: String) throws -> [UInt8]? {
        try row(at: index, inGroup: group)?.metadata
    }

    /// Where a row stands in the view, or nil when the view does not hold it.
    public func position(forKey key: String, inCollection collection: String) throws -> (group: String, index: Int)? {
        try withState { state in
            guard let rowid = try transaction.rowid(forKey: key, inCollection: collection) else { return nil }
            return state.locate(rowid: rowid)
        }
    }

    public func group(forKey key: String, inCollection collection: String) throws -> String? {
        try position(forKey: key, inCollection: collection)?.group
    }

    // MARK: Enumeration

    /// Visits the rows of `group` with index in `range` (all when nil),
    /// forwards or backwards; set the `inout Bool` to stop.
    public func enumerateKeys(inGroup group: String, range: Range<Int>? = nil, reverse: Bool = false,
                              _ body: (RowKey, Int, inout Bool) throws -> Void) throws {
        try enumerate(group, range, reverse, .key) { row, index, stop in
            try body(RowKey(collection: row.collection, key: row.key), index, &stop)
        }
    }

    /// Like `enumerateKeys`, with each row's object and metadata.
    public func enumerateRows(inGroup group: String, range: Range<Int>? = nil, reverse: Bool = false,
                              _ body: (RowKey, [UInt8], [UInt8]?, Int, inout Bool) throws -> Void) throws {
        try enumerate(group, range, reverse, .row) { row, index, stop in
            try body(RowKey(collection: row.collection, key: row.key), row.object ?? [], row.metadata, index, &stop)
        }
    }

    /// The rows of `group` with index in `range` (clamped to the group),
    /// forwards or backwards, in one call: what a screen shows. Unlike the
    /// enumerations, no code of the caller runs in between, so nothing is
    /// wrapped per row. A range no longer than the connection's
    /// `rowCacheLimit` goes through its row cache.
    public func rows(inGroup group: String, range: Range<Int>, reverse: Bool = false) throws
        -> [(key: RowKey, object: [UInt8], metadata: [UInt8]?)] {
        let rowids: [Int64] = try withState { state in
            guard let tree = state.group(group) else { return [] }
            let lower = max(0, range.lowerBound), upper = min(tree.count, range.upperBound)
            guard lower < upper else { return [] }
            var rowids: [Int64] = []
            rowids.reserveCapacity(upper - lower)
            tree.forEach(in: lower ..< upper, reverse: reverse) { _, rowid in
                rowids.append(rowid)
                return true
            }
            return rowids
        }
        let cached = transaction.cachesRead(of: rowids.count)
        var found: [(key: RowKey, object: [UInt8], metadata: [UInt8]?)] = []
        found.reserveCapacity(rowids.count)
        for start in stride(from: 0, to: rowids.count, by: RowReader.batchSize) {
            let batch = rowids[start ..< min(start + RowReader.batchSize, rowids.count)]
            let rows = try transaction.access { try transaction.loadRows(batch, .row, cached: cached) }
            for row in rows { found.append((RowKey(collection: row.collection, key: row.key), row.object ?? [], row.metadata)) }
        }
        return found
    }

    private func enumerate(_ group: String, _ range: Range<Int>?, _ reverse: Bool, _ flavour: ViewFlavour,
                           _ body: (ViewRow, Int, inout Bool) throws -> Void) throws {
        // The group is read from this transaction's snapshot up front, so the
        // callback may query the transaction freely.
        guard let tree = try withState({ $0.group(group) }) else { return }
        let lower = max(0, range?.lowerBound ?? 0)
        let upper = min(tree.count, range?.upperBound ?? tree.count)
        guard lower < upper else { return }
        // Rows are read a batch at a time (one statement for up to 64), and
        // handed over one by one: a range on screen costs a few statements.
        var index = reverse ? upper - 1 : lower
        var failure: Error?
        var rowids: [Int64] = []
        rowids.reserveCapacity(RowReader.batchSize)
        // Whole rows of a short range (a screen) go through the connection's
        // row cache: after a commit, only the rows it changed are read again.
        let cached = transaction.cachesRead(of: upper - lower)
        func handOver() throws -> Bool {
            let rows = try transaction.access { try transaction.loadRows(rowids[...], flavour, cached: cached) }
            rowids.removeAll(keepingCapacity: true)
            for row in rows {
                var stop = false
                try transaction.connection.runningUserCode(.enumeration) { try body(row, index, &stop) }
                index += reverse ? -1 : 1
                if stop { return false }
            }
            return true
        }
        var going = true
        tree.forEach(in: lower ..< upper, reverse: reverse) { _, rowid in
            rowids.append(rowid)
            guard rowids.count == RowReader.batchSize else { return true }
            do {
                going = try handOver()
            } catch {
                failure = error
                going = false
            }
            return going
        }
        if let failure { throw failure }
        if going && !rowids.isEmpty { _ = try handOver() }
    }

    // MARK: Find

    /// The range of indexes of `group` for which `find` answers `.same`,
    /// found by binary search (O(log n) calls), or nil when there is none.
    /// `find` must agree with the view's sort order (see ViewFind). A find
    /// that takes the transaction gets a read-only handle of this one.
    public func find(inGroup group: String, using find: ViewFind) throws -> Range<Int>? {
        let tree: GroupTree? = try withState { $0.group(group) }
        guard let tree else { return nil }
        func order(_ index: Int) throws -> ViewOrder {
            let rowid = tree.element(at: index)!.value
            let row = try transaction.access { try transaction.loadRow(rowid, find.flavour) }
            return try transaction.connection.runningUserCode(.enumeration) {
                try ViewCallbacks.run(name, "find") { try find.run(transaction, row) }
            }
        }
        // First index not before the range, then first index after it.
        var low = 0, high = tree.count
        while low < high {
            let mid = (low + high) / 2
            if try order(mid) == .ascending { low = mid + 1 } else { high = mid }
        }
        let start = low
        guard start < tree.count, try order(start) == .same else { return nil }
        high = tree.count
        while low < high {
            let mid = (low + high) / 2
            if try order(mid) == .descending { high = mid } else { low = mid + 1 }
        }
        return start ..< low
    }
}
