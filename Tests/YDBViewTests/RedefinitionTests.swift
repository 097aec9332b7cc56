import XCTest
@testable import YDBView

/// Re-sorting and regrouping in place (`setViewDefinition`): the changeset
/// is a valid batch update and edit script, never a reset, and moves only
/// the rows that leave a longest run keeping their order.
final class RedefinitionTests: XCTestCase {
    /// The definitions a history switches between: every order and grouping
    /// of `Item` rows, each in the comparator and the sort-key form.
    enum Order: CaseIterable { case rank, rankDescending, key, keyDescending }
    enum Grouping: CaseIterable { case byGroup, byRankParity, single }

    static func definition(_ order: Order, _ grouping: Grouping, keyed: Bool) -> (ViewGrouping, ViewSorting) {
        let group: ViewGrouping
        switch grouping {
        case .byGroup: group = ViewGrouping(flavour: .object) { Item.group($0.object) }
        case .byRankParity:
            group = ViewGrouping(flavour: .object) { row in
                Item.group(row.object).map { _ in Item.rank(row.object) % 2 == 0 ? "even" : "odd" }
            }
        case .single: group = ViewGrouping(flavour: .object) { row in Item.group(row.object).map { _ in "all" } }
        }
        // Every order ends with (key, collection): a total order.
        @Sendable func fields(_ row: ViewRow) -> (Int, String, String) {
            switch order {
            case .rank: return (Item.rank(row.object), row.key, row.collection)
            case .rankDescending: return (-Item.rank(row.object), row.key, row.collection)
            case .key, .keyDescending: return (0, row.key, row.collection)
            }
        }
        let descendingKeys = order == .keyDescending
        if keyed {
            return (group, ViewSorting(flavour: .object, key: { _, row in
                let (rank, key, collection) = fields(row)
                var sortKey = SortKey()
                sortKey.append(Int64(rank))
                sortKey.append(key, descending: descendingKeys)
                sortKey.append(collection)
                return sortKey
            }))
        }
        return (group, ViewSorting(flavour: .object) { _, a, b in
            let (ra, ka, ca) = fields(a), (rb, kb, cb) = fields(b)
            if ra != rb { return ra < rb ? .ascending : .descending }
            if ka != kb { return (ka < kb) != descendingKeys ? .ascending : .descending }
            return ca < cb ? .ascending : ca == cb ? .same : .descending
        })
    }

    /// Random histories mixing commits with re-sorts and regroupings, under
    /// random mappings: each changeset applied to the old table gives the
    /// new one, step by step too, and the view equals a from-scratch sort.
    func testRedefinitionsGiveValidChangesets() throws {
        var redefinitions = 0, moves = 0
        for seed in randomSeeds(41_000, TestScale.pick(1_000, long: 10_000)) {
            var rng = SeededGenerator(seed: seed)
            let keyed = Bool.random(using: &rng)
            let database = try Database(path: nil)
            defer { database.close() }
            let (grouping, sorting) = Self.definition(.rank, .byGroup, keyed: keyed)
            try database.registerView(View(grouping: grouping, sorting: sorting, versionTag: "0",
                                           isPersistent: Bool.random(using: &rng)), name: "view")
            let writer = try database.newConnection()
            var ignored = Set<RowKey>()
            try writer.readWrite { t in
                for _ in 0 ..< Int.random(in: 0 ... 40, using: &rng) { try randomWrite(t, &rng, touched: &ignored) }
            }
            let reader = try database.newConnection()
            try reader.beginLongLivedReadTransaction()
            let config = RandomScenario.config(using: &rng)
            let mappings = config.make(view: "view")
            try reader.read { try mappings.update(with: $0) }
            var tag = 0
            var current = (Order.rank, Grouping.byGroup)
            for round in 0 ..< Int.random(in: 1 ... 4, using: &rng) {
                let oldContents = try reader.read { try $0.viewContents(named: "view") }
                let oldTable = Table(mappings: mappings, contents: oldContents)
                for _ in 0 ..< Int.random(in: 1 ... 3, using: &rng) {
                    try writer.readWrite { t in
                        for _ in 0 ..< Int.random(in: 0 ... 4, using: &rng) {
                            if Int.random(in: 0 ..< 4, using: &rng) == 0 {
                                current = (Order.allCases.randomElement(using: &rng)!,
                                           Int.random(in: 0 ..< 3, using: &rng) == 0
                                               ? Grouping.allCases.randomElement(using: &rng)! : current.1)
                                let (grouping, sorting) = Self.definition(current.0, current.1, keyed: keyed)
                                tag += 1
                                try t.setViewDefinition(name: "view", grouping: grouping, sorting: sorting,
                                                        versionTag: "\(tag)")
                                redefinitions += 1
                            } else {
                                try randomWrite(t, &rng, touched: &ignored)
                            }
                        }
                    }
                }
                let notifications = try reader.beginLongLivedReadTransaction()
                let changeset = try mappings.changes(for: notifications)
                let newContents = try reader.read { try $0.viewContents(named: "view") }
                let newTable = Table(mappings: mappings, contents: newContents)
                let context = "seed \(seed) round \(round) keyed \(keyed)\nconfig \(config)\nold \(oldTable)\nnew \(newTable)\nchangeset \(changeset.sectionChanges) \(changeset.rowChanges)"
                for notification in notifications {
                    if let log = notification.viewLog(named: "view") {
                        XCTAssertFalse(log.entries.contains(.reset) && !notification.removedAll, "a reset\n\(context)")
                        XCTAssertEqual(replay(log), contentsArrays(log.after), context)
                    }
                }
                do {
                    let applied = try BatchUpdate(changeset).apply(to: oldTable)
                    guard applied == newTable else { return XCTFail("applied \(applied)\n\(context)") }
                    try BatchUpdate<Int64>.check(steps: changeset.steps(), from: oldTable, to: newTable,
                                                 naming: BatchUpdate<Int64>.rowid)
                } catch {
                    return XCTFail("\(error)\n\(context)")
                }
                moves += changeset.rowChanges.filter { $0.type == .move }.count
                try checkOrder(reader, current, context)
            }
        }
        print("RedefinitionTests: \(redefinitions) redefinitions, \(moves) moves")
        XCTAssertGreaterThan(redefinitions, 50)
    }

