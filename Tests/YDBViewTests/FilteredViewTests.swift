import XCTest
@testable import YDBView

/// Filtered views: the parent's groups and order, only the rows the filter
/// keeps; a new filter logs exactly the rows that enter and leave.
final class FilteredViewTests: XCTestCase {
    /// The filters histories switch between (by rank, by key, by metadata).
    static let filters: [(String, ViewFilter)] = [
        ("all", ViewFilter(flavour: .key) { _, _ in true }),
        ("even", ViewFilter(flavour: .object) { _, row in Item.rank(row.object) % 2 == 0 }),
        ("low", ViewFilter(flavour: .object) { _, row in Item.rank(row.object) < 8 }),
        ("k1x", ViewFilter(flavour: .key) { _, row in row.key.hasPrefix("k1") }),
        ("notA", ViewFilter(flavour: .object) { group, _ in group != "a" }),
        ("meta", ViewFilter(flavour: .metadata) { _, row in (row.metadata?.first ?? 0) % 3 != 0 }),
        ("none", ViewFilter(flavour: .key) { _, _ in false }),
    ]

    private var database: Database!
    private var connection: Connection!

    override func setUp() {
        database = try! Database(path: nil)
        connection = try! database.newConnection()
    }

    override func tearDown() { database.close() }

    private func set(_ key: String, _ group: String?, _ rank: Int, metadata: [UInt8]? = nil) throws {
        try connection.readWrite {
            try $0.setObject(Item.encode(group: group, rank: rank), forKey: key, inCollection: "items", metadata: metadata)
        }
    }

    private func dump(_ view: String) throws -> [String: [String]] {
        try connection.read { try $0.view(view).dump() }
    }

    /// The parent's contents, filtered: what a filtered view must show.
    private func expected(parent: String, filter: ViewFilter) throws -> [String: [String]] {
        try connection.read { t in
            var result: [String: [String]] = [:]
            let parentView = try t.view(parent)
            for group in try parentView.allGroups() {
                let keys = try (0 ..< parentView.numberOfItems(inGroup: group)).compactMap { index -> String? in
                    guard let (rowKey, object, metadata) = try parentView.row(at: index, inGroup: group) else { return nil }
                    let viewRow = ViewRow(collection: rowKey.collection, key: rowKey.key, object: object, metadata: metadata)
                    return try filter.run(t, group, viewRow.narrowed(to: filter.flavour)) ? rowKey.key : nil
                }
                if !keys.isEmpty { result[group] = keys }
            }
            return result
        }
    }

    func testFilteredViewFollowsCommits() throws {
        try database.registerView(rankView(), name: "byRank")
        for rank in 0 ..< 10 { try set("k\(rank)", rank < 5 ? "a" : "b", rank) }
        let even = Self.filters[1].1
        XCTAssertEqual(try database.registerFilteredView(FilteredView(parent: "byRank", filter: even, versionTag: "1"),
                                                         name: "even"), .built)
        XCTAssertEqual(try dump("even"), ["a": ["k0", "k2", "k4"], "b": ["k6", "k8"]])
        try set("k1", "b", 12)       // enters (even), in group b, at the end
        try set("k2", "a", 3)        // leaves
        try connection.readWrite { try $0.removeObject(forKey: "k8", inCollection: "items") }
        XCTAssertEqual(try dump("even"), ["a": ["k0", "k4"], "b": ["k6", "k1"]])
        XCTAssertEqual(try dump("even"), try expected(parent: "byRank", filter: even))
        XCTAssertEqual(try connection.read { try $0.view("even").versionTag },
                       Filtering.versionTag(filterTag: "1", parentTag: "1"))
    }

