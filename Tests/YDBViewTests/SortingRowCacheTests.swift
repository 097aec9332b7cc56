import XCTest
@testable import YDBView

/// The rows a comparator view keeps from one commit to the next
/// (`SortingRowCache`) are bounded by their bytes, whatever their size.
final class SortingRowCacheTests: XCTestCase {
    static func row(_ key: String, objectBytes: Int) -> ViewRow {
        ViewRow(collection: "c", key: key, object: [UInt8](repeating: 7, count: objectBytes), metadata: nil)
    }

    func testKeepsRowsWithinItsBudget() {
        let cache = SortingRowCache()
        let size = SortingRowCache.budget / 10
        for index in 0..<25 {
            let row = Self.row("k\(index)", objectBytes: size)
            XCTAssertNil(cache.entry(Int64(index)))
            XCTAssertEqual(cache.store(row, for: Int64(index)).row.key, row.key)
            XCTAssertLessThanOrEqual(cache.bytes, SortingRowCache.budget)
            XCTAssertNotNil(cache.entry(Int64(index)), "the row just stored is kept")
        }
        XCTAssertLessThan(cache.count, 10)
        // Forgetting a row gives its bytes back.
        let before = cache.bytes
        cache.forget(24)
        XCTAssertEqual(cache.bytes, before - SortingRowCache.cost(of: Self.row("k24", objectBytes: size)))
        // A row larger than the budget is handed back, not kept.
        let huge = Self.row("huge", objectBytes: SortingRowCache.budget)
        XCTAssertEqual(cache.store(huge, for: 100).row.object?.count, SortingRowCache.budget)
        XCTAssertNil(cache.entry(100))
        cache.removeAll()
        XCTAssertEqual(cache.bytes, 0)
        XCTAssertEqual(cache.count, 0)
    }

    /// Commits into a comparator view of 120 KB objects (more than the
    /// budget in all) read rows back to
    /// compare with; the view keeps at most its budget of them.
    func testAViewOfLargeObjectsKeepsItsBudget() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let connection = try database.newConnection()
        let padding = String(repeating: "x", count: 120_000)
        for index in 0..<40 {
            try connection.readWrite { t in
                try t.setObject(Array("a|\(padding)|\((index * 7919) % 40)".utf8), forKey: "k\(index)",
                                inCollection: "c", metadata: nil)
            }
        }
        let (bytes, count) = try connection.read { t in
            let cache = t.viewInstance(named: "v")!.rowCache
            return (cache.bytes, cache.count)
        }
        XCTAssertGreaterThan(count, 0, "comparisons read rows back")
        XCTAssertLessThanOrEqual(bytes, SortingRowCache.budget)
        XCTAssertLessThanOrEqual(count, SortingRowCache.budget / 120_000)
        try connection.read { t in
            let keys = try t.view("v").dump()["a"]!
            XCTAssertEqual(keys.count, 40)
        }
    }
}

/// A view that keeps its sorting rows in memory
/// (`View.keepsSortingRowsInMemory`): every row after its population, none
/// left stale by a rollback, the same order as a view that reads its rows
/// back from SQLite.
final class SortingRowsInMemoryTests: XCTestCase {
    private func inMemory(_ view: View) -> View {
        var view = view
        view.keepsSortingRowsInMemory = true
        return view
    }

    private func cachedRows(_ connection: Connection, _ name: String) throws -> Int {
        try connection.read { t in t.viewInstance(named: name)!.rowCache.count }
    }

