import XCTest
@testable import YDBView

final class StoreTests: XCTestCase {
    var database: Database!
    override func setUpWithError() throws { database = try Database(path: nil) }
    override func tearDown() { database.close() }

    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// An update or a removal by key finds its row in the statement that
    /// changes it, and SQLite's update hook names the row: each must name
    /// the row it changed, also right after an insert (which the hook
    /// reports too) and among keys that have no row.
    func testWritesByKeyNameTheRowTheyChanged() throws {
        let connection = try database.newConnection()
        var ids: [String: Int64] = [:]
        try connection.readWrite { t in
            for key in ["a", "b", "c", "d"] {
                try t.setObject(bytes(key), forKey: key, inCollection: "c", metadata: nil)
                ids[key] = try t.rowid(forKey: key, inCollection: "c")
            }
        }
        XCTAssertEqual(Set(ids.values).count, 4)
        let reader = try database.newConnection()
        _ = try reader.beginLongLivedReadTransaction()
        try connection.readWrite { t in
            try t.setObject(bytes("n"), forKey: "new", inCollection: "c", metadata: nil)
            ids["new"] = try t.rowid(forKey: "new", inCollection: "c")
            try t.setObject(bytes("B"), forKey: "b", inCollection: "c", metadata: nil)
            try t.removeObjects(forKeys: ["a", "missing", "d"], inCollection: "c")
            try t.setObject(bytes("C"), forKey: "c", inCollection: "c", metadata: nil)
        }
        let notifications = try reader.beginLongLivedReadTransaction()
        XCTAssertEqual(notifications.count, 1)
        XCTAssertEqual(notifications.first?.changedRowids, ["new", "b", "a", "d", "c"].map { ids[$0]! })
        try connection.read { t in
            XCTAssertEqual(try t.keys(inCollection: "c"), ["b", "c", "new"])
            XCTAssertEqual(try t.object(forKey: "b", inCollection: "c"), bytes("B"))
            XCTAssertEqual(try t.rowid(forKey: "c", inCollection: "c"), ids["c"])
        }
    }

    /// A rowid hint finds the row by its id when the id is still the
    /// row's, and by key otherwise: a stale hint (the row was removed and
    /// set again, or the id now names another row) never changes the answer.
    func testARowidHintNeverChangesTheAnswer() throws {
        let connection = try database.newConnection()
        var ids: [Int64] = []
        try connection.readWrite { t in
            for key in ["a", "b"] {
                try t.setObject(bytes(key), forKey: key, inCollection: "c", metadata: [1])
                ids.append(try t.rowid(forKey: key, inCollection: "c")!)
            }
            try t.removeObject(forKey: "a", inCollection: "c")
            try t.setObject(bytes("a2"), forKey: "a", inCollection: "c", metadata: nil)   // a new id
            ids.append(try t.rowid(forKey: "a", inCollection: "c")!)
        }
        try connection.read { t in
            for key in ["a", "b", "none"] {
                let plain = try t.row(forKey: key, inCollection: "c")
                for hint in ids + [0, -1, .max] {
                    let hinted = try t.row(forKey: key, inCollection: "c", rowidHint: hint)
                    XCTAssertEqual(hinted?.object, plain?.object, "\(key) with hint \(hint)")
                    XCTAssertEqual(hinted?.metadata, plain?.metadata, "\(key) with hint \(hint)")
                }
            }
            XCTAssertEqual(try t.row(forKey: "a", inCollection: "c", rowidHint: ids[2])?.object, bytes("a2"))
        }
    }