    func testNewFilterLogsExactlyTheRowsThatEnterAndLeave() throws {
        try database.registerView(rankView(), name: "byRank")
        for rank in 0 ..< 20 { try set("k\(rank)", "g", rank) }
        try database.registerFilteredView(FilteredView(parent: "byRank", filter: Self.filters[1].1, versionTag: "even"),
                                          name: "f")
        let reader = try database.newConnection()
        try reader.beginLongLivedReadTransaction()
        let mappings = Mappings(groups: ["g"], view: "f")
        try reader.read { try mappings.update(with: $0) }
        // even → low: 1, 3, 5, 7 enter; 8 … 18 leave; 0, 2, 4, 6 stay.
        try connection.readWrite { try $0.setFilter(Self.filters[2].1, versionTag: "low", forView: "f") }
        let changeset = try mappings.changes(for: try reader.beginLongLivedReadTransaction())
        XCTAssertEqual(changeset.rowChanges.filter { $0.type == .insert }.compactMap { $0.rowKey?.key }.sorted(),
                       ["k1", "k3", "k5", "k7"])
        XCTAssertEqual(changeset.rowChanges.filter { $0.type == .delete }.compactMap { $0.rowKey?.key }.sorted(),
                       ["k10", "k12", "k14", "k16", "k18", "k8"])
        XCTAssertEqual(changeset.rowChanges.count, 10)
        XCTAssertEqual(try dump("f"), ["g": (0 ..< 8).map { "k\($0)" }])
        // The same tag again: nothing happens, even with another filter.
        try connection.readWrite { try $0.setFilter(Self.filters[6].1, versionTag: "low", forView: "f") }
        XCTAssertEqual(try dump("f"), ["g": (0 ..< 8).map { "k\($0)" }])
    }

    func testStackedFiltersFollowTheirParents() throws {
        try database.registerView(rankView(), name: "byRank")
        for rank in 0 ..< 20 { try set("k\(rank)", rank % 3 == 0 ? "a" : "b", rank) }
        try database.registerFilteredView(FilteredView(parent: "byRank", filter: Self.filters[2].1, versionTag: "low"),
                                          name: "low")
        try database.registerFilteredView(FilteredView(parent: "low", filter: Self.filters[1].1, versionTag: "even"),
                                          name: "lowEven")
        XCTAssertEqual(try dump("lowEven"), ["a": ["k0", "k6"], "b": ["k2", "k4"]])
        // The middle view's filter changes: the one over it follows.
        try connection.readWrite { try $0.setFilter(Self.filters[0].1, versionTag: "all", forView: "low") }
        XCTAssertEqual(try dump("lowEven"), try expected(parent: "byRank", filter: Self.filters[1].1))
        // The root is re-sorted: both follow, as moves.
        let descending = ViewSorting(flavour: .object) { _, a, b in
            let ra = Item.rank(a.object), rb = Item.rank(b.object)
            return ra == rb ? .same : ra > rb ? .ascending : .descending
        }
        try connection.readWrite {
            try $0.setViewDefinition(name: "byRank", grouping: rankView().grouping, sorting: descending, versionTag: "2")
        }
        XCTAssertEqual(try dump("lowEven")["a"], ["k18", "k12", "k6", "k0"])
        XCTAssertEqual(try dump("lowEven"), try expected(parent: "byRank", filter: Self.filters[1].1))
        // Unregistering the root unregisters the views over it.
        try database.unregisterView(name: "byRank")
        XCTAssertEqual(database.registeredViewNames, [])
    }

    func testRefusals() throws {
        try database.registerView(rankView(), name: "byRank")
        let filter = Self.filters[1].1
        XCTAssertThrowsError(try database.registerFilteredView(FilteredView(parent: "nope", filter: filter), name: "f")) {
            XCTAssertEqual(($0 as? YDBError)?.code, .notFound)
        }
        try database.registerFilteredView(FilteredView(parent: "byRank", filter: filter, versionTag: "1"), name: "f")
        try database.registerFilteredView(FilteredView(parent: "f", filter: filter, versionTag: "1"), name: "g")
        // "f" filtered over "g", which is filtered over "f": a cycle.
        XCTAssertThrowsError(try database.registerFilteredView(FilteredView(parent: "g", filter: filter, versionTag: "2"),
                                                               name: "f")) {
            XCTAssertEqual(($0 as? YDBError)?.code, .invalidArgument)
        }
        XCTAssertThrowsError(try connection.readWrite { try $0.setFilter(filter, versionTag: "2", forView: "byRank") }) {
            XCTAssertEqual(($0 as? YDBError)?.code, .misuse)
        }
        XCTAssertThrowsError(try connection.readWrite {
            try $0.setViewDefinition(name: "f", grouping: rankView().grouping, sorting: rankView().sorting, versionTag: "9")
        }) { XCTAssertEqual(($0 as? YDBError)?.code, .misuse) }
        XCTAssertThrowsError(try connection.readWrite { try $0.setFilter(filter, versionTag: "2", forView: "nope") }) {
            XCTAssertEqual(($0 as? YDBError)?.code, .notFound)
        }
        XCTAssertEqual(database.registeredViewNames.sorted(), ["byRank", "f", "g"])
    }

