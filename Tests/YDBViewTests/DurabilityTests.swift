import Foundation
import XCTest
@testable import YDBView

/// Disk and memory stay bounded under the readers a UI keeps, observers see
/// commits in order, and closing never waits for itself.
final class DurabilityTests: XCTestCase {
    var database: Database!
    override func setUpWithError() throws { database = try Database(path: nil) }
    override func tearDown() { database.close() }

    var walBytes: Int {
        (try? FileManager.default.attributesOfItem(atPath: database.path + "-wal")[.size] as? Int) ?? 0
    }

    /// One row rewritten per commit, in a view, so each commit writes rows,
    /// index and view table pages.
    func commitUpdates(_ count: Int, on writer: Connection, after: (Int) throws -> Void = { _ in }) throws {
        for index in 0 ..< count {
            try writer.readWrite { t in
                try t.setObject(Item.encode(group: "g", rank: index % 97), forKey: "k\(index % 50)",
                                inCollection: "c", metadata: Array(repeating: UInt8(index % 251), count: 300))
            }
            try after(index)
        }
    }

    func testLogStaysBoundedWhileALongLivedReaderCatchesUpAfterEveryCommit() throws {
        try database.registerView(rankView(), name: "v")
        let writer = try database.newConnection(), reader = try database.newConnection()
        try reader.beginLongLivedReadTransaction()
        var largest = 0
        try commitUpdates(2500, on: writer) { index in
            let skipped = try reader.beginLongLivedReadTransaction()
            XCTAssertEqual(skipped.count, 1)
            try reader.read { t in XCTAssertEqual(try t.view("v").numberOfItems(inGroup: "g"), min(index + 1, 50)) }
            largest = max(largest, walBytes)
        }
        // Without the catch-up checkpoint the log grows by every commit
        // (about 25 MB here); with it, it stays near `WALPolicy.sizeLimit`.
        XCTAssertLessThan(largest, 8 << 20, "the write-ahead log grew to \(largest) bytes")
        XCTAssertGreaterThan(database.checkpointer.checkpointCount, 0)
    }

    func testALargeTransactionsLogIsEmptiedWhenNoReaderUsesIt() throws {
        // One transaction of about 12 MB: more than `WALPolicy.sizeLimit`,
        // which only applies when the log restarts, and than
        // `WALPolicy.truncationSize`. With no reader, the checkpoint thread
        // empties the log and cuts the file to zero bytes.
        let writer = try database.newConnection()
        try writer.readWrite { t in
            for index in 0 ..< 3_000 {
                try t.setObject(Array(repeating: UInt8(index % 251), count: 4_000), forKey: "k\(index)",
                                inCollection: "c", metadata: nil)
            }
        }
        XCTAssertGreaterThan(walBytes, WALPolicy.truncationSize)
        // The thread works on its own: wait for it (a bound, not a timing).
        let deadline = Date().addingTimeInterval(20)
        while walBytes > 0 && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(walBytes, 0, "the log was not emptied")
        XCTAssertEqual(try writer.read { try $0.count(inCollection: "c") }, 3_000)
    }

    func testALogWithinItsLimitKeepsItsFileWhenNoReaderUsesIt() throws {
        // Small commits and no reader: the thread checkpoints every
        // `checkpointFrames` pages. The log file keeps its size (the next
        // commits overwrite it from the beginning; a restart may trim it to
        // `sizeLimit`) instead of being cut to zero bytes and grown again,
        // which makes every commit slower.
        try database.registerView(rankView(), name: "v")
        let writer = try database.newConnection()
        var previous = 0, shrank: [(commit: Int, from: Int, to: Int)] = []
        try commitUpdates(2000, on: writer) { index in
            // Room for the thread to run between commits (not a timing).
            if index % 100 == 99 { usleep(5_000) }
            let now = walBytes
            if now < previous && now < WALPolicy.sizeLimit / 2 { shrank.append((index, previous, now)) }
            previous = now
        }
        XCTAssertGreaterThan(database.checkpointer.checkpointCount, 1)
        XCTAssertEqual(shrank.count, 0, "the log file was cut: \(shrank.prefix(3))")
        XCTAssertLessThanOrEqual(previous, WALPolicy.truncationSize)
        XCTAssertEqual(try writer.read { try $0.count(inCollection: "c") }, 50)
    }

    func testTheCheckpointerWaitingForTheGateGoesBeforeTheNextWriter() throws {
        // A writer that begins again at once after each commit must not keep
        // the checkpointer out: it would give up, and the log outgrow its
        // limit. Once the checkpointer waits, the next writer waits for it.
        let gate = database.writeGate, writer = try database.newConnection()
        let events = Mutex()
        var order: [String] = []
        func note(_ event: String) { events.withLock { order.append(event) } }
        let transaction = try writer.beginReadWriteTransaction()
        let checkpointerDone = Semaphore(value: 0)
        XCTAssertTrue(startThread {
            if gate.enter(waitingAtMost: 20_000) {
                note("checkpointer in")
                usleep(20_000)
                note("checkpointer out")
                gate.leave()
            }
            checkpointerDone.signal()
        })
        // Until it waits (a bound, not a timing).
        let deadline = Date().addingTimeInterval(20)
        while !gate.checkpointerIsWaiting && Date() < deadline { usleep(1_000) }
        XCTAssertTrue(gate.checkpointerIsWaiting)
        try transaction.commit()
        // Commits in a loop, as a busy program does: none may come first.
        for index in 0 ..< 100 { try writer.readWrite { _ in note("writer \(index)") } }
        checkpointerDone.wait()
        XCTAssertEqual(Array(order.prefix(3)), ["checkpointer in", "checkpointer out", "writer 0"])
    }

