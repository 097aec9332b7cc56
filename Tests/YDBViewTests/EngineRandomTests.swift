import XCTest
@testable import YDBView

/// Random operation sequences through the real engine (store, views, SQLite
/// storage, notifications, mappings, changesets). Seeded: a failure names
/// the seed; `YDB_SEED=<n>` replays that one.
final class EngineRandomTests: XCTestCase {

    /// Every group's order equals a from-scratch sort of the same rows, the
    /// view log replayed on the old contents gives the new contents, and a
    /// reopened database loads exactly the same view without callbacks.
    func testViewMatchesFromScratchSortAndLogsReplay() throws {
        try viewMatchesFromScratchSortAndLogsReplay(keyed: false)
    }

    /// The same with the sort-key form of the same order.
    func testSortKeyViewMatchesFromScratchSortAndLogsReplay() throws {
        try viewMatchesFromScratchSortAndLogsReplay(keyed: true)
    }

    private func viewMatchesFromScratchSortAndLogsReplay(keyed: Bool) throws {
        for seed in randomSeeds(keyed ? 8_000 : 7_000, TestScale.pick(20, long: 100)) {
            var rng = SeededGenerator(seed: seed)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ydbview-random-\(seed)-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("db.sqlite").path
            var final: [String: [String]] = [:]
            do {
                let database = try Database(path: path)
                try database.registerView(rankView(keyed: keyed), name: "v")
                let observed = Locked<[ViewCommitLog]>([])
                database.addCommitObserver { notification in
                    if let log = notification.viewLog(named: "v") { observed.mutate { $0.append(log) } }
                }
                let connection = try database.newConnection()
                for commit in 0 ..< 150 {
                    var touched = Set<RowKey>()
                    try connection.readWrite { t in
                        for _ in 0 ..< Int.random(in: 1 ... 6, using: &rng) { try randomWrite(t, &rng, touched: &touched) }
                    }
                    let context = "seed \(seed) commit \(commit)"
                    try checkAgainstScratchSort(connection, context)
                    if let log = observed.value.last, log.snapshot == database.snapshot {
                        XCTAssertEqual(replay(log), contentsArrays(log.after), context)
                    }
                }
                final = try connection.read { try $0.view("v").dump() }
                database.close()
            }
            let counter = CallCounter()
            let reopened = try Database(path: path)
            try reopened.registerView(rankView(counter: counter, keyed: keyed), name: "v")
            XCTAssertEqual(counter.grouping + counter.sorting, 0)
            XCTAssertEqual(try reopened.newConnection().read { try $0.view("v").dump() }, final, "seed \(seed)")
            reopened.close()
        }
    }

    private func checkAgainstScratchSort(_ connection: Connection, _ context: String) throws {
        try connection.read { t in
            var expected: [String: [(rank: Int, key: String, collection: String)]] = [:]
            for collection in try t.collections() {
                try t.enumerateRows(inCollection: collection) { key, object, _, _ in
                    if let group = Item.group(object) {
                        expected[group, default: []].append((Item.rank(object), key, collection))
                    }
                }
            }
            let sorted = expected.mapValues { rows in
                rows.sorted { ($0.rank, $0.key, $0.collection) < ($1.rank, $1.key, $1.collection) }.map(\.key)
            }
            XCTAssertEqual(try t.view("v").dump(), sorted, context)
        }
    }

