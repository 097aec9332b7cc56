import Foundation
import XCTest
@testable import YDBView

/// A persistent view's commits leave the rows they changed unstored until
/// `Tuning.viewRowsWrittenAtOnce` of them wait (4 in debug builds), and
/// closing the database stores the rest (`UnstoredRows`). Whatever happens
/// in between, a reopened view is either loaded exactly as it was shown or
/// repopulated because it is marked stale.
final class UnstoredRowsTests: FileDatabaseTestCase {
    let batch = Tuning.viewRowsWrittenAtOnce

    /// The stored registry row's "fresh" and how many rows the view's
    /// table holds, read through a handle of its own.
    func stored(_ name: String = "v") throws -> (fresh: Bool, rows: Int) {
        let handle = try SQLiteHandle(path: path)
        defer { handle.close() }
        let registration = try XCTUnwrap(try ViewStorage.registration(named: name, handle))
        return (registration.isFresh, try ViewStorage.places(id: registration.id, handle).count)
    }

    func set(_ key: String, group: String? = "g", rank: Int, on connection: Connection) throws {
        try connection.readWrite {
            try $0.setObject(Item.encode(group: group, rank: rank), forKey: key, inCollection: "c", metadata: nil)
        }
    }

    /// A database whose thread never stores waiting rows on its own (the
    /// tests below watch them wait; `testRowsWaitingWhenCommitsPause…` lets
    /// it).
    func openWatched(_ path: String) throws -> Database {
        let database = try Database(path: path)
        database.checkpointer.deferredWritesIdleMilliseconds = 3_600_000
        return database
    }

    func keys(_ database: Database) throws -> [String] {
        try database.newConnection().read { try $0.view("v").dump()["g"] ?? [] }
    }

    /// Opens the database with `rankView()` registered as "v", runs `body`,
    /// closes the database and returns the keys the view showed last.
    func session(_ body: (Database, Connection) throws -> Void) throws -> [String] {
        let database = try openWatched(path)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let connection = try database.newConnection()
        try body(database, connection)
        return try keys(database)
    }

    /// Reopens the database: `view` (counting its calls) loads as stored,
    /// calling nothing, and shows `shown`.
    func assertLoads(_ view: (CallCounter) -> View = { rankView(counter: $0) }, showing shown: [String],
                     line: UInt = #line) throws {
        let database = try Database(path: path)
        defer { database.close() }
        let counter = CallCounter()
        XCTAssertEqual(try database.registerView(view(counter), name: "v"), .loaded, line: line)
        XCTAssertEqual(counter.grouping + counter.sorting, 0, line: line)
        XCTAssertEqual(try keys(database), shown, line: line)
    }

    func testOneRowCommitsWaitUntilABatchAndCloseStoresTheRest() throws {
        XCTAssertGreaterThan(batch, 2, "the test needs commits that leave rows waiting")
        let shown = try session { _, connection in
            XCTAssertEqual(try stored().fresh, true)
            try set("k0", rank: 0, on: connection)
            // The commit wrote the registry's "not fresh", not the row.
            XCTAssertEqual(try stored().fresh, false)
            XCTAssertEqual(try stored().rows, 0)
            for index in 1 ..< batch - 1 { try set("k\(index)", rank: index, on: connection) }
            XCTAssertEqual(try stored().rows, 0)
            // The batch's last row: every waiting row is written, and the
            // view is fresh again.
            try set("k\(batch - 1)", rank: batch - 1, on: connection)
            XCTAssertEqual(try stored().fresh, true)
            XCTAssertEqual(try stored().rows, batch)
            // Changed and removed rows wait as well.
            try set("k0", rank: 100, on: connection)
            try connection.readWrite { try $0.removeObject(forKey: "k1", inCollection: "c") }
            XCTAssertEqual(try stored().fresh, false)
            XCTAssertEqual(try stored().rows, batch)
        }
        // Closing stored them.
        XCTAssertEqual(try stored().fresh, true)
        XCTAssertEqual(try stored().rows, batch - 1)
        try assertLoads(showing: shown)
    }