    func testSetGetRemoveAndCounts() throws {
        let connection = try database.newConnection()
        try connection.readWrite { t in
            try t.setObject(bytes("a"), forKey: "k1", inCollection: "c", metadata: bytes("m"))
            try t.setObject(bytes("b"), forKey: "k2", inCollection: "c", metadata: nil)
            try t.setObject([], forKey: "empty", inCollection: "other 'quoted' ✓", metadata: [])
        }
        try connection.read { t in
            XCTAssertEqual(try t.object(forKey: "k1", inCollection: "c"), bytes("a"))
            XCTAssertEqual(try t.metadata(forKey: "k1", inCollection: "c"), bytes("m"))
            XCTAssertNil(try t.metadata(forKey: "k2", inCollection: "c"))
            XCTAssertEqual(try t.object(forKey: "empty", inCollection: "other 'quoted' ✓"), [])
            XCTAssertEqual(try t.metadata(forKey: "empty", inCollection: "other 'quoted' ✓"), [])
            XCTAssertEqual(try t.count(inCollection: "c"), 2)
            XCTAssertEqual(try t.countAll(), 3)
            XCTAssertEqual(try t.collections(), ["c", "other 'quoted' ✓"])
            XCTAssertEqual(try t.keys(inCollection: "c"), ["k1", "k2"])
        }
        try connection.readWrite { t in
            try t.replaceObject(bytes("A"), forKey: "k1", inCollection: "c")
            try t.replaceMetadata(nil, forKey: "k1", inCollection: "c")
            try t.replaceObject(bytes("x"), forKey: "missing", inCollection: "c")
            try t.removeObject(forKey: "k2", inCollection: "c")
        }
        try connection.read { t in
            XCTAssertEqual(try t.row(forKey: "k1", inCollection: "c")?.object, bytes("A"))
            XCTAssertNil(try t.metadata(forKey: "k1", inCollection: "c"))
            XCTAssertFalse(try t.exists(key: "missing", inCollection: "c"))
            XCTAssertFalse(try t.exists(key: "k2", inCollection: "c"))
        }
        XCTAssertEqual(database.snapshot, 2)
    }

    func testSnapshotIsolationAndLongLivedReads() throws {
        let writer = try database.newConnection()
        let reader = try database.newConnection()
        XCTAssertEqual(try reader.beginLongLivedReadTransaction().count, 0)
        try writer.readWrite { try $0.setObject(self.bytes("1"), forKey: "a", inCollection: "c", metadata: nil) }
        try writer.readWrite { try $0.touchObject(forKey: "a", inCollection: "c") }
        try writer.readWrite { _ in }  // changes nothing: no snapshot
        XCTAssertEqual(database.snapshot, 2)
        XCTAssertNil(try reader.read { try $0.object(forKey: "a", inCollection: "c") })
        let skipped = try reader.beginLongLivedReadTransaction()
        XCTAssertEqual(skipped.map(\.snapshot), [1, 2])
        XCTAssertEqual(skipped[0].changedRows[RowKey(collection: "c", key: "a")], [.objectChanged, .metadataChanged])
        XCTAssertEqual(skipped[1].changedRows[RowKey(collection: "c", key: "a")], .objectTouched)
        XCTAssertTrue(skipped.hasChange(forKey: "a", inCollection: "c"))
        XCTAssertFalse(skipped.hasChange(inCollection: "d"))
        XCTAssertEqual(try reader.read { try $0.object(forKey: "a", inCollection: "c") }, bytes("1"))
        XCTAssertEqual(try reader.beginLongLivedReadTransaction().count, 0)
    }

    func testAReadTransactionReadsTheSnapshotItBeganOn() throws {
        // SQLite takes a deferred transaction's snapshot at its first read;
        // the engine must take it at the begin, with the views' state.
        let writer = try database.newConnection()
        let reader = try database.newConnection()
        let read = try reader.beginReadTransaction()
        try writer.readWrite { try $0.setObject(self.bytes("1"), forKey: "a", inCollection: "c", metadata: nil) }
        XCTAssertEqual(read.snapshot, 0)
        XCTAssertNil(try read.object(forKey: "a", inCollection: "c"))
        XCTAssertEqual(try read.countAll(), 0)
        read.end()
        XCTAssertEqual(try reader.read { try $0.object(forKey: "a", inCollection: "c") }, bytes("1"))
    }

    func testEndingALongLivedReadWhileATransactionIsOpen() throws {
        let writer = try database.newConnection()
        let reader = try database.newConnection()
        try reader.beginLongLivedReadTransaction()
        let open = try reader.beginReadTransaction()
        try writer.readWrite { try $0.setObject(self.bytes("1"), forKey: "a", inCollection: "c", metadata: nil) }
        reader.endLongLivedReadTransaction()
        XCTAssertFalse(reader.isInLongLivedReadTransaction)
        XCTAssertNil(try open.object(forKey: "a", inCollection: "c"), "the open transaction keeps its snapshot")
        open.end()
        XCTAssertEqual(try reader.read { try $0.object(forKey: "a", inCollection: "c") }, bytes("1"))
    }

    func testRollbackOnThrow() throws {
        struct Boom: Error {}
        let connection = try database.newConnection()
        XCTAssertThrowsError(try connection.readWrite { t in
            try t.setObject(self.bytes("x"), forKey: "k", inCollection: "c", metadata: nil)
            throw Boom()
        })
        XCTAssertEqual(try connection.read { try $0.countAll() }, 0)
        XCTAssertEqual(database.snapshot, 0)
    }

