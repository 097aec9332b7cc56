import Foundation
import XCTest
@testable import YDBView

final class ConcurrencyTests: XCTestCase {
    /// Readers on other threads, each with its own connection, always see a
    /// consistent snapshot: the view holds exactly the rows of the collection,
    /// and snapshots never go backwards, while a writer commits.
    func testReadersSeeConsistentSnapshotsWhileWritersCommit() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let writer = try database.newConnection()
        let shared = SharedState()
        let group = DispatchGroup()
        let done = DispatchSemaphore(value: 0)
        for reader in 0 ..< 3 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    let connection = try database.newConnection()
                    var lastSnapshot: UInt64 = 0
                    while !shared.stopped {
                        try connection.read { t in
                            let rows = try t.count(inCollection: "items")
                            let shown = try t.view("v")!.numberOfItemsInAllGroups()
                            if rows != shown || t.snapshot < lastSnapshot {
                                shared.report("reader \(reader): rows \(rows) view \(shown)")
                            }
                            lastSnapshot = t.snapshot
                        }
                    }
                } catch {
                    shared.report("reader \(reader): \(error)")
                }
            }
        }
        Thread.detachNewThread {
            var rng = SeededGenerator(seed: 5)
            do {
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
            } catch {
                shared.report("writer: \(error)")
            }
            done.signal()
        }
        done.wait()
        shared.stop()
        group.wait()
        XCTAssertEqual(shared.problems, [])
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
        let shared = SharedState()
        let group = DispatchGroup()
        let done = DispatchSemaphore(value: 0)
        for reader in 0 ..< 3 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    let connection = try database.newConnection()
                    let longLived = reader == 2
                    var reads = 0
                    while !shared.stopped || reads < 50 {
                        if longLived { try connection.beginLongLivedReadTransaction() }
                        try connection.read { t in
                            let view = try t.view("v")!
                            let ranged = try view.rows(inGroup: "g", range: 0 ..< 8).map(\.metadata)
                            let single = try (0 ..< 8).map { try view.row(at: $0, inGroup: "g")?.metadata }
                            // What SQLite holds at this snapshot, read past the cache.
                            let stored = try t.metadata(forKey: "k0", inCollection: "items")
                            let seen = Set(ranged + single)
                            if seen != [stored] || ranged.count != 8 {
                                shared.report("reader \(reader) at \(t.snapshot): \(ranged) \(single)")
                            }
                        }
                        reads += 1
                    }
                    if connection.rowCache.hits == 0 { shared.report("reader \(reader): the cache was never used") }
                } catch {
                    shared.report("reader \(reader): \(error)")
                }
            }
        }
        Thread.detachNewThread {
            do {
                for step in 1 ... 300 {
                    try writer.readWrite { t in
                        for index in 0 ..< 8 {
                            try t.replaceMetadata([UInt8(step % 256)], forKey: "k\(index)", inCollection: "items")
                        }
                    }
                }
            } catch {
                shared.report("writer: \(error)")
            }
            done.signal()
        }
        done.wait()
        shared.stop()
        group.wait()
        XCTAssertEqual(shared.problems, [])
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