    func testAFailingFilterRollsBackItsTransaction() throws {
        try database.registerView(rankView(), name: "byRank")
        for rank in 0 ..< 5 { try set("k\(rank)", "g", rank) }
        try database.registerFilteredView(FilteredView(parent: "byRank", filter: Self.filters[1].1, versionTag: "1"),
                                          name: "f")
        struct Refused: Error {}
        let failing = ViewFilter(flavour: .object) { _, row in
            if Item.rank(row.object) == 3 { throw Refused() }
            return true
        }
        XCTAssertThrowsError(try connection.readWrite { try $0.setFilter(failing, versionTag: "2", forView: "f") }) {
            XCTAssertEqual(($0 as? YDBError)?.code, .callbackFailed)
        }
        XCTAssertEqual(try dump("f"), ["g": ["k0", "k2", "k4"]])
        XCTAssertEqual(try connection.read { try $0.view("f").versionTag },
                       Filtering.versionTag(filterTag: "1", parentTag: "1"))
    }

    func testTouchingAGroupRunsTheFilterAgain() throws {
        try database.registerView(rankView(), name: "byRank")
        for rank in 0 ..< 6 { try set("k\(rank)", "g", rank) }
        let threshold = Locked(3)
        let below = ViewFilter(flavour: .object) { _, row in Item.rank(row.object) < threshold.value }
        try database.registerFilteredView(FilteredView(parent: "byRank", filter: below, versionTag: "1"), name: "f")
        XCTAssertEqual(try dump("f"), ["g": ["k0", "k1", "k2"]])
        threshold.mutate { $0 = 5 }
        try connection.readWrite { try $0.touchRows(forKeys: ["k3"], inCollection: "items") }
        XCTAssertEqual(try dump("f"), ["g": ["k0", "k1", "k2", "k3"]])
        try connection.readWrite { try $0.touchRows(inGroup: "g", ofView: "byRank") }
        XCTAssertEqual(try dump("f"), ["g": ["k0", "k1", "k2", "k3", "k4"]])
    }

