import XCTest
@testable import YDBView

/// `setObjects`: the same as a loop of `setObject` over each key's last row
/// (the views, their logs, the notification's changed rows and the
/// mappings' changesets), in views with and without batch forms; a key
/// given twice keeps its last row; a bad row refuses the whole batch before
/// anything is written; an empty batch changes nothing. The C test
/// `test_set_objects.c` checks the C layer and its batch callbacks.
final class SetObjectsTests: XCTestCase {
    typealias Row = (key: String, object: [UInt8], metadata: [UInt8]?)

    /// Calls of the callbacks of one database's views.
    struct Calls { var oneRow = 0, batch = 0 }

    /// The key-flavour view's group: by the key's number, some left out.
    static func keyGroup(_ key: String) -> String? {
        let number = Int(key.dropFirst()) ?? 0
        return number % 7 == 6 ? nil : "h\(number % 3)"
    }

    /// The rank alone: rows of equal rank tie ("tie" view).
    static func rankOnly(_ row: ViewRow) -> SortKey {
        var key = SortKey()
        key.append(Int64(Item.rank(row.object)))
        return key
    }

    static func rankThenKey(_ row: ViewRow) -> SortKey {
        var key = SortKey()
        key.append(Int64(Item.rank(row.object)))
        key.append(row.key)
        key.append(row.collection)
        return key
    }

    /// "v": groups and a comparator from the object (`rankView`); "k": the
    /// same in the sort-key form; "byKey": a key-flavour grouping (not
    /// re-run when a row changes) sorted by object; "tie": "k"'s groups by
    /// rank alone, so rows tie. With `batchForms`, "k", "byKey" and "tie"
    /// answer batches through their batch forms.
    /// Without `comparator`, "v" is left out: no callback then runs while a
    /// batch's rows are placed, and new rows for empty groups are placed
    /// together at the end of the batch (`ViewWriter.placeHeldRows`).
    static func views(batchForms: Bool, comparator: Bool = true, calls: Locked<Calls>) -> [String: View] {
        var views = allViews(batchForms: batchForms, calls: calls)
        if !comparator { views["v"] = nil }
        return views
    }

    private static func allViews(batchForms: Bool, calls: Locked<Calls>) -> [String: View] {
        guard batchForms else {
            let counter = CallCounter()
            return ["v": rankView(counter: counter), "k": rankView(counter: counter, keyed: true),
                    "byKey": View(grouping: ViewGrouping(flavour: .key) { keyGroup($0.key) },
                                  sorting: ViewSorting(flavour: .object, key: { _, row in rankThenKey(row) })),
                    "tie": View(grouping: ViewGrouping(flavour: .object) { Item.group($0.object) },
                                sorting: ViewSorting(flavour: .object, key: { _, row in rankOnly(row) }))]
        }
        func grouping(_ flavour: ViewFlavour, _ group: @escaping @Sendable (ViewRow) -> String?) -> ViewGrouping {
            ViewGrouping(flavour: flavour, { _, row in
                calls.mutate { $0.oneRow += 1 }
                return group(row)
            }, batch: { _, rows in
                calls.mutate { $0.batch += 1 }
                return rows.map { group($0.row) }
            })
        }
        func sorting(_ key: @escaping @Sendable (ViewRow) -> SortKey) -> ViewSorting {
            ViewSorting(flavour: .object, key: { _, _, row in
                calls.mutate { $0.oneRow += 1 }
                return key(row)
            }, batch: { _, rows in
                calls.mutate { $0.batch += 1 }
                return rows.map { key($0.row) }
            })
        }
        return ["v": rankView(), // no batch form: placed row by row
                "k": View(grouping: grouping(.object) { Item.group($0.object) }, sorting: sorting(rankThenKey)),
                "byKey": View(grouping: grouping(.key) { keyGroup($0.key) }, sorting: sorting(rankThenKey)),
                "tie": View(grouping: grouping(.object) { Item.group($0.object) }, sorting: sorting(rankOnly))]
    }