    func testMisuseIsReported() throws {
        let connection = try database.newConnection()
        let read = try connection.beginReadTransaction()
        XCTAssertThrowsError(try connection.beginReadWriteTransaction()) {
            XCTAssertEqual(($0 as? YDBError)?.code, .misuse)
        }
        read.end()
        XCTAssertThrowsError(try read.countAll()) { XCTAssertEqual(($0 as? YDBError)?.code, .misuse) }
        XCTAssertThrowsError(try connection.readWrite { t in
            try t.setObject([1], forKey: "a\u{0}b", inCollection: "c", metadata: nil)
        }) { XCTAssertEqual(($0 as? YDBError)?.code, .invalidArgument) }
        connection.close()
        XCTAssertThrowsError(try connection.beginReadTransaction()) { XCTAssertEqual(($0 as? YDBError)?.code, .closed) }
    }
}

final class CodableStoreTests: XCTestCase {
    struct Book: Codable, Equatable { var title: String; var rank: Int }

    func testCodableAndDataRoundTrip() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let connection = try database.newConnection()
        try connection.readWrite { t in
            try t.setValue(Book(title: "Dune", rank: 1), forKey: "b1", inCollection: "books", metadata: ["genre": "sf"])
            try t.setData(Data([1, 2, 3]), forKey: "raw", inCollection: "blobs")
        }
        try connection.read { t in
            XCTAssertEqual(try t.value(Book.self, forKey: "b1", inCollection: "books"), Book(title: "Dune", rank: 1))
            XCTAssertEqual(try t.metadataValue([String: String].self, forKey: "b1", inCollection: "books"), ["genre": "sf"])
            XCTAssertNil(try t.value(Book.self, forKey: "missing", inCollection: "books"))
            XCTAssertEqual(try t.data(forKey: "raw", inCollection: "blobs"), Data([1, 2, 3]))
            XCTAssertThrowsError(try t.value(Book.self, forKey: "raw", inCollection: "blobs")) {
                XCTAssertEqual(($0 as? YDBError)?.code, .invalidArgument)
            }
        }
    }

    func testHugeBlobAndFailedWriteLeavesNothing() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let connection = try database.newConnection()
        let huge = [UInt8](repeating: 7, count: 16 << 20)
        try connection.readWrite { try $0.setObject(huge, forKey: "big", inCollection: "c", metadata: nil) }
        XCTAssertEqual(try connection.read { try $0.object(forKey: "big", inCollection: "c")?.count }, 16 << 20)
        // A failed operation poisons the transaction: commit rolls everything back.
        let t = try connection.beginReadWriteTransaction()
        try t.setObject([1], forKey: "ok", inCollection: "c", metadata: nil)
        XCTAssertThrowsError(try t.setObject([1], forKey: "bad\u{0}", inCollection: "c", metadata: nil))
        XCTAssertThrowsError(try t.setObject([2], forKey: "more", inCollection: "c", metadata: nil))
        XCTAssertThrowsError(try t.commit())
        XCTAssertEqual(try connection.read { try $0.countAll() }, 1)
    }
}

/// Row ids are never reused, though the library hands them out itself
/// (`Schema.migrateToVersion4`): views and changesets name rows by id.
final class RowIdTests: FileDatabaseTestCase {

    func set(_ keys: [String], on connection: Connection) throws {
        try connection.readWrite { t in
            for key in keys { try t.setObject([1], forKey: key, inCollection: "c", metadata: nil) }
        }
    }

    func rowid(_ key: String, _ connection: Connection) throws -> Int64? {
        try connection.read { try $0.rowid(forKey: key, inCollection: "c") }
    }

    func remove(_ key: String, on connection: Connection) throws {
        try connection.readWrite { try $0.removeObject(forKey: key, inCollection: "c") }
    }