    func testPersistentFilteredViewLoadsAsStored() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ydbview-filtered-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        let calls = Locked(0)
        let counted = ViewFilter(flavour: .object) { _, row in
            calls.mutate { $0 += 1 }
            return Item.rank(row.object) % 2 == 0
        }
        do {
            let database = try Database(path: path)
            try database.registerView(rankView(), name: "byRank")
            let connection = try database.newConnection()
            try connection.readWrite { t in
                for rank in 0 ..< 10 {
                    try t.setObject(Item.encode(group: "g", rank: rank), forKey: "k\(rank)", inCollection: "items", metadata: nil)
                }
            }
            try database.registerFilteredView(FilteredView(parent: "byRank", filter: counted, versionTag: "1"), name: "f")
            database.close()
        }
        calls.mutate { $0 = 0 }
        do {
            let database = try Database(path: path)
            try database.registerView(rankView(), name: "byRank")
            XCTAssertEqual(try database.registerFilteredView(FilteredView(parent: "byRank", filter: counted, versionTag: "1"),
                                                             name: "f"), .loaded)
            XCTAssertEqual(calls.value, 0)
            XCTAssertEqual(try database.newConnection().read { try $0.view("f").dump() }, ["g": ["k0", "k2", "k4", "k6", "k8"]])
            database.close()
        }
        do {
            // A parent with a new tag: the filtered view is built again.
            let database = try Database(path: path)
            try database.registerView(rankView(tag: "2"), name: "byRank")
            XCTAssertEqual(try database.registerFilteredView(FilteredView(parent: "byRank", filter: counted, versionTag: "1"),
                                                             name: "f"), .rebuiltForNewVersionTag)
            database.close()
        }
    }

    /// Random histories mixing commits, new filters (on a filtered view and
    /// on one stacked over it), re-sorts of the root and touches, under
    /// random mappings over both: each changeset applied to the old table
    /// gives the new one, step by step too, and each view equals its
    /// parent's rows filtered from scratch.
    func testRandomHistoriesGiveValidChangesets() throws {
        var filterChanges = 0, changesets = 0
        for seed in randomSeeds(43_000, TestScale.pick(600, long: 6_000)) {
            var rng = SeededGenerator(seed: seed)
            let keyed = Bool.random(using: &rng)
            database.close()
            database = try Database(path: nil)
            connection = try database.newConnection()
            let (grouping, sorting) = RedefinitionTests.definition(.rank, .byGroup, keyed: keyed)
            try database.registerView(View(grouping: grouping, sorting: sorting, versionTag: "0",
                                           isPersistent: Bool.random(using: &rng)), name: "root")
            var ignored = Set<RowKey>()
            try connection.readWrite { t in
                for _ in 0 ..< Int.random(in: 0 ... 40, using: &rng) { try randomWrite(t, &rng, touched: &ignored) }
            }
            var current = ["f": Self.filters.randomElement(using: &rng)!, "ff": Self.filters.randomElement(using: &rng)!]
            try database.registerFilteredView(FilteredView(parent: "root", filter: current["f"]!.1, versionTag: "0",
                                                           isPersistent: Bool.random(using: &rng)), name: "f")
            try database.registerFilteredView(FilteredView(parent: "f", filter: current["ff"]!.1, versionTag: "0",
                                                           isPersistent: Bool.random(using: &rng)), name: "ff")
            let reader = try database.newConnection()
            try reader.beginLongLivedReadTransaction()
            let configs = [RandomScenario.config(using: &rng), RandomScenario.config(using: &rng)]
            let mappings = [configs[0].make(view: "f"), configs[1].make(view: "ff")]
            try reader.read { t in for m in mappings { try m.update(with: t) } }
            var tag = 0
            for round in 0 ..< Int.random(in: 1 ... 4, using: &rng) {
                let oldTables = try reader.read { t in
                    try zip(mappings, ["f", "ff"]).map { Table(mappings: $0, contents: try t.viewContents(named: $1)) }
                }
                for _ in 0 ..< Int.random(in: 1 ... 3, using: &rng) {
                    try connection.readWrite { t in
                        for _ in 0 ..< Int.random(in: 0 ... 4, using: &rng) {
                            tag += 1
                            switch Int.random(in: 0 ..< 10, using: &rng) {
                            case 0, 1:
                                let view = ["f", "ff"].randomElement(using: &rng)!
                                current[view] = Self.filters.randomElement(using: &rng)!
                                try t.setFilter(current[view]!.1, versionTag: "\(tag)", forView: view)
                                filterChanges += 1
                            case 2:
                                let (grouping, sorting) = RedefinitionTests.definition(
                                    RedefinitionTests.Order.allCases.randomElement(using: &rng)!, .byGroup, keyed: keyed)
                                try t.setViewDefinition(name: "root", grouping: grouping, sorting: sorting, versionTag: "\(tag)")
                            case 3:
                                try t.touchRows(inGroup: ["a", "b", "c"].randomElement(using: &rng)!, ofView: "root")
                            default:
                                try randomWrite(t, &rng, touched: &ignored)
                            }
                        }
                    }
                }
                let notifications = try reader.beginLongLivedReadTransaction()
                for (index, name) in ["f", "ff"].enumerated() {
                    let changeset = try mappings[index].changes(for: notifications)
                    let newTable = try reader.read { Table(mappings: mappings[index], contents: try $0.viewContents(named: name)) }
                    let context = "seed \(seed) round \(round) view \(name) keyed \(keyed)\nconfig \(configs[index])\nold \(oldTables[index])\nnew \(newTable)\nchangeset \(changeset.sectionChanges) \(changeset.rowChanges)"
                    do {
                        let applied = try BatchUpdate(changeset).apply(to: oldTables[index])
                        guard applied == newTable else { return XCTFail("applied \(applied)\n\(context)") }
                        try BatchUpdate<Int64>.check(steps: changeset.steps(), from: oldTables[index], to: newTable,
                                                     naming: BatchUpdate<Int64>.rowid)
                    } catch {
                        return XCTFail("\(error)\n\(context)")
                    }
                    changesets += 1
                }
                XCTAssertEqual(try dump("f"), try expected(parent: "root", filter: current["f"]!.1), "seed \(seed)")
                XCTAssertEqual(try dump("ff"), try expected(parent: "f", filter: current["ff"]!.1), "seed \(seed)")
            }
        }
        print("FilteredViewTests: \(changesets) changesets, \(filterChanges) filter changes")
        XCTAssertGreaterThan(filterChanges, 50)
    }
}
