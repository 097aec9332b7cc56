import Foundation
import XCTest
@testable import YDBView

/// The engine's edges: values SQLite cannot store, one Database per file,
/// and a second writer on the thread that already writes.
/// `@unchecked Sendable`: the watchdog threads call only its stateless helpers.
final class EdgeTests: XCTestCase, @unchecked Sendable {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func assertCode<T>(_ code: YDBErrorCode, _ body: @autoclosure () throws -> T, contains text: String = "",
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            guard let error = error as? YDBError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(error.code, code, error.message, file: file, line: line)
            XCTAssertTrue(text.isEmpty || error.message.contains(text), error.message, file: file, line: line)
        }
    }

    // MARK: Values SQLite cannot store

    /// A database whose handles store at most `limit` bytes per value.
    func smallDatabase(limit: Int) throws -> Database {
        setenv("YDBVIEW_MAX_VALUE_BYTES", String(limit), 1)
        defer { unsetenv("YDBVIEW_MAX_VALUE_BYTES") }
        return try Database(path: nil)
    }

    func testTooBigValuesAreRefusedAndNothingChanges() throws {
        let limit = 4096
        let database = try smallDatabase(limit: limit)
        defer { database.close() }
        let connection = try database.newConnection()
        let big = [UInt8](repeating: 120, count: limit + 1)
        try connection.readWrite { try $0.setObject(bytes("small"), forKey: "k", inCollection: "c", metadata: bytes("meta")) }
        try connection.readWrite { t in
            assertCode(.tooBig, try t.setObject(big, forKey: "k", inCollection: "c", metadata: nil), contains: "4097 bytes")
            assertCode(.tooBig, try t.setObject(big, forKey: "new", inCollection: "c", metadata: nil), contains: "limit of 4096")
            assertCode(.tooBig, try t.replaceObject(big, forKey: "k", inCollection: "c"), contains: "object")
            assertCode(.tooBig, try t.setObject(bytes("o"), forKey: "k", inCollection: "c", metadata: big), contains: "metadata")
            assertCode(.tooBig, try t.replaceMetadata(big, forKey: "k", inCollection: "c"), contains: "metadata")
            assertCode(.tooBig, try t.setObject(bytes("o"), forKey: String(repeating: "k", count: limit + 1),
                                                inCollection: "c", metadata: nil), contains: "key")
            let half = [UInt8](repeating: 1, count: limit / 2 + 1)
            assertCode(.tooBig, try t.setObject(half, forKey: "k", inCollection: "c", metadata: half), contains: "row")
            // A name no row can have is simply not found.
            let longName = String(repeating: "n", count: limit + 1)
            XCTAssertNil(try t.object(forKey: longName, inCollection: "c"))
            XCTAssertFalse(try t.exists(key: "k", inCollection: longName))
            XCTAssertEqual(try t.count(inCollection: longName), 0)
            try t.removeObject(forKey: longName, inCollection: "c")
            try t.touchObject(forKey: "k", inCollection: longName)
            // Refused before anything was written: the transaction goes on.
            XCTAssertEqual(try t.object(forKey: "k", inCollection: "c"), bytes("small"))
            try t.setObject(bytes("fits"), forKey: "other", inCollection: "c", metadata: nil)
        }
        try connection.read { t in
            XCTAssertEqual(try t.object(forKey: "k", inCollection: "c"), bytes("small"))
            XCTAssertEqual(try t.metadata(forKey: "k", inCollection: "c"), bytes("meta"))
            XCTAssertFalse(try t.exists(key: "new", inCollection: "c"))
            XCTAssertEqual(try t.object(forKey: "other", inCollection: "c"), bytes("fits"))
        }
    }

    /// Parts that each fit next to a large kept value: SQLite refuses the
    /// row; the failure poisons the transaction and nothing is written.
    func testRowRefusedBySQLiteRollsBack() throws {
        let limit = 4096
        let database = try smallDatabase(limit: limit)
        defer { database.close() }
        let connection = try database.newConnection()
        let most = [UInt8](repeating: 1, count: limit - 100)
        try connection.readWrite { try $0.setObject(most, forKey: "k", inCollection: "c", metadata: bytes("meta")) }
        let transaction = try connection.beginReadWriteTransaction()
        assertCode(.tooBig, try transaction.replaceMetadata(most, forKey: "k", inCollection: "c"),
                   contains: "limit is 4096 bytes")
        assertCode(.tooBig, try transaction.commit())
        try connection.read { t in
            XCTAssertEqual(try t.metadata(forKey: "k", inCollection: "c"), bytes("meta"))
        }
    }

    /// Every bind is checked: a value over the limit is not stored as NULL.
    func testStatementRefusesAnOversizedBind() throws {
        let database = try smallDatabase(limit: 1024)
        defer { database.close() }
        let handle = try SQLiteHandle(path: database.path, maxValueBytes: 1024)
        defer { handle.close() }
        XCTAssertEqual(handle.maxValueBytes, 1024)
        let select = try handle.statement("SELECT length(?1)")
        select.bind(1, [UInt8](repeating: 0, count: 2000))
        assertCode(.tooBig, try select.step(), contains: "2000 bytes")
        let again = try handle.statement("SELECT length(?1)")
        again.bind(1, [UInt8](repeating: 0, count: 10))
        XCTAssertTrue(try again.step())
        XCTAssertEqual(again.int(0), 10)
    }

    // MARK: One Database per database file

    func makeDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory() + "ydbview-edges-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw YDBError(.error, "mkdtemp") }
        return String(cString: made)
    }

    func testSecondOpenOfTheSameFileIsBusyByAnyName() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/db.sqlite", symlinkPath = directory + "/symlink.sqlite"
        let hardLinkPath = directory + "/hardlink.sqlite"
        let database = try Database(path: path)
        let connection = try database.newConnection()
        try connection.readWrite { try $0.setObject(bytes("v"), forKey: "k", inCollection: "c", metadata: nil) }
        XCTAssertEqual(symlink(path, symlinkPath), 0)
        XCTAssertEqual(link(path, hardLinkPath), 0)
        for name in [path, symlinkPath, hardLinkPath] {
            assertCode(.busy, try Database(path: name), contains: name)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-ydbview.lock"))
        // The refused opens broke nothing (closing a descriptor of the file
        // would have dropped SQLite's locks on it).
        try connection.readWrite { try $0.setObject(bytes("w"), forKey: "k", inCollection: "c", metadata: nil) }
        XCTAssertEqual(try connection.read { try $0.object(forKey: "k", inCollection: "c") }, bytes("w"))
        // Closing the database closes its connections' SQLite handles too,
        // so the file is free at once.
        database.close()
        XCTAssertThrowsError(try connection.read { _ in }) { error in
            XCTAssertEqual((error as? YDBError)?.code, .closed)
        }
        let again = try Database(path: symlinkPath)
        XCTAssertEqual(try again.newConnection().read { try $0.object(forKey: "k", inCollection: "c") }, bytes("w"))
        again.close()
    }

    func testUnopenablePathNamesTheSystemReason() throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let missing = directory + "/no/such.sqlite"
        assertCode(.cantOpen, try Database(path: missing), contains: "\(missing): \(String(cString: strerror(ENOENT)))")
        assertCode(.cantOpen, try Database(path: directory), contains: directory)
    }

    // MARK: A second writer on the thread that already writes

    /// Runs `body` on a thread of its own and fails (instead of hanging)
    /// when it does not finish in time.
    func withWatchdog(seconds: Double = 30, file: StaticString = #filePath, line: UInt = #line,
                      _ body: @escaping @Sendable () throws -> Void) {
        let done = DispatchSemaphore(value: 0)
        let failure = Locked<Error?>(nil)
        Thread.detachNewThread {
            do { try body() } catch { failure.mutate { $0 = error } }
            done.signal()
        }
        if done.wait(timeout: .now() + seconds) == .timedOut {
            XCTFail("hung for \(seconds) s", file: file, line: line)
        } else if let error = failure.value {
            XCTFail("\(error)", file: file, line: line)
        }
    }

    func testSecondWriterOnTheSameThreadIsMisuse() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        withWatchdog {
            let connection = try database.newConnection(), other = try database.newConnection()
            try connection.readWrite { try $0.setObject(self.bytes("v"), forKey: "k", inCollection: "c", metadata: nil) }
            try connection.readWrite { t in
                self.assertCode(.misuse, try other.beginReadWriteTransaction(), contains: "wait for itself")
                try t.enumerateRows(inCollection: "c") { _, _, _, _ in
                    self.assertCode(.misuse, try other.beginReadWriteTransaction(), contains: "wait for itself")
                }
                // Registering a view writes on the database's own connection.
                self.assertCode(.misuse, try database.registerView(rankView(), name: "v"))
                try t.setObject(self.bytes("v2"), forKey: "k2", inCollection: "c", metadata: nil)
            }
            // Ended: this thread writes again.
            XCTAssertEqual(try other.readWrite { try $0.object(forKey: "k2", inCollection: "c") }, self.bytes("v2"))
            // A read holds no write.
            try connection.read { t in
                try t.enumerateRows(inCollection: "c") { _, _, _, _ in try other.readWrite { _ in } }
            }
        }
    }

    /// Another thread still waits for the writer; a transaction ended on
    /// another thread than the one that began it frees the beginning thread.
    func testOtherThreadsStillWait() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let connection = try database.newConnection(), other = try database.newConnection()
        let began = DispatchSemaphore(value: 0), mayCommit = DispatchSemaphore(value: 0)
        let order = Locked<[String]>([])
        withWatchdog {
            let transaction = try connection.beginReadWriteTransaction()
            Thread.detachNewThread {
                began.signal()
                let second = try? other.beginReadWriteTransaction()   // waits for the first
                order.mutate { $0.append("second began") }
                second?.rollback()
                mayCommit.signal()
            }
            began.wait()
            usleep(100_000)
            order.mutate { $0.append("first commits") }
            let committed = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                try? transaction.commit()   // ended on another thread
                committed.signal()
            }
            committed.wait()
            mayCommit.wait()
            try connection.readWrite { _ in }   // this thread may write again
        }
        XCTAssertEqual(order.value, ["first commits", "second began"])
    }
}