    func testRemovingTheLargestIdsNeverLetsANewRowTakeThem() throws {
        var database = try Database(path: path)
        var connection = try database.newConnection()
        try set(["a", "b", "c"], on: connection)
        let c = try XCTUnwrap(rowid("c", connection))
        try remove("c", on: connection)
        try set(["d"], on: connection)
        let d = try XCTUnwrap(rowid("d", connection))
        XCTAssertGreaterThan(d, c)

        // Removed, then the file is closed: the stored largest id survives.
        try connection.readWrite { try $0.removeAllObjects(inCollection: "c") }
        connection.close()
        database.close()
        database = try Database(path: path)
        connection = try database.newConnection()
        try set(["e"], on: connection)
        let e = try XCTUnwrap(rowid("e", connection))
        XCTAssertGreaterThan(e, d)

        // An id handed out in a transaction that rolled back is not reused.
        var rolledBack: Int64 = 0
        let transaction = try connection.beginReadWriteTransaction()
        try transaction.setObject([1], forKey: "f", inCollection: "c", metadata: nil)
        rolledBack = try XCTUnwrap(transaction.rowid(forKey: "f", inCollection: "c"))
        transaction.rollback()
        try set(["g"], on: connection)
        XCTAssertGreaterThan(try XCTUnwrap(rowid("g", connection)), rolledBack)
        connection.close()
        database.close()
    }

    func testSettingAKeyAfterAnInsertReplacesItsRowAndTakesNoId() throws {
        let database = try Database(path: path)
        defer { database.close() }
        let connection = try database.newConnection()
        // After an insert, a set tries to insert first: for a key that has a
        // row, that writes nothing, and the row is replaced in place.
        try connection.readWrite { t in
            try t.setObject([1], forKey: "a", inCollection: "c", metadata: nil)
            try t.setObject([2], forKey: "a", inCollection: "c", metadata: [9])
            try t.setObject([3], forKey: "b", inCollection: "c", metadata: nil)
        }
        let a = try XCTUnwrap(rowid("a", connection))
        XCTAssertEqual(try rowid("b", connection), a + 1)
        // And across transactions: the last set inserted "b".
        try connection.readWrite { t in
            try t.setObject([4], forKey: "a", inCollection: "c", metadata: nil)
            try t.setObject([5], forKey: "d", inCollection: "c", metadata: nil)
            try t.setObject([6], forKey: "b", inCollection: "c", metadata: nil)
        }
        try connection.read { t in
            XCTAssertEqual(try t.rowid(forKey: "a", inCollection: "c"), a)
            XCTAssertEqual(try t.row(forKey: "a", inCollection: "c")?.object, [4])
            XCTAssertNil(try t.metadata(forKey: "a", inCollection: "c"))
            XCTAssertEqual(try t.rowid(forKey: "b", inCollection: "c"), a + 1)
            XCTAssertEqual(try t.object(forKey: "b", inCollection: "c"), [6])
            XCTAssertEqual(try t.rowid(forKey: "d", inCollection: "c"), a + 2)
            XCTAssertEqual(try t.countAll(), 3)
        }
    }

    func storedLargestRowid() throws -> Int64 {
        let handle = try SQLiteHandle(path: path)
        defer { handle.close() }
        let select = try handle.statement("SELECT value FROM ydb_meta WHERE name = 'largest_rowid'")
        defer { select.reset() }
        XCTAssertTrue(try select.step())
        return select.int64(0)
    }

    func testOnlyACommitThatLowersTheTablesLargestIdStoresIt() throws {
        var database = try Database(path: path)
        var connection = try database.newConnection()
        try set(["a", "b", "c"], on: connection)
        let c = try XCTUnwrap(rowid("c", connection))
        // The table still holds the largest id: nothing to store.
        try remove("a", on: connection)
        XCTAssertEqual(try storedLargestRowid(), 0)
        try remove("c", on: connection)
        XCTAssertEqual(try storedLargestRowid(), c)
        // Stored already: removing another row stores nothing new.
        try set(["d"], on: connection)
        let d = try XCTUnwrap(rowid("d", connection))
        try remove("b", on: connection)
        XCTAssertEqual(try storedLargestRowid(), c)
        // Removing the row with the largest id stores it again.
        try remove("d", on: connection)
        XCTAssertEqual(try storedLargestRowid(), d)
        connection.close()
        database.close()
        database = try Database(path: path)
        defer { database.close() }
        connection = try database.newConnection()
        try set(["e"], on: connection)
        XCTAssertEqual(try rowid("e", connection), d + 1)
    }