    static let mappingGroups: [String: [String]] = ["v": ["a", "b", "c"], "k": ["a", "b", "c"],
                                                    "byKey": ["h0", "h1", "h2"], "tie": ["a", "b", "c"]]

    /// A database with the views, mappings on a reader, and its notifications.
    final class Side {
        let database: Database
        let writer: Connection
        let reader: Connection
        let calls = Locked(Calls())
        let notifications = Locked<[CommitNotification]>([])
        var mappings: [String: Mappings] = [:]

        init(batchForms: Bool, comparator: Bool = true) throws {
            database = try Database(path: nil)
            writer = try database.newConnection()
            reader = try database.newConnection()
            for (name, view) in SetObjectsTests.views(batchForms: batchForms, comparator: comparator, calls: calls) {
                try database.registerView(view, name: name)
                mappings[name] = Mappings(groups: SetObjectsTests.mappingGroups[name]!, view: name)
            }
            try reader.beginLongLivedReadTransaction()
            try reader.read { t in for mappings in self.mappings.values { try mappings.update(with: t) } }
            _ = database.addCommitObserver { [notifications] n in notifications.mutate { $0.append(n) } }
        }

        func dump() throws -> [String: [String: [String]]] {
            try writer.read { t in
                var result: [String: [String: [String]]] = [:]
                for name in mappings.keys { result[name] = try t.view(name).dump() }
                return result
            }
        }

        /// Each view's changeset for the commits since the last call.
        func changesets() throws -> [String: Changeset] {
            let skipped = try reader.beginLongLivedReadTransaction()
            return try mappings.mapValues { try $0.changes(for: skipped) }
        }

        func rows() throws -> [String: String] {
            try writer.read { t in
                var result: [String: String] = [:]
                for collection in ["c", "d"] {
                    for key in try t.keys(inCollection: collection) {
                        guard let row = try t.row(forKey: key, inCollection: collection) else { continue }
                        result["\(collection)/\(key)"] = "\(row.object) \(row.metadata.map { "\($0)" } ?? "-")"
                    }
                }
                return result
            }
        }

        deinit { database.close() }
    }

    /// Each key's last row, in batch order.
    static func lastRows(_ rows: [Row]) -> [Row] {
        rows.enumerated().filter { index, row in !rows[(index + 1)...].contains { $0.key == row.key } }.map(\.1)
    }

    /// Random histories: A writes batches with `setObjects` into views with
    /// batch forms; B writes each key's last row with `setObject` into views
    /// without (the same rowids: logs and changesets compare exactly); C
    /// writes every row in order (the same rows and views).
    func testEqualsALoopOfSetObject() throws {
        try assertBatchesEqualLoops(comparator: true, emptying: false)
    }

    /// The same with sort-key views only, a commit in three starting by
    /// emptying a collection: a batch's new rows are held and placed
    /// together at its end (merged into their group, or one by one when
    /// they are few), logged as the loop logs them.
    func testNewRowsHeldAndPlacedTogetherEqualALoop() throws {
        let counts = try RarePaths.counting { try assertBatchesEqualLoops(comparator: false, emptying: true) }.counts
        XCTAssertGreaterThan(counts.heldGroupPlacements, 20)
        XCTAssertGreaterThan(counts.heldMergesIntoRows, 20)
        XCTAssertGreaterThan(counts.heldRowsPlacedSingly, 20)
    }

