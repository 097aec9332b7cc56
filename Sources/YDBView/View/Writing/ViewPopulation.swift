/// A population: every allowed row read, grouped and sorted, and the view
/// built from them at once (`ViewWriter.repopulate`), for a registration
/// and for a background one alike.
extension ViewWriter {
    /// Rebuilds the view from every allowed row, calling grouping once per
    /// row, and sorting O(n log n) times per group (comparator form) or once
    /// per row (sort-key form, then a native sort). Logged as a reset
    /// followed by inserts, so mappings of an existing view get a changeset.
    /// A population's peak memory per row, with room to spare over what
    /// the population benchmark reports (Benchmarks/README.md).
    static let populationBytesPerRow = 256

    func repopulate(_ context: ExtensionWriteContext) throws {
        if MemoryBudget.limit != nil {
            // Under an address-space limit, fail the registration rather
            // than the process (Swift stops it when an allocation fails).
            let rows = try context.rows.countAll()
            try MemoryBudget.check(rows * Self.populationBytesPerRow,
                                   for: "populating view '\(instance.name)' from \(rows) rows")
        }
        let sortingRows = definition.keepsSortingRowsInMemory ? SortingRowCache() : nil
        let population = ViewPopulation(name: instance.name, definition: definition, tick: populationTick,
                                        pause: populationPause, sortingRows: sortingRows)
        var (groups, scannedKeys) = try population.sortedGroups(context)
        if state.totalCount > 0 { try reset(keys: scannedKeys, context) } else { try clearStorage(context) }
        if let sortingRows { instance.rowCache = sortingRows }
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
        var places = ViewPopulation.PlacesInRowidOrder(groups, total: total)
        // Written in rowid order: appending to the table's B-tree instead of
        // touching random pages.
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
        places = ViewPopulation.PlacesInRowidOrder()
        var trees: [(GroupName, GroupTree)] = []
        for position in groups.indices {
            var rows = ViewPopulation.SortedRows.compared([])
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
        touchedAll = true
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
}

/// The scan and sort of a population, apart from the writer that builds
/// the view from them: it reads the rows and calls the callbacks, and
/// keeps nothing once done.
struct ViewPopulation {
    let name: String
    let definition: View
    /// Called every few thousand steps with the steps done so far (one per
    /// row grouped, then one per row sorted); throws to stop (cancellation).
    let tick: ((Int) throws -> Void)?
    /// Between chunks of the scan (`ViewWriter.populationPause`).
    let pause: ((_ more: Bool) throws -> Void)?
    /// Set when the view keeps its sorting rows in memory (comparator
    /// form): every row sorted, as the comparator saw it.
    var sortingRows: SortingRowCache? = nil
    /// Rows per chunk of a background population's scan.
    static let chunk = 10_000

    /// One group's rows in sort order, as a population sorts them: rowids,
    /// with each row's key in the sort-key form.
    enum SortedRows {
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
    struct PlacesInRowidOrder: Sequence {
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
    func sortedGroups(_ context: ExtensionWriteContext) throws
        -> (groups: [(Name, SortedRows)], keys: RowKeys) {
        let flavour = definition.grouping.flavour.union(definition.sorting.flavour)
        let sortingFlavour = definition.sorting.flavour
        let viewName = name
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
                try tick?(done)
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
                let narrowed = row.narrowed(to: sortingFlavour)
                scanned.rowids.append(rowid)
                _ = sortingRows?.store(narrowed, for: rowid, unbounded: true)
                if let prepared = scanned.prepared {
                    prepared.append(narrowed)
                } else {
                    scanned.rows.append(narrowed)
                }
            }
            // Progress (an asynchronous registration): pass by pass, and a
            // cancellation check every few thousand comparisons.
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
                        return try ViewCallbacks.run(viewName, "sorting") { try compare(a, b) } == .ascending
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

    /// Scans the rows a population reads (`scanned` sees each), asks their
    /// groups and, with `keys`, their sort keys, `Tuning.populationBatchSize`
    /// rows at a time (through the binding's population forms when it has
    /// them: `ViewGrouping.populationBatch`), and hands each
    /// row that has a group to `body` with its group and key, in scan
    /// order. A background population's batch never spans two of its read
    /// transactions.
    private func scanGrouped(_ flavour: ViewFlavour, _ context: ExtensionWriteContext,
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
    private func populationGroups(of rows: [ViewRow], _ context: ExtensionWriteContext) throws -> [String?] {
        guard let batch = definition.grouping.populationBatch else {
            return try rows.map { try ViewCallbacks.group(name, definition.grouping, $0, context) }
        }
        let flavour = definition.grouping.flavour
        var asked: [BatchedRow] = []
        asked.reserveCapacity(rows.count)
        for (position, row) in rows.enumerated() {
            asked.append(BatchedRow(index: position, group: "", row: row.narrowed(to: flavour)))
        }
        return try ViewCallbacks.askGroups(name, asked, batch, context)
    }

    /// The sort keys of those of `rows` that have a group, in order.
    private func populationKeys(of rows: [ViewRow], in groups: [String?],
                                _ keyFunction: @Sendable (ReadTransaction, String, ViewRow) throws -> SortKey,
                                _ context: ExtensionWriteContext) throws -> [SortKey] {
        let flavour = definition.sorting.flavour
        var asked: [BatchedRow] = []
        asked.reserveCapacity(rows.count)
        for (position, row) in rows.enumerated() {
            guard let group = groups[position] else { continue }
            asked.append(BatchedRow(index: position, group: group, row: row.narrowed(to: flavour)))
        }
        guard let batch = definition.sorting.populationKeyBatch else {
            return try asked.map { batched in
                try ViewCallbacks.run(name, "sorting") { try keyFunction(context.transaction, batched.group, batched.row) }
            }
        }
        return try ViewCallbacks.askKeys(name, asked, batch, context)
    }

    /// Every allowed row, as a callback of `flavour` reads it.
    /// `beforePause` runs before a background population's scan pauses
    /// (`pause`), while the read transaction it scans is open.
    private func scanRows(_ flavour: ViewFlavour, _ context: ExtensionWriteContext, beforePause: () throws -> Void,
                          _ body: (Int64, ViewRow) throws -> Void) throws {
        let collections = definition.scannedCollections
        guard let tick, let pause else {
            try context.rows.scan(flavour, collections: collections, body)
            return
        }
        var scanned = 0
        try context.rows.scan(flavour, collections: collections, chunk: Self.chunk, between: { more in
            try beforePause()
            try pause(more)
        }) { rowid, row in
            try body(rowid, row)
            scanned += 1
            if scanned & 1023 == 0 { try tick(scanned) }
        }
        try tick(scanned)
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