    /// The view equals a from-scratch grouping and sort of its rows.
    private func checkOrder(_ connection: Connection, _ current: (Order, Grouping), _ context: String) throws {
        try connection.read { t in
            var expected: [String: [ViewRow]] = [:]
            for collection in try t.collections() {
                try t.enumerateRows(inCollection: collection) { key, object, _, _ in
                    let row = ViewRow(collection: collection, key: key, object: object, metadata: nil)
                    let (grouping, _) = Self.definition(current.0, current.1, keyed: false)
                    if let group = try? grouping.run(t, row) { expected[group, default: []].append(row) }
                }
            }
            let (_, sorting) = Self.definition(current.0, current.1, keyed: false)
            guard case .comparator(let compare) = sorting.form else { return XCTFail("comparator expected") }
            let sorted = try expected.mapValues { rows in
                try rows.sorted { try compare(t, "", $0, $1) == .ascending }.map(\.key)
            }
            XCTAssertEqual(try t.view("view").dump(), sorted, context)
        }
    }

    /// A re-sort of one group shown whole moves exactly the rows outside a
    /// longest run keeping their order: n − 1 for a reversal, and for a
    /// shuffle n minus the longest increasing run of the permutation.
    func testReSortMovesTheFewestRows() throws {
        for keyed in [false, true] {
            let database = try Database(path: nil)
            defer { database.close() }
            let (grouping, sorting) = Self.definition(.rank, .single, keyed: keyed)
            try database.registerView(View(grouping: grouping, sorting: sorting, versionTag: "0"), name: "view")
            let writer = try database.newConnection()
            var rng = SeededGenerator(seed: 7)
            let ranks = (0 ..< 500).shuffled(using: &rng)
            try writer.readWrite { t in
                for (index, rank) in ranks.enumerated() {
                    try t.setObject(Item.encode(group: "g", rank: rank), forKey: String(format: "k%04d", index),
                                    inCollection: "items", metadata: nil)
                }
            }
            let reader = try database.newConnection()
            try reader.beginLongLivedReadTransaction()
            let mappings = Mappings(groups: ["all"], view: "view")
            try reader.read { try mappings.update(with: $0) }
            // By rank, the keys come in the order of `ranks`' inverse; by key,
            // in key order: the rows keeping their order are a longest
            // increasing run of the keys' indexes read in rank order.
            let byRank = ranks.enumerated().sorted { $0.element < $1.element }.map(\.offset)
            let kept = longestIncreasingRun(byRank, key: { $0 }).count
            for (order, expectedMoves) in [(Order.key, 500 - kept), (.keyDescending, 499)] {
                try writer.readWrite { t in
                    let (grouping, sorting) = Self.definition(order, .single, keyed: keyed)
                    try t.setViewDefinition(name: "view", grouping: grouping, sorting: sorting, versionTag: "\(order)")
                }
                let changeset = try mappings.changes(for: try reader.beginLongLivedReadTransaction())
                XCTAssertTrue(changeset.rowChanges.allSatisfy { $0.type == .move }, "keyed \(keyed)")
                XCTAssertEqual(changeset.rowChanges.count, expectedMoves, "\(order) keyed \(keyed)")
            }
        }
    }