    /// A view repopulated earlier in the transaction logs its rows as a run
    /// (`ViewLogEntries.appendInserts`); the held rows' inserts logged
    /// after it are still filled in where they lie.
    func testHeldRowsAfterARepopulationInTheSameTransaction() throws {
        let a = try Side(batchForms: true, comparator: false), b = try Side(batchForms: false, comparator: false)
        let first: [Row] = (0..<12).map { ("k\($0)", Item.encode(group: ["a", "b"][$0 % 2], rank: $0 % 5), nil) }
        let more: [Row] = (12..<40).map { ("k\($0)", Item.encode(group: ["a", "b", "c"][$0 % 3], rank: $0 % 7), nil) }
        try a.writer.readWrite { try $0.setObjects(first, inCollection: "c") }
        try b.writer.readWrite { t in
            for row in first { try t.setObject(row.object, forKey: row.key, inCollection: "c", metadata: nil) }
        }
        _ = (try a.changesets(), try b.changesets())
        for side in [a, b] { side.notifications.mutate { $0 = [] } }
        let counts = try RarePaths.counting {
            for (side, batchForms) in [(a, true), (b, false)] {
                let view = Self.views(batchForms: batchForms, comparator: false, calls: side.calls)["tie"]!
                try side.writer.readWrite { t in
                    try t.setViewDefinition(name: "tie", grouping: view.grouping, sorting: view.sorting, versionTag: "2")
                    if batchForms {
                        try t.setObjects(more, inCollection: "c")
                    } else {
                        for row in more { try t.setObject(row.object, forKey: row.key, inCollection: "c", metadata: nil) }
                    }
                }
            }
        }.counts
        XCTAssertGreaterThan(counts.heldGroupPlacements, 0)
        XCTAssertEqual(try a.dump(), try b.dump())
        let (na, nb) = (a.notifications.value, b.notifications.value)
        XCTAssertEqual(na.count, 1)
        XCTAssertEqual(na.first?.viewLog(named: "tie")?.entries, nb.first?.viewLog(named: "tie")?.entries)
        XCTAssertEqual(try a.changesets(), try b.changesets())
    }

    private func assertBatchesEqualLoops(comparator: Bool, emptying: Bool) throws {
        for seed in UInt64(1)...UInt64(TestScale.pick(4, long: 8)) {
            var random = SeededGenerator(seed: seed)
            let a = try Side(batchForms: true, comparator: comparator)
            let b = try Side(batchForms: false, comparator: comparator)
            let c = try Side(batchForms: false, comparator: comparator)
            for commit in 0..<20 {
                let context = "seed \(seed), commit \(commit)"
                var batchCalls: [Int] = []
                for side in [a, b, c] { side.notifications.mutate { $0 = [] } }
                let emptied = emptying && Int.random(in: 0..<3, using: &random) == 0 ? "c" : nil
                let operations = (0..<Int.random(in: 1...3, using: &random)).map { _ -> (String, [Row], Bool) in
                    let collection = Int.random(in: 0..<6, using: &random) == 0 ? "d" : "c"
                    var rows: [Row] = []
                    for _ in 0..<Int.random(in: 0...15, using: &random) {
                        let key = !rows.isEmpty && Int.random(in: 0..<5, using: &random) == 0
                            ? rows.randomElement(using: &random)!.key : "k\(Int.random(in: 0..<120, using: &random))"
                        let group = ["a", "b", "c", nil].randomElement(using: &random)!
                        let metadata: [UInt8]? = Bool.random(using: &random) ? nil : [UInt8(rows.count)]
                        rows.append((key, Item.encode(group: group, rank: Int.random(in: 0..<30, using: &random)),
                                     metadata))
                    }
                    return (collection, rows, Int.random(in: 0..<10, using: &random) < 2)
                }
                try a.writer.readWrite { t in
                    if let emptied { try t.removeAllObjects(inCollection: emptied) }
                    for (collection, rows, remove) in operations {
                        if remove { try t.removeObject(forKey: rows.first?.key ?? "k0", inCollection: collection); continue }
                        let before = a.calls.value
                        try t.setObjects(rows, inCollection: collection)
                        XCTAssertEqual(a.calls.value.oneRow, before.oneRow, context)   // batch forms instead
                        batchCalls.append(a.calls.value.batch - before.batch)
                    }
                }
                XCTAssertTrue(batchCalls.allSatisfy { $0 <= 6 }, "\(context): \(batchCalls)")   // 3 views x 2 forms
                try b.writer.readWrite { t in
                    if let emptied { try t.removeAllObjects(inCollection: emptied) }
                    for (collection, rows, remove) in operations {
                        if remove { try t.removeObject(forKey: rows.first?.key ?? "k0", inCollection: collection); continue }
                        for row in Self.lastRows(rows) {
                            try t.setObject(row.object, forKey: row.key, inCollection: collection, metadata: row.metadata)
                        }
                    }
                }
                try c.writer.readWrite { t in
                    if let emptied { try t.removeAllObjects(inCollection: emptied) }
                    for (collection, rows, remove) in operations {
                        if remove { try t.removeObject(forKey: rows.first?.key ?? "k0", inCollection: collection); continue }
                        for row in rows {
                            try t.setObject(row.object, forKey: row.key, inCollection: collection, metadata: row.metadata)
                        }
                    }
                }
                XCTAssertEqual(try a.rows(), try b.rows(), context)
                XCTAssertEqual(try a.rows(), try c.rows(), context)
                XCTAssertEqual(try a.dump(), try b.dump(), context)
                // Setting a key twice may move its row among rows of equal
                // rank: C's "tie" view may differ (its rows are the same).
                XCTAssertEqual(try a.dump().filter { $0.key != "tie" }, try c.dump().filter { $0.key != "tie" }, context)
                let (na, nb) = (a.notifications.value, b.notifications.value)
                XCTAssertEqual(na.count, nb.count, context)
                if let na = na.first, let nb = nb.first {
                    XCTAssertEqual(na.changedRows, nb.changedRows, context)
                    for view in ["v", "k", "byKey", "tie"] {
                        XCTAssertEqual(na.viewLog(named: view)?.entries, nb.viewLog(named: view)?.entries, "\(context) \(view)")
                    }
                }
                XCTAssertEqual(try a.changesets(), try b.changesets(), context)
                _ = try c.changesets()
            }
        }
    }