    func testThePopulationKeepsEveryRowOfTheView() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let connection = try database.newConnection()
        try connection.readWrite { t in
            for index in 0..<3000 {
                // Every fifth row has no group: the view, and its memory, leave it out.
                let group = index % 5 == 0 ? nil : "g\(index % 3)"
                try t.setObject(Item.encode(group: group, rank: (index * 7919) % 1000), forKey: "k\(index)",
                                inCollection: "c", metadata: nil)
            }
        }
        try database.registerView(inMemory(rankView()), name: "kept")
        try database.registerView(rankView(), name: "read")
        XCTAssertEqual(try cachedRows(connection, "kept"), 2400)
        XCTAssertEqual(try cachedRows(connection, "read"), 0, "a population fills no cache by default")
        // The sort-key form keeps its keys, not its rows.
        try database.registerView(inMemory(rankView(keyed: true)), name: "keyed")
        XCTAssertEqual(try cachedRows(connection, "keyed"), 0)
        // A commit that moves a row compares it with rows in memory: the
        // changed row is forgotten, then kept again as compared.
        try connection.readWrite { t in
            try t.setObject(Item.encode(group: "g1", rank: 5), forKey: "k1", inCollection: "c", metadata: nil)
        }
        XCTAssertEqual(try cachedRows(connection, "kept"), 2400)
    }

    func testARollbackForgetsOnlyTheRowsItStored() {
        let cache = SortingRowCache()
        for index in 0..<10 { _ = cache.store(SortingRowCacheTests.row("k\(index)", objectBytes: 4), for: Int64(index)) }
        cache.transactionEnded()
        _ = cache.store(SortingRowCacheTests.row("k10", objectBytes: 4), for: 10)
        cache.forget(3)
        _ = cache.store(SortingRowCacheTests.row("k3", objectBytes: 9), for: 3)
        cache.transactionRolledBack()
        XCTAssertEqual(cache.count, 9, "rows 3 and 10 were stored by the transaction that rolled back")
        XCTAssertNil(cache.entry(3))
        XCTAssertNil(cache.entry(10))
        XCTAssertNotNil(cache.entry(4))
        // More stores than it tracks: a rollback forgets every row.
        for index in 0...SortingRowCache.trackedStores {
            _ = cache.store(SortingRowCacheTests.row("n\(index)", objectBytes: 1), for: Int64(100 + index),
                            unbounded: true)
        }
        cache.transactionRolledBack()
        XCTAssertEqual(cache.count, 0)
        // Unbounded stores pass the budget.
        for index in 0..<3 {
            _ = cache.store(SortingRowCacheTests.row("big\(index)", objectBytes: SortingRowCache.budget / 2),
                            for: Int64(index), unbounded: true)
        }
        XCTAssertEqual(cache.count, 3)
        XCTAssertGreaterThan(cache.bytes, SortingRowCache.budget)
    }

    /// Random commits and rollbacks (a rolled-back transaction changes rows
    /// and compares them first): a view keeping its rows in memory, one
    /// reading them back from SQLite and the sort-key form agree at every
    /// commit, and so does the expected order computed from scratch.
    func testRandomHistoriesWithRollbacksAgreeWithTheViewThatReadsItsRows() throws {
        for seed in UInt64(1)...12 {
            var random = SeededGenerator(seed: seed)
            let database = try Database(path: nil)
            defer { database.close() }
            let connection = try database.newConnection()
            var expected: [String: (group: String?, rank: Int)] = [:]
            try connection.readWrite { t in
                for index in 0..<60 {
                    let item = (group: index % 7 == 0 ? nil : "g\(index % 2)", rank: Int.random(in: 0..<40, using: &random))
                    expected["k\(index)"] = item
                    try t.setObject(Item.encode(group: item.group, rank: item.rank), forKey: "k\(index)",
                                    inCollection: "c", metadata: nil)
                }
            }
            try database.registerView(inMemory(rankView()), name: "kept")
            try database.registerView(rankView(), name: "read")
            try database.registerView(rankView(keyed: true), name: "keyed")
            struct Rollback: Error {}
            for step in 0..<40 {
                let rollsBack = Int.random(in: 0..<4, using: &random) == 0
                var changed = expected
                do {
                    try connection.readWrite { t in
                        for _ in 0..<Int.random(in: 1...6, using: &random) {
                            let key = "k\(Int.random(in: 0..<80, using: &random))"
                            if Int.random(in: 0..<5, using: &random) == 0 {
                                try t.removeObject(forKey: key, inCollection: "c")
                                changed[key] = nil
                            } else {
                                let item = (group: Bool.random(using: &random) ? "g0" : "g1",
                                            rank: Int.random(in: 0..<40, using: &random))
                                try t.setObject(Item.encode(group: item.group, rank: item.rank), forKey: key,
                                                inCollection: "c", metadata: nil)
                                changed[key] = item
                            }
                        }
                        if rollsBack { throw Rollback() }
                    }
                    expected = changed
                } catch is Rollback {}
                var groups: [String: [String]] = [:]
                for (key, item) in expected where item.group != nil { groups[item.group!, default: []].append(key) }
                for group in groups.keys {
                    groups[group]!.sort { a, b in
                        let ra = expected[a]!.rank, rb = expected[b]!.rank
                        return ra != rb ? ra < rb : a < b
                    }
                }
                try connection.read { t in
                    for name in ["kept", "read", "keyed"] {
                        XCTAssertEqual(try t.view(name).dump(), groups, "seed \(seed), step \(step), view \(name)")
                    }
                }
            }
        }
    }
}

/// A persistent view keeping its sorting rows in memory, loaded as stored
/// after a reopen, reads its rows once (a scan) and no others.
final class SortingRowsInMemoryReopenTests: FileDatabaseTestCase {
    func testAViewLoadedAsStoredReadsItsRowsOnce() throws {
        var view = rankView(collections: ["c"])
        view.keepsSortingRowsInMemory = true
        do {
            let database = try Database(path: path)
            let connection = try database.newConnection()
            try connection.readWrite { t in
                for index in 0..<500 {
                    try t.setObject(Item.encode(group: index % 4 == 0 ? nil : "g", rank: index % 50),
                                    forKey: "k\(index)", inCollection: "c", metadata: nil)
                    try t.setObject(Item.encode(group: "g", rank: 1), forKey: "k\(index)", inCollection: "other",
                                    metadata: nil)
                }
            }
            try database.registerView(view, name: "v")
            database.close()
        }
        let database = try Database(path: path)
        defer { database.close() }
        XCTAssertEqual(try database.registerView(view, name: "v"), .loaded)
        let connection = try database.newConnection()
        try connection.read { t in
            let cache = t.viewInstance(named: "v")!.rowCache
            XCTAssertEqual(cache.count, 375, "the view's rows only: not those left out, not other collections")
            XCTAssertEqual(try t.view("v").dump()["g"]?.count, 375)
        }
        // Off: a view loaded as stored reads nothing until it compares.
        view.keepsSortingRowsInMemory = false
        try database.registerView(view, name: "w")
        try connection.read { t in XCTAssertEqual(t.viewInstance(named: "w")!.rowCache.count, 0) }
    }
}
