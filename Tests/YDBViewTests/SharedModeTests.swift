import CSQLite
import Foundation
import XCTest
@testable import YDBView

/// Shared mode (docs/behaviour.md, "Several processes"): two `Database`s
/// of this process on one file stand in for two processes — they share
/// nothing but the file, exactly as two processes would (the one
/// exception, the file lock's descriptor, is shared by design).
final class SharedModeTests: FileDatabaseTestCase {
    private let shared = DatabaseOptions(multiProcess: true)

    func testTheModesRefuseEachOther() throws {
        let exclusive = try Database(path: path)
        XCTAssertThrowsError(try Database(path: path, options: shared)) { error in
            XCTAssertEqual((error as? YDBError)?.code, .busy)
            XCTAssertTrue("\(error)".contains("exclusive mode"), "\(error)")
        }
        exclusive.close()
        let first = try Database(path: path, options: shared)
        let second = try Database(path: path, options: shared)
        XCTAssertThrowsError(try Database(path: path)) { error in
            XCTAssertEqual((error as? YDBError)?.code, .busy)
        }
        first.close()
        XCTAssertThrowsError(try Database(path: path)) { XCTAssertEqual(($0 as? YDBError)?.code, .busy) }
        second.close()
        try Database(path: path).close()
    }

    func testSnapshotsAreOneOrderAcrossDatabases() throws {
        let a = try Database(path: path, options: shared), b = try Database(path: path, options: shared)
        defer { a.close(); b.close() }
        let ca = try a.newConnection(), cb = try b.newConnection()
        try ca.readWrite { try $0.setObject([1], forKey: "x", inCollection: "c", metadata: nil) }
        try cb.readWrite { try $0.setObject([2], forKey: "y", inCollection: "c", metadata: nil) }
        try ca.readWrite { try $0.setObject([3], forKey: "x", inCollection: "c", metadata: nil) }
        let seen = try cb.read { t in (t.snapshot, try t.object(forKey: "x", inCollection: "c")) }
        XCTAssertEqual(seen.0, a.snapshot)
        XCTAssertEqual(seen.1, [3])
        XCTAssertEqual(a.snapshot, b.snapshot)
        // A reopen in exclusive mode continues after the shared numbers.
        let last = a.snapshot
        a.close(); b.close()
        let reopened = try Database(path: path)
        defer { reopened.close() }
        XCTAssertGreaterThanOrEqual(reopened.snapshot, last)
        let c = try reopened.newConnection()
        try c.readWrite { try $0.setObject([4], forKey: "z", inCollection: "c", metadata: nil) }
        XCTAssertGreaterThan(reopened.snapshot, last)
    }

    /// Other databases' commits reach this one's mappings as exact
    /// changesets: applied to the old table they give the new one, and
    /// each view holds what a fresh population from the rows holds. Two
    /// writers take turns; the follower catches up after 1 to 4 commits
    /// (several replayed at once, rows changed again by a later one).
    func testAFollowerGetsExactChangesetsForOtherWritersCommits() throws {
        for seed in randomSeeds(3800, TestScale.pick(3, long: 40)) {
            try followOtherWriters(seed: seed, rounds: TestScale.pick(40, long: 200))
        }
    }