    func testAKeyGivenTwiceKeepsItsLastRow() throws {
        let a = try Side(batchForms: true), b = try Side(batchForms: false)
        try a.writer.readWrite { try $0.setObjects([("k1", Item.encode(group: "a", rank: 1), nil)], inCollection: "c") }
        try b.writer.readWrite { try $0.setObject(Item.encode(group: "a", rank: 1), forKey: "k1", inCollection: "c", metadata: nil) }
        _ = (try a.changesets(), try b.changesets())
        a.calls.mutate { $0 = Calls() }
        let rows: [Row] = [("k2", Item.encode(group: "a", rank: 5), nil), ("k1", Item.encode(group: "b", rank: 2), nil),
                           ("k2", Item.encode(group: "b", rank: 1), [9]), ("k1", Item.encode(group: "a", rank: 7), [8])]
        try a.writer.readWrite { try $0.setObjects(rows, inCollection: "c") }
        XCTAssertEqual(a.calls.value.oneRow, 0)
        // k and tie: groups and keys; byKey: the group of the new k2 only, both keys.
        XCTAssertEqual(a.calls.value.batch, 6)
        try b.writer.readWrite { t in
            try t.setObject(Item.encode(group: "b", rank: 1), forKey: "k2", inCollection: "c", metadata: [9])
            try t.setObject(Item.encode(group: "a", rank: 7), forKey: "k1", inCollection: "c", metadata: [8])
        }
        try a.writer.read { t in
            XCTAssertEqual(try t.object(forKey: "k2", inCollection: "c"), Item.encode(group: "b", rank: 1))
            XCTAssertEqual(try t.metadata(forKey: "k1", inCollection: "c"), [8])
            XCTAssertEqual(try t.view("k").dump(), ["a": ["k1"], "b": ["k2"]])
        }
        XCTAssertEqual(try a.dump(), try b.dump())
        XCTAssertEqual(a.notifications.value.last?.changedRows, b.notifications.value.last?.changedRows)
        XCTAssertEqual(a.notifications.value.last?.viewLog(named: "k")?.entries,
                       b.notifications.value.last?.viewLog(named: "k")?.entries)
        XCTAssertEqual(try a.changesets(), try b.changesets())
    }