    func testRemovingOneRowThenReopeningKeepsItsIdUnused() throws {
        var database = try Database(path: path)
        try set(["a", "b"], on: database.newConnection())
        let connection = try database.newConnection()
        let b = try XCTUnwrap(rowid("b", connection))
        // Removed, then set again and removed in one transaction: still a removal.
        try connection.readWrite { t in
            try t.removeObject(forKey: "b", inCollection: "c")
            try t.setObject([2], forKey: "b", inCollection: "c", metadata: nil)
            try t.removeObject(forKey: "b", inCollection: "c")
        }
        connection.close()
        database.close()
        database = try Database(path: path)
        defer { database.close() }
        let reopened = try database.newConnection()
        try set(["c"], on: reopened)
        XCTAssertGreaterThan(try XCTUnwrap(rowid("c", reopened)), b + 1)
    }

    func testARowAnotherProgramInsertedMeanwhileKeepsItsId() throws {
        let database = try Database(path: path)
        defer { database.close() }
        let connection = try database.newConnection()
        try set(["a"], on: connection)
        let a = try XCTUnwrap(rowid("a", connection))
        // Another SQLite client takes the id the library would hand out next.
        let other = try SQLiteHandle(path: path)
        try other.execute("INSERT INTO ydb_rows (collection, key, object) VALUES ('c', 'other', x'01')")
        other.close()
        try set(["b"], on: connection)
        let b = try XCTUnwrap(rowid("b", connection)), taken = try XCTUnwrap(rowid("other", connection))
        XCTAssertEqual(taken, a + 1)
        XCTAssertGreaterThan(b, taken)
        try connection.read { t in
            XCTAssertEqual(try t.object(forKey: "b", inCollection: "c"), [1])
            XCTAssertEqual(try t.object(forKey: "other", inCollection: "c"), [1])
        }
    }

    func testANewFileHasNoAutoincrementCounter() throws {
        let database = try Database(path: path)
        try set(["a"], on: database.newConnection())
        database.close()
        let handle = try SQLiteHandle(path: path)
        defer { handle.close() }
        let select = try handle.statement("SELECT sql FROM sqlite_master WHERE name = 'ydb_rows'")
        XCTAssertTrue(try select.step())
        XCTAssertFalse(select.string(0).uppercased().contains("AUTOINCREMENT"))
        select.reset()
        let version = try handle.statement("SELECT value FROM ydb_meta WHERE name = 'schema_version'")
        XCTAssertTrue(try version.step())
        XCTAssertEqual(version.int(0), Schema.currentVersion)
        version.reset()
    }
}

/// Snapshot numbers grow by one with each commit and never repeat across
/// opens, though `ydb_meta` stores them only now and then
/// (`Schema.reserveSnapshots`).
final class SnapshotNumberTests: FileDatabaseTestCase {

    func storedCeiling() throws -> UInt64 {
        let handle = try SQLiteHandle(path: path)
        defer { handle.close() }
        let select = try handle.statement("SELECT value FROM ydb_meta WHERE name = 'snapshot'")
        defer { select.reset() }
        XCTAssertTrue(try select.step())
        return UInt64(select.int64(0))
    }

    func commit(_ count: Int, on connection: Connection) throws {
        for index in 0..<count {
            try connection.readWrite { try $0.setObject([UInt8(index % 256)], forKey: "k", inCollection: "c", metadata: nil) }
        }
    }

    func testNumbersNeverRepeatAcrossOpensAndAreStoredOnlyNowAndThen() throws {
        let block = Schema.snapshotsReservedAtOnce
        var database = try Database(path: path)
        var connection = try database.newConnection()
        XCTAssertEqual(database.snapshot, 0)
        try commit(3, on: connection)
        XCTAssertEqual(database.snapshot, 3)
        // The first commit reserved a block; the next two wrote no number.
        XCTAssertEqual(try storedCeiling(), block)
        connection.close()
        database.close()

        // Reopened (as after a crash: nothing more is written at close), the
        // numbers go on from the ceiling, past every number handed out.
        database = try Database(path: path)
        connection = try database.newConnection()
        XCTAssertEqual(database.snapshot, block)
        try commit(1, on: connection)
        XCTAssertEqual(database.snapshot, block + 1)
        XCTAssertEqual(try storedCeiling(), 2 * block)
        XCTAssertEqual(try connection.read { $0.snapshot }, block + 1)

        // Going past the ceiling reserves the next block in the same commit.
        try commit(Int(block), on: connection)
        XCTAssertEqual(database.snapshot, 2 * block + 1)
        XCTAssertEqual(try storedCeiling(), 3 * block)
        connection.close()
        database.close()
        database = try Database(path: path)
        defer { database.close() }
        XCTAssertEqual(database.snapshot, 3 * block)
    }
}