    private func followOtherWriters(seed: UInt64, rounds: Int) throws {
        let file = directory.appendingPathComponent("follow-\(seed).sqlite").path
        let writers = try (0..<2).map { _ in try Database(path: file, options: shared) }
        let followerDB = try Database(path: file, options: shared)
        defer { for database in writers + [followerDB] { database.close() } }
        let even = ViewFilter(flavour: .object) { _, row in Item.rank(row.object) % 2 == 0 }
        for database in writers + [followerDB] {
            try database.registerView(rankView(), name: "v")
            try database.registerView(rankView(keyed: true), name: "k")
            try database.registerFilteredView(FilteredView(parent: "v", filter: even, versionTag: "1"), name: "f")
        }
        // Half the histories without the follower's watcher: it then
        // replays only as its reader catches up, several commits at once.
        if seed % 2 == 1 { followerDB.otherProcessWatcher?.stop(releasingSlot: false) }
        let connections = try writers.map { try $0.newConnection() }
        let reader = try followerDB.newConnection()
        try reader.beginLongLivedReadTransaction()
        let views = ["v", "k", "f"]
        let mappings = views.map { Mappings(groups: ["a", "b", "c", "d"], view: $0) }
        try reader.read { t in for m in mappings { try m.update(with: t) } }
        var random = SeededGenerator(seed: seed)
        var step = 0
        for round in 0..<rounds {
            let old = try reader.read { t in
                try views.indices.map { Table(mappings: mappings[$0], contents: try t.view(views[$0]).contents()) }
            }
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                step += 1
                var touched: Set<RowKey> = []
                try connections[step % 2].readWrite { t in
                    for _ in 0..<Int.random(in: 1...5, using: &random) { try randomWrite(t, &random, touched: &touched) }
                }
            }
            let context = "seed \(seed), round \(round)"
            let notifications = try reader.beginLongLivedReadTransaction()
            XCTAssertEqual(try reader.read { $0.snapshot }, try connections[0].read { $0.snapshot }, context)
            for (index, view) in views.enumerated() {
                let changeset = try mappings[index].changes(for: notifications)
                let new = try reader.read { Table(mappings: mappings[index], contents: try $0.view(view).contents()) }
                XCTAssertEqual(try BatchUpdate(changeset).apply(to: old[index]), new, "\(context), view \(view)")
                try BatchUpdate.check(steps: changeset.steps(), from: old[index], to: new, naming: BatchUpdate.rowid)
                let expected = try reader.read { try Self.expectedDump($0, evenOnly: view == "f") }
                XCTAssertEqual(try reader.read { try $0.view(view).dump() }, expected, "\(context), view \(view), follower")
                XCTAssertEqual(try connections[0].read { try $0.view(view).dump() }, expected, "\(context), view \(view), writer")
            }
        }
    }

    /// What `rankView` holds, from the rows themselves.
    static func expectedDump(_ t: ReadTransaction, evenOnly: Bool) throws -> [String: [String]] {
        var rows: [String: [(rank: Int, key: String, collection: String)]] = [:]
        for collection in ["c1", "c2"] {
            for key in try t.keys(inCollection: collection) {
                let object = try t.object(forKey: key, inCollection: collection)
                guard let group = Item.group(object) else { continue }
                let rank = Item.rank(object)
                if evenOnly && rank % 2 != 0 { continue }
                rows[group, default: []].append((rank, key, collection))
            }
        }
        return rows.mapValues { $0.sorted { ($0.rank, $0.key, $0.collection) < ($1.rank, $1.key, $1.collection) }.map(\.key) }
    }

    /// The notification of another database's commit holds what the
    /// writer's own holds.
    func testReplayedNotificationsMatchTheWritersOwn() throws {
        let writerDB = try Database(path: path, options: shared)
        let followerDB = try Database(path: path, options: shared)
        defer { writerDB.close(); followerDB.close() }
        let writer = try writerDB.newConnection(), reader = try followerDB.newConnection()
        try writer.readWrite { t in
            for key in ["a", "b", "c"] { try t.setObject([1], forKey: key, inCollection: "one", metadata: nil) }
            try t.setObject([1], forKey: "x", inCollection: "two", metadata: [9])
        }
        try reader.beginLongLivedReadTransaction()
        let observed = Locked<[CommitNotification]>([])
        let token = writerDB.addCommitObserver { notification in observed.mutate { $0.append(notification) } }
        try writer.readWrite { t in
            try t.removeAllObjects(inCollection: "one")
            try t.replaceMetadata([8], forKey: "x", inCollection: "two")
            try t.setObject([2], forKey: "new", inCollection: "two", metadata: nil)
        }
        writerDB.removeCommitObserver(token)
        let own = observed.value
        let replayed = try reader.beginLongLivedReadTransaction()
        XCTAssertEqual(replayed.count, 1)
        XCTAssertEqual(replayed[0].snapshot, own[0].snapshot)
        XCTAssertEqual(replayed[0].changedRows, own[0].changedRows)
        XCTAssertEqual(replayed[0].removedCollections, ["one"])
        XCTAssertFalse(replayed[0].removedAll)
        XCTAssertTrue(replayed[0].hasChange(forKey: "a", inCollection: "one"))
    }

    /// The watcher replays promptly: the wakeup descriptor becomes readable
    /// and observers are called without this database doing anything.
    func testAnotherDatabasesCommitWakesThisOne() throws {
        let writerDB = try Database(path: path, options: shared)
        let followerDB = try Database(path: path, options: shared)
        defer { writerDB.close(); followerDB.close() }
        let reader = try followerDB.newConnection()
        try reader.beginLongLivedReadTransaction()
        let descriptor = try reader.wakeupDescriptor()
        let observed = Semaphore(value: 0)
        followerDB.addCommitObserver { _ in observed.signal() }
        let writer = try writerDB.newConnection()
        try writer.readWrite { try $0.setObject([1], forKey: "k", inCollection: "c", metadata: nil) }
        // Well under the watcher's one-second fallback: the wake-up did it.
        XCTAssertTrue(observed.wait(milliseconds: 900))
        var waiter = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&waiter, 1, 900), 1)
        XCTAssertEqual(try reader.beginLongLivedReadTransaction().count, 1)
        XCTAssertEqual(poll(&waiter, 1, 0), 0)
    }

    /// A database that slept past the commit log's limit builds its views
    /// again and tells its connections to reload.
    func testASleeperPastTheLogsLimitReloads() throws {
        let writerDB = try Database(path: path, options: shared)
        let followerDB = try Database(path: path, options: shared)
        defer { writerDB.close(); followerDB.close() }
        writerDB.commitLogLimit = 4
        try followerDB.registerView(rankView(), name: "v")
        let reader = try followerDB.newConnection()
        try reader.beginLongLivedReadTransaction()
        followerDB.otherProcessWatcher?.stop(releasingSlot: false)   // asleep
        let writer = try writerDB.newConnection()
        for rank in 0..<20 {
            try writer.readWrite {
                try $0.setObject(Item.encode(group: "g", rank: rank), forKey: "k\(rank)", inCollection: "c", metadata: nil)
            }
        }
        XCTAssertThrowsError(try reader.beginLongLivedReadTransaction()) { error in
            XCTAssertEqual((error as? YDBError)?.code, .reloadRequired)
        }
        try reader.read { t in
            XCTAssertEqual(try t.view("v").dump(), ["g": (0..<20).map { "k\($0)" }.sorted {
                Int($0.dropFirst())! < Int($1.dropFirst())!
            }])
        }
        XCTAssertNoThrow(try reader.beginLongLivedReadTransaction())
    }

    func testRegisteringAgainKeepsTheViewAndFullTextIndexesAreRefused() throws {
        let database = try Database(path: path, options: shared)
        defer { database.close() }
        let connection = try database.newConnection()
        try connection.readWrite { try $0.setObject(Item.encode(group: "g", rank: 1), forKey: "k", inCollection: "c", metadata: nil) }
        XCTAssertEqual(try database.registerView(rankView(persistent: true), name: "v"), .built)
        XCTAssertEqual(try database.registerView(rankView(persistent: true), name: "v"), .loaded)
        let index = FullTextIndex(columns: ["text"], versionTag: "1") { (_: ViewRow) in nil }
        XCTAssertThrowsError(try database.registerFullTextIndex(index, name: "fts")) { error in
            XCTAssertEqual((error as? YDBError)?.code, .misuse)
        }
    }

    /// A plain SQLite client's row writes (the triggers record them) become
    /// commits every database replays: views and changesets follow them,
    /// and a new row that took a removed row's id gets a fresh one.
    func testPlainSQLiteWritesBecomeCommits() throws {
        let writerDB = try Database(path: path, options: shared)
        let followerDB = try Database(path: path, options: shared)
        defer { writerDB.close(); followerDB.close() }
        for database in [writerDB, followerDB] { try database.registerView(rankView(), name: "v") }
        let writer = try writerDB.newConnection()
        try writer.readWrite { t in
            for rank in 0..<5 {
                try t.setObject(Item.encode(group: "g", rank: rank), forKey: "k\(rank)", inCollection: "c", metadata: nil)
            }
            try t.removeObject(forKey: "k4", inCollection: "c")   // its id is never to be used again
        }
        let reader = try followerDB.newConnection()
        try reader.beginLongLivedReadTransaction()
        let mappings = Mappings(groups: ["g"], view: "v")
        try reader.read { try mappings.update(with: $0) }
        let old = try reader.read { Table(mappings: mappings, contents: try $0.view("v").contents()) }
        let removedID = Int64(5)

        var client: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &client), SQLITE_OK)
        sqlite3_busy_timeout(client, 5000)
        let script = """
            INSERT INTO ydb_rows (collection, key, object) VALUES ('c', 'plain', CAST('g|2' AS BLOB));
            UPDATE ydb_rows SET object = CAST('g|9' AS BLOB) WHERE key = 'k0';
            DELETE FROM ydb_rows WHERE key = 'k1';
            """
        XCTAssertEqual(sqlite3_exec(client, script, nil, nil, nil), SQLITE_OK)
        sqlite3_close(client)

        // The next write folds them (the watcher would within a second).
        try writer.readWrite { try $0.touchObject(forKey: "k2", inCollection: "c") }
        let notifications = try reader.beginLongLivedReadTransaction()
        XCTAssertTrue(notifications.hasChange(forKey: "plain", inCollection: "c"))
        XCTAssertTrue(notifications.hasChange(forKey: "k1", inCollection: "c"))
        let changeset = try mappings.changes(for: notifications)
        let new = try reader.read { Table(mappings: mappings, contents: try $0.view("v").contents()) }
        XCTAssertEqual(try BatchUpdate(changeset).apply(to: old), new)
        for connection in [reader, writer] {
            try connection.read { t in
                XCTAssertEqual(try t.view("v").dump(), ["g": ["k2", "plain", "k3", "k0"]])
                XCTAssertNotEqual(try t.rowid(forKey: "plain", inCollection: "c"), removedID)
            }
        }
        // Nothing is left to fold: the record was emptied.
        let handle = try SQLiteHandle(path: path)
        defer { handle.close() }
        XCTAssertFalse(try ExternalChanges.any(handle))
    }

    /// Without any ydbview write, the watcher folds them within its slow look.
    func testTheWatcherFoldsPlainSQLiteWrites() throws {
        let database = try Database(path: path, options: shared)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let observed = Semaphore(value: 0)
        database.addCommitObserver { _ in observed.signal() }
        var client: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &client), SQLITE_OK)
        sqlite3_busy_timeout(client, 5000)
        XCTAssertEqual(sqlite3_exec(client, "INSERT INTO ydb_rows (collection, key, object) VALUES ('c', 'p', CAST('g|1' AS BLOB))",
                                    nil, nil, nil), SQLITE_OK)
        sqlite3_close(client)
        XCTAssertTrue(observed.wait(milliseconds: 5000))
        try database.newConnection().read { t in XCTAssertEqual(try t.view("v").dump(), ["g": ["p"]]) }
    }

    /// One view name, one version tag among the live processes.
    func testAViewNameKeepsOneVersionTagAcrossLiveProcesses() throws {
        let first = try Database(path: path, options: shared)
        let second = try Database(path: path, options: shared)
        defer { second.close() }
        try first.registerView(rankView(tag: "1"), name: "v")
        XCTAssertThrowsError(try second.registerView(rankView(tag: "2"), name: "v")) { error in
            XCTAssertEqual((error as? YDBError)?.code, .misuse)
            XCTAssertTrue("\(error)".contains("version tag '1'"), "\(error)")
        }
        XCTAssertEqual(try second.registerView(rankView(tag: "1"), name: "v"), .built)
        try second.unregisterView(name: "v")
        first.close()   // gone: its tag no longer counts
        XCTAssertEqual(try second.registerView(rankView(tag: "2"), name: "v"), .built)
    }

    /// The log keeps what a live process has not replayed (up to the
    /// limit), and nothing more once every process has.
    func testTheLogKeepsWhatTheSlowestLiveProcessNeeds() throws {
        let writerDB = try Database(path: path, options: shared)
        let sleeperDB = try Database(path: path, options: shared)
        defer { writerDB.close() }
        try sleeperDB.registerView(rankView(), name: "v")
        let reader = try sleeperDB.newConnection()
        try reader.beginLongLivedReadTransaction()
        sleeperDB.otherProcessWatcher?.stop(releasingSlot: false)   // asleep, but alive
        let writer = try writerDB.newConnection()
        for rank in 0..<100 {
            try writer.readWrite {
                try $0.setObject(Item.encode(group: "g", rank: rank), forKey: "k\(rank)", inCollection: "c", metadata: nil)
            }
        }
        XCTAssertEqual(try reader.beginLongLivedReadTransaction().count, 100)   // no reload
        sleeperDB.close()
        for rank in 0..<40 {
            try writer.readWrite { try $0.touchObject(forKey: "k\(rank)", inCollection: "c") }
        }
        let handle = try SQLiteHandle(path: path)
        defer { handle.close() }
        let count = try handle.statement("SELECT count(*) FROM ydb_commit_log")
        XCTAssertTrue(try count.step())
        XCTAssertLessThanOrEqual(count.int(0), 16)
        count.reset()
    }

    /// A view registered in the background while another database commits
    /// ends holding every row.
    func testBackgroundRegistrationWhileAnotherDatabaseCommits() throws {
        let writerDB = try Database(path: path, options: shared)
        let followerDB = try Database(path: path, options: shared)
        defer { writerDB.close(); followerDB.close() }
        let writer = try writerDB.newConnection()
        try writer.readWrite { t in
            for index in 0..<3000 {
                try t.setObject(Item.encode(group: "g\(index % 3)", rank: index), forKey: "k\(index)", inCollection: "c1",
                                metadata: nil)
            }
        }
        let task = try followerDB.registerViewAsync(rankView(), name: "v")
        var random = SeededGenerator(seed: 41)
        for _ in 0..<40 {
            var touched: Set<RowKey> = []
            try writer.readWrite { t in for _ in 0..<5 { try randomWrite(t, &random, touched: &touched) } }
        }
        _ = try task.wait()
        let reader = try followerDB.newConnection()
        try reader.read { t in
            let expected = try Self.expectedDump(t, evenOnly: false)
            XCTAssertEqual(try t.view("v").dump(), expected)
        }
    }

    /// A connection's row cache forgets the rows another database's commit
    /// changed, as it does for local commits.
    func testRowCachesForgetRowsAnotherDatabaseChanged() throws {
        let writerDB = try Database(path: path, options: shared)
        let readerDB = try Database(path: path, options: shared)
        defer { writerDB.close(); readerDB.close() }
        try readerDB.registerView(rankView(), name: "v")
        let writer = try writerDB.newConnection(), reader = try readerDB.newConnection()
        try writer.readWrite { t in
            for index in 0..<10 {
                try t.setObject(Item.encode(group: "g", rank: index), forKey: "k\(index)", inCollection: "items",
                                metadata: nil)
            }
        }
        _ = try reader.read { try $0.view("v").rows(inGroup: "g", range: 0..<10) }
        XCTAssertEqual(reader.rowCache.count, 10)
        try writer.readWrite { try $0.replaceMetadata([7], forKey: "k3", inCollection: "items") }
        try reader.read { t in
            XCTAssertEqual(reader.rowCache.count, 9, "the changed row is forgotten as the read begins")
            XCTAssertEqual(try t.view("v").row(at: 3, inGroup: "g")?.metadata, [7])
        }
    }

    /// A persistent view is written whole when its database closes; a later
    /// registration loads it (no callback) and replays the log since
    /// (callbacks for the changed rows only), or populates it when the log
    /// no longer holds every commit since.
    func testAPersistentViewLoadsFromTheLastClosersImage() throws {
        let sleeper = try Database(path: path, options: shared)   // keeps the log
        defer { sleeper.close() }
        sleeper.otherProcessWatcher?.stop(releasingSlot: false)
        let first = try Database(path: path, options: shared)
        try first.registerView(rankView(), name: "v")
        let connection = try first.newConnection()
        try connection.readWrite { t in
            for rank in 0..<50 {
                try t.setObject(Item.encode(group: "g\(rank % 2)", rank: rank), forKey: "k\(rank)", inCollection: "c1",
                                metadata: nil)
            }
        }
        first.close()

        let counter = CallCounter()
        let second = try Database(path: path, options: shared)
        XCTAssertEqual(try second.registerView(rankView(counter: counter), name: "v"), .loaded)
        XCTAssertEqual(counter.grouping, 0)
        let writer = try second.newConnection()
        try writer.readWrite { t in
            try t.setObject(Item.encode(group: "g0", rank: 100), forKey: "k1", inCollection: "c1", metadata: nil)
            try t.removeObject(forKey: "k2", inCollection: "c1")
        }
        defer { second.close() }

        // While the second is open, the image is still the first's; the log
        // holds the commit since.
        let third = try Database(path: path, options: shared)
        defer { third.close() }
        let counted = CallCounter()
        XCTAssertEqual(try third.registerView(rankView(counter: counted), name: "v"), .loaded)
        XCTAssertLessThanOrEqual(counted.grouping, 2)
        try third.newConnection().read { t in
            XCTAssertEqual(try t.view("v").dump(), try Self.expectedDump(t, evenOnly: false))
        }
    }

    /// A sleeper past the log's limit takes a persistent view from the
    /// image the writer left, with no callback.
    func testASleeperPastTheLogsLimitLoadsTheLastImage() throws {
        let writerDB = try Database(path: path, options: shared)
        let sleeperDB = try Database(path: path, options: shared)
        defer { sleeperDB.close() }
        writerDB.commitLogLimit = 4
        let counter = CallCounter()
        try sleeperDB.registerView(rankView(counter: counter), name: "v")
        try writerDB.registerView(rankView(), name: "v")
        let reader = try sleeperDB.newConnection()
        try reader.beginLongLivedReadTransaction()
        sleeperDB.otherProcessWatcher?.stop(releasingSlot: false)
        let writer = try writerDB.newConnection()
        for rank in 0..<30 {
            try writer.readWrite {
                try $0.setObject(Item.encode(group: "g", rank: rank), forKey: "k\(rank)", inCollection: "c1", metadata: nil)
            }
        }
        writerDB.close()   // writes the view's image as of the last commit
        let before = counter.grouping
        XCTAssertThrowsError(try reader.beginLongLivedReadTransaction()) { error in
            XCTAssertEqual((error as? YDBError)?.code, .reloadRequired)
        }
        XCTAssertEqual(counter.grouping, before, "loaded from the image, no callback")
        try reader.read { t in XCTAssertEqual(try t.view("v").dump(), try Self.expectedDump(t, evenOnly: false)) }
    }

    /// Another process's commit cannot be refused: a view whose callback
    /// fails on its rows is dropped from this process, says why, and the
    /// other views go on.
    func testAViewWhoseCallbackFailsOnAnotherProcessesCommitIsDropped() throws {
        struct Refused: Error {}
        let writerDB = try Database(path: path, options: shared)
        let followerDB = try Database(path: path, options: shared)
        defer { writerDB.close(); followerDB.close() }
        let picky = View(grouping: ViewGrouping(flavour: .object) { row in
            if Item.group(row.object) == "boom" { throw Refused() }
            return Item.group(row.object)
        }, sorting: rankView().sorting, versionTag: "picky", isPersistent: false)
        try followerDB.registerView(picky, name: "picky")
        try followerDB.registerFilteredView(FilteredView(parent: "picky", filter: ViewFilter(flavour: .key) { _, _ in true },
                                                         versionTag: "1"), name: "over")
        try followerDB.registerView(rankView(), name: "v")
        let writer = try writerDB.newConnection()
        try writer.readWrite {
            try $0.setObject(Item.encode(group: "boom", rank: 1), forKey: "k", inCollection: "c1", metadata: nil)
        }
        let reader = try followerDB.newConnection()
        try reader.read { t in
            XCTAssertEqual(try t.view("v").dump(), ["boom": ["k"]])
            for name in ["picky", "over"] {
                XCTAssertThrowsError(try t.view(name)) { error in
                    XCTAssertEqual((error as? YDBError)?.code, .notFound)
                    XCTAssertTrue("\(error)".contains("another process's commit"), "\(error)")
                }
            }
        }
        XCTAssertNotNil(followerDB.replayFailure(ofView: "picky"))
        // Registered again (with a callback that copes), it works again.
        try writer.readWrite { try $0.removeObject(forKey: "k", inCollection: "c1") }
        try followerDB.registerView(picky, name: "picky")
        XCTAssertNil(followerDB.replayFailure(ofView: "picky"))
    }
}