    /// A database whose handles store at most `limit` bytes per value
    /// (as `EdgeTests` makes one).
    func smallDatabase(limit: Int) throws -> Database {
        setenv("YDBVIEW_MAX_VALUE_BYTES", String(limit), 1)
        defer { unsetenv("YDBVIEW_MAX_VALUE_BYTES") }
        return try Database(path: nil)
    }

    func testABadRowRefusesTheWholeBatch() throws {
        let database = try smallDatabase(limit: 4096)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let connection = try database.newConnection()
        try connection.readWrite { try $0.setObject(Item.encode(group: "a", rank: 1), forKey: "old", inCollection: "c", metadata: nil) }
        let good = Item.encode(group: "a", rank: 2)
        func code(_ body: () throws -> Void) -> YDBErrorCode? {
            do { try body(); return nil } catch { return (error as? YDBError)?.code }
        }
        // Too big: refused before anything is written; the transaction goes on.
        try connection.readWrite { t in
            XCTAssertEqual(code { try t.setObjects([("new1", good, nil), ("old", good, nil),
                                                    ("new2", good, [UInt8](repeating: 1, count: 5000))],
                                                   inCollection: "c") }, .tooBig)
            XCTAssertNil(try t.object(forKey: "new1", inCollection: "c"))
            XCTAssertEqual(try t.view("v").dump(), ["a": ["old"]])
            try t.setObject(good, forKey: "after", inCollection: "c", metadata: nil)
        }
        // A NUL in a key or the collection: refused with nothing written (the
        // transaction then fails, as for setObject).
        for (rows, collection) in [([("new1", good, nil), ("b\u{0}ad", good, nil)] as [Row], "c"),
                                   ([("new1", good, nil)] as [Row], "c\u{0}")] {
            let transaction = try connection.beginReadWriteTransaction()
            XCTAssertEqual(code { try transaction.setObjects(rows, inCollection: collection) }, .invalidArgument)
            XCTAssertNil(try transaction.object(forKey: "new1", inCollection: "c"))   // poisoned, still readable
            XCTAssertEqual(code { try transaction.setObject(good, forKey: "x", inCollection: "c", metadata: nil) }, .misuse)
            transaction.rollback()
        }
        try connection.read { t in
            XCTAssertNil(try t.object(forKey: "new1", inCollection: "c"))
            XCTAssertEqual(try t.object(forKey: "old", inCollection: "c"), Item.encode(group: "a", rank: 1))
            XCTAssertEqual(try t.count(inCollection: "c"), 2)
            XCTAssertEqual(try t.view("v").dump(), ["a": ["old", "after"]])
        }
    }

    func testAnEmptyBatchIsANoOp() throws {
        let a = try Side(batchForms: true)
        try a.writer.readWrite { try $0.setObjects([("k1", Item.encode(group: "a", rank: 1), nil)], inCollection: "c") }
        let (before, dump, snapshot) = (a.calls.value, try a.dump(), a.database.snapshot)
        a.notifications.mutate { $0 = [] }
        try a.writer.readWrite { try $0.setObjects([], inCollection: "c") }
        try a.writer.readWrite { try $0.setObjects([], inCollection: "never used") }
        XCTAssertEqual(a.calls.value.oneRow + a.calls.value.batch, before.oneRow + before.batch)
        XCTAssertEqual(try a.dump(), dump)
        XCTAssertEqual(a.database.snapshot, snapshot)
        XCTAssertTrue(a.notifications.value.isEmpty)
    }
}