    func testReaderThatNeverCatchesUpIsReleasedAndToldToReload() throws {
        try database.registerView(rankView(), name: "v")
        database.maxCommitsBehind = 100
        let writer = try database.newConnection(), reader = try database.newConnection()
        try reader.beginLongLivedReadTransaction()
        let frozen = reader.snapshot
        try commitUpdates(50, on: writer)
        // Within the limit the frozen snapshot still reads.
        try reader.read { t in XCTAssertEqual(t.snapshot, frozen) }
        var largest = 0
        try commitUpdates(2000, on: writer) { _ in largest = max(largest, walBytes) }
        XCTAssertLessThan(largest, 16 << 20, "the write-ahead log grew to \(largest) bytes")
        XCTAssertThrowsError(try reader.read { _ in }) { error in
            XCTAssertEqual((error as? YDBError)?.code, .reloadRequired)
        }
        XCTAssertThrowsError(try reader.beginLongLivedReadTransaction()) { error in
            XCTAssertEqual((error as? YDBError)?.code, .reloadRequired)
        }
        // The failed catch-up still moved it to the latest snapshot.
        XCTAssertEqual(reader.snapshot, database.snapshot)
        try reader.read { t in
            XCTAssertEqual(t.snapshot, database.snapshot)
            XCTAssertEqual(try t.view("v").numberOfItems(inGroup: "g"), 50)
        }
        try commitUpdates(1, on: writer)
        XCTAssertEqual(try reader.beginLongLivedReadTransaction().count, 1)
    }

    func testIdleConnectionDropsItsNotificationsPastTheLimit() throws {
        database.maxCommitsBehind = 10
        let writer = try database.newConnection(), idle = try database.newConnection()
        try commitUpdates(5, on: writer)
        XCTAssertEqual(try idle.beginLongLivedReadTransaction().count, 5)
        idle.endLongLivedReadTransaction()
        try commitUpdates(11, on: writer)
        XCTAssertThrowsError(try idle.beginLongLivedReadTransaction()) { error in
            XCTAssertEqual((error as? YDBError)?.code, .reloadRequired)
        }
        XCTAssertTrue(idle.isInLongLivedReadTransaction)
        try commitUpdates(2, on: writer)
        XCTAssertEqual(try idle.beginLongLivedReadTransaction().count, 2)
    }

    func testObserversSeeCommitsInSnapshotOrderAcrossThreads() throws {
        let seen = Locked<[UInt64]>([])
        database.addCommitObserver { notification in seen.mutate { $0.append(notification.snapshot) } }
        let threads = 3, commits = 200
        let group = DispatchGroup()
        for thread in 0 ..< threads {
            let connection = try database.newConnection()
            DispatchQueue.global().async(group: group) {
                for index in 0 ..< commits {
                    try? connection.readWrite { t in
                        try t.setObject([UInt8(index % 256)], forKey: "t\(thread)", inCollection: "c", metadata: nil)
                    }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        let snapshots = seen.value
        XCTAssertEqual(snapshots.count, threads * commits)
        XCTAssertEqual(snapshots, snapshots.sorted(), "observers were called out of snapshot order")
    }

    func testObserverThatCommitsSeesItsCommitAfterTheOthers() throws {
        let writer = try database.newConnection()
        let seen = Locked<[(Int, UInt64)]>([])
        database.addCommitObserver { notification in
            seen.mutate { $0.append((1, notification.snapshot)) }
            if notification.snapshot == 1 {
                try? writer.readWrite { try $0.setObject([2], forKey: "b", inCollection: "c", metadata: nil) }
            }
        }
        database.addCommitObserver { notification in seen.mutate { $0.append((2, notification.snapshot)) } }
        let first = try database.newConnection()
        try first.readWrite { try $0.setObject([1], forKey: "a", inCollection: "c", metadata: nil) }
        XCTAssertEqual(seen.value.map { "\($0.0)@\($0.1)" }, ["1@1", "2@1", "1@2", "2@2"])
    }

    func testClosingTheDatabaseEndsTransactionsWithAClearError() throws {
        let reading = try database.newConnection(), writing = try database.newConnection()
        let read = try reading.beginReadTransaction()
        let write = try writing.beginReadWriteTransaction()
        try write.setObject([1], forKey: "never", inCollection: "c", metadata: nil)
        database.close()
        for attempt in [{ _ = try read.countAll() }, { try write.commit() }] {
            XCTAssertThrowsError(try attempt()) { error in
                XCTAssertEqual((error as? YDBError)?.code, .closed)
                XCTAssertTrue((error as? YDBError)?.message.contains("its database was closed") ?? false)
            }
        }
        XCTAssertThrowsError(try writing.beginReadTransaction()) { error in
            XCTAssertEqual((error as? YDBError)?.code, .closed)
        }
    }

    /// An observer holding the last reference to a connection: closing the
    /// database drops it, and the connection's deinit must not wait for the
    /// lock `close()` is holding.
    func testCloseWhileAnObserverHoldsTheLastConnection() throws {
        var connection: Connection? = try database.newConnection()
        let held = connection!
        database.addCommitObserver { _ in _ = held.snapshot }
        connection = nil
        let done = DispatchSemaphore(value: 0)
        let database = self.database!
        Thread { database.close(); done.signal() }.start()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "Database.close() deadlocked")
    }
}