    /// A process that ends without closing (copied here as a crash leaves
    /// the files) repopulates the view: loading it would miss the rows
    /// that were waiting.
    func testADatabaseNotClosedRepopulatesItsViewsThatHadRowsWaiting() throws {
        let copy = directory.appendingPathComponent("copy.sqlite").path
        let database = try openWatched(path)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let connection = try database.newConnection()
        for index in 0 ..< batch + 1 { try set("k\(index)", rank: -index, on: connection) }
        XCTAssertEqual(try stored().fresh, false)
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
        }
        let reopened = try Database(path: copy)
        defer { reopened.close() }
        XCTAssertEqual(try reopened.registerView(rankView(), name: "v"), .rebuiltBecauseStale)
        XCTAssertEqual(try keys(reopened), try keys(database))
    }

    /// A rolled-back transaction changes neither the storage nor what
    /// waits for it, even one that would have written the batch.
    func testARollbackLeavesTheWaitingRowsAsTheyWere() throws {
        let shown = try session { _, connection in
            for index in 0 ..< batch - 1 { try set("k\(index)", rank: index, on: connection) }
            struct Abandoned: Error {}
            XCTAssertThrowsError(try connection.readWrite { t in
                for index in 0 ..< batch {
                    try t.setObject(Item.encode(group: "g", rank: -index), forKey: "r\(index)", inCollection: "c",
                                    metadata: nil)
                }
                try t.removeObject(forKey: "k0", inCollection: "c")
                throw Abandoned()
            })
            XCTAssertEqual(try stored().fresh, false)
            XCTAssertEqual(try stored().rows, 0)
            try set("k\(batch - 1)", rank: batch - 1, on: connection)
            XCTAssertEqual(try stored().fresh, true)
            XCTAssertEqual(try stored().rows, batch)
        }
        try assertLoads(showing: shown)
    }

    /// A new definition rewrites the view's storage from scratch, even when
    /// the view is empty: a removal still waiting must not be written over
    /// the row the new definition puts back.
    func testANewDefinitionVoidsTheRemovalsStillWaiting() throws {
        // A grouping that takes the rows without a group back.
        let everything = ViewGrouping(flavour: .object) { _ in "g" }
        let shown = try session { database, connection in
            // One transaction, a batch of changes (written at once): "k"
            // stays, the others come and go.
            try connection.readWrite { t in
                try t.setObject(Item.encode(group: "g", rank: 0), forKey: "k", inCollection: "c", metadata: nil)
                for index in 1 ..< batch {
                    try t.setObject(Item.encode(group: "g", rank: index), forKey: "x\(index)", inCollection: "c",
                                    metadata: nil)
                    try t.removeObject(forKey: "x\(index)", inCollection: "c")
                }
            }
            XCTAssertEqual(try stored().rows, 1)
            // "k" leaves the view (no group): its removal waits, the view is empty.
            try set("k", group: nil, rank: 0, on: connection)
            XCTAssertEqual(try stored().rows, 1)
            XCTAssertEqual(try keys(database), [])
            // The new definition takes the row back (the debug invariant
            // check compares the storage with the view at the commit).
            try connection.readWrite { t in
                try t.setViewDefinition(name: "v", grouping: everything, sorting: rankView().sorting, versionTag: "2")
            }
            XCTAssertEqual(try keys(database), ["k"])
            for index in 0 ..< batch { try set("n\(index)", rank: index + 1, on: connection) }
        }
        try assertLoads({ View(grouping: everything, sorting: rankView(counter: $0).sorting, versionTag: "2") },
                        showing: shown)
    }

    /// Once commits pause for `Tuning.deferredWritesIdleMilliseconds` (20 ms in
    /// debug builds), the database's thread stores the rows they left
    /// waiting: a crash after that loads the view as stored.
    func testRowsWaitingWhenCommitsPauseAreStoredOffTheCommitPath() throws {
        let database = try Database(path: path)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let connection = try database.newConnection()
        try set("k0", rank: 0, on: connection)
        try set("k1", rank: 1, on: connection)
        // Polled: when the thread runs is the system's business.
        let deadline = Date().addingTimeInterval(30)
        while try !stored().fresh, Date() < deadline { usleep(5_000) }
        XCTAssertEqual(try stored().fresh, true)
        XCTAssertEqual(try stored().rows, 2)
        XCTAssertEqual(try copyRecovers(database, connection, keyed: false, name: "quiet"), .loaded)
        // And again after more commits.
        try set("k2", rank: 2, on: connection)
        while try stored().rows < 3, Date() < deadline { usleep(5_000) }
        XCTAssertEqual(try stored().rows, 3)
        XCTAssertEqual(try copyRecovers(database, connection, keyed: false, name: "quiet2"), .loaded)
    }

    /// Random histories (the asynchronous registration tests' writes, in
    /// transactions of one to a few writes, some rolled back, now and then
    /// every row removed), copied as a crash would leave the files at
    /// random points, and closed and reopened now and then: every copy
    /// registers its view as loaded or rebuilt because stale, never
    /// anything else, holding exactly the rows the original showed; one
    /// copied with no rows waiting loads; every reopen loads.
    func testRandomHistoriesReopenOrRecoverAsShown() throws {
        var outcomes: [ViewRegistrationOutcome] = []
        for (seed, keyed) in [(1, false), (2, true), (3, false), (4, true)] {
            var rng = SeededGenerator(seed: UInt64(seed))
            var database = try openWatched(path)
            XCTAssertNotEqual(try database.registerView(rankView(keyed: keyed), name: "v"), .rebuiltForNewVersionTag)
            var connection = try database.newConnection()
            var copies = 0
            for step in 0 ..< 150 {
                let writes = Int.random(in: 1 ... 3, using: &rng)
                let abandon = Int.random(in: 0 ..< 10, using: &rng) == 0
                struct Abandoned: Error {}
                do {
                    try connection.readWrite { t in
                        for _ in 0 ..< writes { try AsyncRegistrationTests.randomWrite(t, &rng, keys: 12) }
                        if Int.random(in: 0 ..< 60, using: &rng) == 0 { try t.removeAllObjectsInAllCollections() }
                        if abandon { throw Abandoned() }
                    }
                } catch is Abandoned {}
                if Int.random(in: 0 ..< 12, using: &rng) == 0 {
                    copies += 1
                    outcomes.append(try copyRecovers(database, connection, keyed: keyed, name: "copy\(seed)-\(step)"))
                }
                if Int.random(in: 0 ..< 40, using: &rng) == 0 {
                    let shown = try connection.read { try $0.view("v").dump() }
                    connection.close()
                    database.close()
                    database = try openWatched(path)
                    XCTAssertEqual(try database.registerView(rankView(keyed: keyed), name: "v"), .loaded,
                                   "seed \(seed), step \(step)")
                    connection = try database.newConnection()
                    XCTAssertEqual(try connection.read { try $0.view("v").dump() }, shown, "seed \(seed), step \(step)")
                }
            }
            XCTAssertGreaterThan(copies, 3)
            connection.close()
            database.close()
            try FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + "-wal")
            try? FileManager.default.removeItem(atPath: path + "-shm")
        }
        XCTAssertTrue(outcomes.contains(.loaded) && outcomes.contains(.rebuiltBecauseStale), "\(outcomes)")
    }

    /// Copies the database's files as a crash would leave them (a read
    /// transaction held meanwhile keeps the log from starting over), opens
    /// the copy, checks its view against the original's, and returns how
    /// the copy registered it.
    func copyRecovers(_ database: Database, _ connection: Connection, keyed: Bool, name: String) throws
        -> ViewRegistrationOutcome {
        let copy = directory.appendingPathComponent(name + ".sqlite").path
        let (shown, waiting) = try connection.read { t -> ([String: [String]], Bool) in
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
                try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
            }
            return (try t.view("v").dump(), t.viewInstance(named: "v")!.unstored.owesWrites)
        }
        let reopened = try Database(path: copy)
        defer { reopened.close() }
        let outcome = try reopened.registerView(rankView(keyed: keyed), name: "v")
        XCTAssertEqual(outcome, waiting ? .rebuiltBecauseStale : .loaded, name)
        XCTAssertEqual(try reopened.newConnection().read { try $0.view("v").dump() }, shown, name)
        return outcome
    }
}
