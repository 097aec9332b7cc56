import Foundation
import XCTest
@testable import YDBView

final class ConcurrencyTests: XCTestCase {
    /// Runs `write` on one thread while three reader threads, each with its
    /// own connection, call `read(reader, connection)` again and again
    /// (until `write` has returned, and at least `minimumReads` times),
    /// then `finish(reader, connection)`. Returns every problem reported
    /// through `report`, or thrown.
    private func problems(_ database: Database, minimumReads: Int = 0,
                          read: @escaping @Sendable (Int, Connection, _ report: (String) -> Void) throws -> Void,
                          finish: @escaping @Sendable (Int, Connection, _ report: (String) -> Void) -> Void = { _, _, _ in },
                          write: @escaping @Sendable () throws -> Void) -> [String] {
        let shared = SharedState()
        let group = DispatchGroup()
        let done = DispatchSemaphore(value: 0)
        for reader in 0 ..< 3 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let report = { (problem: String) in shared.report("reader \(reader): \(problem)") }
                do {
                    let connection = try database.newConnection()
                    var reads = 0
                    while !shared.stopped || reads < minimumReads {
                        try read(reader, connection, report)
                        reads += 1
                    }
                    finish(reader, connection, report)
                } catch {
                    report("\(error)")
                }
            }
        }
        Thread.detachNewThread {
            do { try write() } catch { shared.report("writer: \(error)") }
            done.signal()
        }
        done.wait()
        shared.stop()
        group.wait()
        return shared.problems
    }

    /// Readers on other threads, each with its own connection, always see a
    /// consistent snapshot: the view holds exactly the rows of the collection,
    /// and snapshots never go backwards, while a writer commits.
    func testReadersSeeConsistentSnapshotsWhileWritersCommit() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let writer = try database.newConnection()
        let lastSnapshots = Locked([UInt64](repeating: 0, count: 3))   // one slot per reader thread
        let found = problems(database, read: { reader, connection, report in
            try connection.read { t in
                let rows = try t.count(inCollection: "items")
                let shown = try t.view("v").numberOfItemsInAllGroups()
                if rows != shown || t.snapshot < lastSnapshots.value[reader] {
                    report("rows \(rows) view \(shown)")
                }
                lastSnapshots.mutate { $0[reader] = t.snapshot }
            }
        }, write: {
            var rng = SeededGenerator(seed: 5)
            for step in 0 ..< 300 {
                try writer.readWrite { t in
                    let key = "k\(Int.random(in: 0 ..< 50, using: &rng))"
                    if step % 3 == 2 {
                        try t.removeObject(forKey: key, inCollection: "items")
                    } else {
                        try t.setObject(Item.encode(group: "g\(step % 4)", rank: step), forKey: key,
                                        inCollection: "items", metadata: nil)
                    }
                }
            }
        })
        XCTAssertEqual(found, [])
        XCTAssertGreaterThan(database.snapshot, 250)
    }

    /// Row caches under concurrent commits: each commit rewrites the
    /// metadata of all eight rows of a group to one number, without moving
    /// them, so a reader whose cache kept a row past a commit that changed
    /// it would see two numbers in one read, or one that SQLite no longer
    /// holds at its snapshot. Readers read through their caches (plain
    /// reads and a long-lived read catching up) meanwhile.
    func testCachedReadsNeverMixSnapshotsWhileWritersCommit() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let writer = try database.newConnection()
        try writer.readWrite { t in
            for index in 0 ..< 8 {
                try t.setObject(Item.encode(group: "g", rank: index), forKey: "k\(index)", inCollection: "items",
                                metadata: [0])
            }
        }
        let found = problems(database, minimumReads: 50, read: { reader, connection, report in
            if reader == 2 { try connection.beginLongLivedReadTransaction() }
            try connection.read { t in
                let view = try t.view("v")
                let ranged = try view.rows(inGroup: "g", range: 0 ..< 8).map(\.metadata)
                let single = try (0 ..< 8).map { try view.row(at: $0, inGroup: "g")?.metadata }
                // What SQLite holds at this snapshot, read past the cache.
                let stored = try t.metadata(forKey: "k0", inCollection: "items")
                if Set(ranged + single) != [stored] || ranged.count != 8 {
                    report("at \(t.snapshot): \(ranged) \(single)")
                }
            }
        }, finish: { _, connection, report in
            if connection.rowCache.hits == 0 { report("the cache was never used") }
        }, write: {
            for step in 1 ... 300 {
                try writer.readWrite { t in
                    for index in 0 ..< 8 {
                        try t.replaceMetadata([UInt8(step % 256)], forKey: "k\(index)", inCollection: "items")
                    }
                }
            }
        })
        XCTAssertEqual(found, [])
    }

    /// Views live in the Database object's memory: a second Database on the
    /// same file is refused instead of silently diverging.
    func testSecondDatabaseOnTheSameFileIsRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ydbview-lock-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        let first = try Database(path: path)
        XCTAssertThrowsError(try Database(path: path)) { XCTAssertEqual(($0 as? YDBError)?.code, .busy) }
        first.close()
        let again = try Database(path: path)
        again.close()
    }
}

/// What the threads of a concurrency test share, behind one lock.
private final class SharedState: @unchecked Sendable {
    private let lock = NSLock()
    private var stopFlag = false
    private var reported: [String] = []
    var stopped: Bool { lock.withLock { stopFlag } }
    var problems: [String] { lock.withLock { reported } }
    func stop() { lock.withLock { stopFlag = true } }
    func report(_ problem: String) { lock.withLock { reported.append(problem) } }
}