    /// A re-sort and a new filter set in the background, while another
    /// connection commits: progress is reported, the install logs what
    /// changed (no reset), and each changeset is a valid batch update.
    func testRedefinitionsInTheBackground() throws {
        for keyed in [false, true] {
            let database = try Database(path: nil)
            defer { database.close() }
            let (grouping, sorting) = Self.definition(.rank, .byGroup, keyed: keyed)
            try database.registerView(View(grouping: grouping, sorting: sorting, versionTag: "0"), name: "view")
            let writer = try database.newConnection()
            var rng = SeededGenerator(seed: 11)
            try writer.readWrite { t in
                for index in 0 ..< 3_000 {
                    try t.setObject(Item.encode(group: ["a", "b", "c"][index % 3], rank: Int.random(in: 0 ..< 100, using: &rng)),
                                    forKey: String(format: "k%05d", index), inCollection: "items", metadata: nil)
                }
            }
            let even = ViewFilter(flavour: .object) { _, row in Item.rank(row.object) % 2 == 0 }
            try database.registerFilteredView(FilteredView(parent: "view", filter: even, versionTag: "even"), name: "f")
            let reader = try database.newConnection()
            try reader.beginLongLivedReadTransaction()
            let mappings = [Mappings(groups: ["a", "b", "c"], view: "view"), Mappings(groups: ["a", "b", "c"], view: "f")]
            try reader.read { t in for m in mappings { try m.update(with: t) } }
            func tables() throws -> [Table] {
                try reader.read { t in
                    try zip(mappings, ["view", "f"]).map { Table(mappings: $0, contents: try t.viewContents(named: $1)) }
                }
            }
            func commitsMeanwhile(_ task: ViewRegistrationTask) throws {
                var rng = SeededGenerator(seed: 12)
                while !task.isFinished {
                    try writer.readWrite { t in
                        try t.setObject(Item.encode(group: "b", rank: Int.random(in: 0 ..< 100, using: &rng)),
                                        forKey: String(format: "k%05d", Int.random(in: 0 ..< 3_000, using: &rng)),
                                        inCollection: "items", metadata: nil)
                    }
                }
                _ = try task.wait()
            }
            for step in 0 ..< 2 {
                let old = try tables()
                let reports = Locked(0)
                let task: ViewRegistrationTask
                if step == 0 {
                    let (grouping, sorting) = Self.definition(.keyDescending, .byGroup, keyed: keyed)
                    task = try database.setViewDefinitionAsync(name: "view", grouping: grouping, sorting: sorting,
                                                               versionTag: "1", progress: { _ in reports.mutate { $0 += 1 } })
                } else {
                    let low = ViewFilter(flavour: .object) { _, row in Item.rank(row.object) < 50 }
                    task = try database.setFilterAsync(low, versionTag: "low", forView: "f",
                                                       progress: { _ in reports.mutate { $0 += 1 } })
                }
                try commitsMeanwhile(task)
                XCTAssertGreaterThan(reports.value, 0)
                let notifications = try reader.beginLongLivedReadTransaction()
                XCTAssertFalse(notifications.contains { n in
                    ["view", "f"].contains { n.viewLog(named: $0)?.entries.contains(.reset) ?? false }
                }, "step \(step) keyed \(keyed)")
                let changesets = try mappings.map { try $0.changes(for: notifications) }
                let new = try tables()
                for (index, changeset) in changesets.enumerated() {
                    let applied = try BatchUpdate(changeset).apply(to: old[index])
                    XCTAssertTrue(applied == new[index], "step \(step) view \(index) keyed \(keyed)")
                    try BatchUpdate<Int64>.check(steps: changeset.steps(), from: old[index], to: new[index],
                                                 naming: BatchUpdate<Int64>.rowid)
                }
            }
            XCTAssertEqual(try reader.read { try $0.view("view").versionTag }, "1")
        }
    }

}
