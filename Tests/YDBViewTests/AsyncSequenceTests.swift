import XCTest
@testable import YDBView

/// Swift concurrency: `for try await` over mappings' changesets while two
/// tasks commit with `asyncReadWrite`, every changeset a valid batch update
/// from the table drawn before it, the last table a fresh read's; the
/// iteration ends on cancellation and on close, and a consumer that fell
/// too far behind gets `.reloadRequired`.
final class AsyncSequenceTests: XCTestCase {
    func testChangesetsFollowTwoWritingTasksToAFreshRead() async throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let ui = try database.newConnection()
        let writers = [try database.newConnection(), try database.newConnection()]
        let mappings = Mappings(groups: asyncTestGroups, view: "v")
        let (first, second) = (writers[0], writers[1])
        let writing = Task.detached { try await writeBoth(first, second) }
        var table: Table?
        var changesets = 0
        for try await changeset in ui.changesets(for: mappings) {
            let contents = try ui.read { try $0.viewContents(named: "v") }
            let new = Table(mappings: mappings, contents: contents)
            if let old = table {
                try BatchUpdate(changeset).check(from: old, to: new)
            } else {
                XCTAssertTrue(changeset.isEmpty, "the first changeset is the initial state")
            }
            table = new
            changesets += 1
            if try ui.read({ try $0.object(forKey: "last", inCollection: "c") }) != nil { break }
        }
        try await writing.value
        XCTAssertEqual(ui.snapshot, database.snapshot)
        XCTAssertGreaterThan(changesets, 1)
        let last = table
        let fresh = try database.newConnection()
        let freshMappings = Mappings(groups: asyncTestGroups, view: "v")
        let contents = try fresh.read { t -> any ViewContents in
            try freshMappings.update(with: t)
            return try t.viewContents(named: "v")
        }
        let freshTable = Table(mappings: freshMappings, contents: contents)
        XCTAssertEqual(last?.groups, freshTable.groups)
        XCTAssertEqual(last?.sections, freshTable.sections)
    }

    func testCancellationEndsTheIteration() async throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let ui = try database.newConnection()
        let follower = Task { () -> Int in
            var elements = 0
            for try await _ in ui.commits() { elements += 1 }
            return elements
        }
        try await Task.sleep(nanoseconds: 50_000_000)
        follower.cancel()
        let elements = try await follower.value
        XCTAssertEqual(elements, 0)
    }

    func testClosingTheConnectionOrTheDatabaseEndsTheIteration() async throws {
        for closesDatabase in [false, true] {
            let database = try Database(path: nil)
            let ui = try database.newConnection(), writer = try database.newConnection()
            let follower = Task { () -> [UInt64] in
                var snapshots: [UInt64] = []
                for try await skipped in ui.commits() { snapshots += skipped.map(\.snapshot) }
                return snapshots
            }
            try await writer.asyncReadWrite { try $0.setObject([1], forKey: "k", inCollection: "c", metadata: nil) }
            let committed = database.snapshot
            while ui.snapshot < committed { try await Task.sleep(nanoseconds: 5_000_000) }
            if closesDatabase { database.close() } else { ui.close() }
            let snapshots = try await follower.value
            XCTAssertEqual(snapshots, [committed])
            database.close()
        }
    }

    func testAConsumerTooFarBehindIsToldToReload() async throws {
        let database = try Database(path: nil)
        defer { database.close() }
        database.maxCommitsBehind = 3
        let ui = try database.newConnection(), writer = try database.newConnection()
        try ui.beginLongLivedReadTransaction()
        let commits = ui.commits().makeAsyncIterator()
        for index in 0..<6 {
            try await writer.asyncReadWrite { try $0.setObject([UInt8(index)], forKey: "k", inCollection: "c", metadata: nil) }
        }
        do {
            _ = try await commits.next()
            XCTFail("no reloadRequired")
        } catch let error as YDBError {
            XCTAssertEqual(error.code, .reloadRequired)
        }
        XCTAssertEqual(ui.snapshot, database.snapshot)
        let value = try await ui.asyncRead { try $0.object(forKey: "k", inCollection: "c") }
        XCTAssertEqual(value, [5])
    }
}

private let asyncTestGroups = ["a", "b", "c"]

private func write(_ connection: Connection, seed: UInt64, commits: Int) async throws {
    var rng = SeededGenerator(seed: seed)
    for _ in 0..<commits {
        let rows = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
            (key: "k\(Int.random(in: 0..<24, using: &rng))", group: asyncTestGroups.randomElement(using: &rng)!,
             rank: Int.random(in: 0..<50, using: &rng), remove: Int.random(in: 0..<4, using: &rng) == 0)
        }
        try await connection.asyncReadWrite { t in
            for row in rows {
                if row.remove {
                    try t.removeObject(forKey: row.key, inCollection: "c")
                } else {
                    try t.setObject(Item.encode(group: row.group, rank: row.rank), forKey: row.key,
                                    inCollection: "c", metadata: nil)
                }
            }
        }
    }
}

/// Two tasks commit at once, then one more commit names the end.
private func writeBoth(_ first: Connection, _ second: Connection) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await write(first, seed: 1, commits: 40) }
        group.addTask { try await write(second, seed: 2, commits: 40) }
        try await group.waitForAll()
    }
    try await first.asyncReadWrite { t in
        try t.setObject(Item.encode(group: "a", rank: 1), forKey: "last", inCollection: "c", metadata: nil)
    }
}