    /// THE changeset property through the real engine: for random histories
    /// and random mappings configurations, each changeset applied to the old
    /// table with UITableView batch rules gives the new table, and every
    /// changed row still shown is updated or moved.
    func testRealEngineChangesetsAreValidBatchUpdates() throws {
        var changesets = 0, nonEmpty = 0, readded = 0
        for seed in randomSeeds(31_000, TestScale.pick(300, long: 2_000)) {
            var rng = SeededGenerator(seed: seed)
            let database = try Database(path: nil)
            defer { database.close() }
            try database.registerView(rankView(persistent: Bool.random(using: &rng)), name: "view")
            // The sort-key form of the same order must give the same changesets.
            try database.registerView(rankView(persistent: Bool.random(using: &rng), keyed: true), name: "keyed")
            let writer = try database.newConnection()
            var ignored = Set<RowKey>()
            try writer.readWrite { t in
                for _ in 0 ..< Int.random(in: 0 ... 30, using: &rng) { try randomWrite(t, &rng, touched: &ignored) }
            }
            let reader = try database.newConnection()
            try reader.beginLongLivedReadTransaction()
            let config = RandomScenario.config(using: &rng)
            let mappings = config.make(view: "view")
            let keyedMappings = config.make(view: "keyed")
            try reader.read { try mappings.update(with: $0); try keyedMappings.update(with: $0) }
            for round in 0 ..< Int.random(in: 1 ... 4, using: &rng) {
                let oldContents = try reader.read { try $0.viewContents(named: "view") }
                let oldTable = Table(mappings: mappings, contents: oldContents)
                var touched = Set<RowKey>()
                for _ in 0 ..< Int.random(in: 1 ... 3, using: &rng) {
                    try writer.readWrite { t in
                        for _ in 0 ..< Int.random(in: 1 ... 5, using: &rng) { try randomWrite(t, &rng, touched: &touched) }
                    }
                }
                let notifications = try reader.beginLongLivedReadTransaction()
                let changeset = try mappings.changes(for: notifications)
                let keyedChangeset = try keyedMappings.changes(for: notifications)
                XCTAssertEqual(keyedChangeset.sectionChanges, changeset.sectionChanges, "seed \(seed) round \(round)")
                XCTAssertEqual(keyedChangeset.rowChanges, changeset.rowChanges, "seed \(seed) round \(round)")
                changesets += 1
                if !changeset.isEmpty { nonEmpty += 1 }
                readded += changeset.rowChanges.filter { $0.originalRowid != $0.rowid }.count
                let newContents = try reader.read { try $0.viewContents(named: "view") }
                let newTable = Table(mappings: mappings, contents: newContents)
                let context = "seed \(seed) round \(round)\nconfig \(config)\nold \(oldTable)\nnew \(newTable)\nchangeset \(changeset.sectionChanges) \(changeset.rowChanges)"
                XCTAssertEqual(mappings.snapshotOfLastUpdate, database.snapshot, context)
                do {
                    let applied = try BatchUpdate(changeset).apply(to: oldTable)
                    guard applied == newTable else {
                        XCTFail("applied \(applied)\n\(context)")
                        return
                    }
                    try BatchUpdate<Int64>.check(steps: changeset.steps(), from: oldTable, to: newTable,
                                                 naming: BatchUpdate<Int64>.rowid)
                } catch {
                    XCTFail("\(error)\n\(context)")
                    return
                }
                // Every row whose object or metadata changed and that is shown
                // before and after is updated or moved, with its key.
                let keyOf = try reader.read { t in
                    try Dictionary(uniqueKeysWithValues: newTable.sections.joined().map { ($0, try t.rowKey(forRowid: $0)) })
                }
                let changeOf = Dictionary(changeset.rowChanges.map { ($0.rowid, $0) }, uniquingKeysWith: { a, _ in a })
                for rowid in newTable.sections.joined() where oldTable.position(of: rowid) != nil {
                    guard let rowKey = keyOf[rowid] ?? nil, touched.contains(rowKey) else { continue }
                    guard let change = changeOf[rowid], change.type == .update || change.type == .move,
                          change.rowKey == rowKey else {
                        XCTFail("changed row \(rowKey) has no update/move with its key\n\(context)")
                        return
                    }
                }
            }
        }
        print("EngineRandomTests: \(changesets) changesets through the engine, \(nonEmpty) non-empty, \(readded) re-added rows reported as moves")
        XCTAssertGreaterThan(nonEmpty, changesets / 3)
        if ProcessInfo.processInfo.environment["YDB_SEED"] == nil { XCTAssertGreaterThan(readded, 0) }
    }
}
