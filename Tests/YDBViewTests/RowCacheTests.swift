import XCTest
@testable import YDBView

/// A connection's row cache must never show a row other than as SQLite
/// holds it at the transaction's snapshot: every read through a cached
/// connection is compared with the same read through a connection whose
/// cache is off, after random commits, rollbacks, metadata-only changes
/// (which move no row), emptied collections and long-lived reads.
final class RowCacheTests: XCTestCase {
    typealias Shown = [(key: RowKey, object: [UInt8], metadata: [UInt8]?)]

    private func same(_ a: Shown, _ b: Shown) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.object == $1.object && $0.metadata == $1.metadata }
    }

    /// Everything a read transaction shows of group `group` through the ways
    /// that use the cache: a range in one call, one row at a time, and an
    /// enumeration of a short range.
    private func read(_ view: ViewTransaction, _ group: String, _ range: Range<Int>) throws -> [Shown] {
        let ranged = try view.rows(inGroup: group, range: range)
        var single: Shown = []
        for index in range {
            if let row = try view.row(at: index, inGroup: group) { single.append(row) }
        }
        var enumerated: Shown = []
        try view.enumerateRows(inGroup: group, range: range) { key, object, metadata, _, _ in
            enumerated.append((key, object, metadata))
        }
        return [ranged, single, enumerated]
    }

    func testCachedReadsMatchUncachedReadsAfterRandomCommits() throws {
        for keyed in [false, true] {
            var random = SeededGenerator(seed: keyed ? 31 : 30)
            let database = try Database(path: nil)
            defer { database.close() }
            database.maxCommitsBehind = 6
            try database.registerView(rankView(keyed: keyed), name: "v")
            let writer = try database.newConnection()
            let cached = try database.newConnection()
            let tiny = try database.newConnection()      // evicts all the time
            tiny.rowCacheLimit = 3
            let reference = try database.newConnection()
            reference.rowCacheLimit = 0
            let longLived = try database.newConnection()
            let longLivedReference = try database.newConnection()
            longLivedReference.rowCacheLimit = 0
            try longLived.beginLongLivedReadTransaction()
            try longLivedReference.beginLongLivedReadTransaction()
            let groups = ["a", "b"]
            func compare(_ connection: Connection, with referenceConnection: Connection, _ context: String) throws {
                let group = groups.randomElement(using: &random)!
                let lower = Int.random(in: 0 ..< 12, using: &random)
                let range = lower ..< lower + Int.random(in: 0 ..< 8, using: &random)
                let expected = try referenceConnection.read { try read($0.view("v"), group, range) }
                // Twice: the second read is served from what the first kept.
                for pass in 0 ..< 2 {
                    let shown = try connection.read { try read($0.view("v"), group, range) }
                    for (way, (got, wanted)) in zip(shown, expected).enumerated() {
                        XCTAssertTrue(same(got, wanted), "\(context), pass \(pass), way \(way), \(group) \(range)")
                    }
                }
            }
            for step in 0 ..< 400 {
                let context = "keyed \(keyed), step \(step)"
                let key = "k\(Int.random(in: 0 ..< 25, using: &random))"
                let collection = Int.random(in: 0 ..< 4, using: &random) == 0 ? "other" : "items"
                let group = groups.randomElement(using: &random)!
                let rank = Int.random(in: 0 ..< 30, using: &random)
                let metadata: [UInt8]? = Bool.random(using: &random) ? [UInt8(step % 256)] : nil
                switch Int.random(in: 0 ..< 20, using: &random) {
                case 0 ..< 7:
                    try writer.readWrite {
                        try $0.setObject(Item.encode(group: group, rank: rank), forKey: key, inCollection: collection,
                                         metadata: metadata)
                    }
                case 7 ..< 10:   // the row stays where it is: only what it shows changes
                    try writer.readWrite {
                        if try $0.exists(key: key, inCollection: collection) {
                            try $0.replaceMetadata([UInt8(step % 256), 1], forKey: key, inCollection: collection)
                        }
                    }
                case 10 ..< 12:
                    try writer.readWrite { try $0.removeObject(forKey: key, inCollection: collection) }
                case 12:
                    try writer.readWrite { try $0.removeAllObjects(inCollection: collection) }
                case 13:
                    if Int.random(in: 0 ..< 4, using: &random) == 0 {
                        try writer.readWrite { try $0.removeAllObjectsInAllCollections() }
                    }
                case 14:   // a rollback after reading its own change through the view
                    let transaction = try writer.beginReadWriteTransaction()
                    try transaction.setObject(Item.encode(group: group, rank: rank), forKey: key,
                                              inCollection: collection, metadata: [9, 9])
                    let own = try transaction.view("v").rows(inGroup: group, range: 0 ..< 30)
                    XCTAssertTrue(own.contains { $0.key.key == key && $0.metadata == [9, 9] }, context)
                    transaction.rollback()
                case 15, 16:   // the long-lived readers catch up together
                    try longLived.beginLongLivedReadTransaction()
                    try longLivedReference.beginLongLivedReadTransaction()
                default:
                    break
                }
                // The writer reads too: its cache moves past its own commits.
                try compare(writer, with: reference, context + ", writer")
                if step % 3 == 0 { try compare(cached, with: reference, context + ", cached") }
                if step % 13 == 0 {   // mostly far behind: more than maxCommitsBehind commits
                    try compare(tiny, with: reference, context + ", tiny")
                }
                if database.snapshot - longLived.snapshot > 6 {
                    // Too far behind: released, and caught up with what was
                    // skipped unknown (`reloadRequired`), which empties the cache.
                    XCTAssertThrowsError(try longLived.beginLongLivedReadTransaction())
                    XCTAssertThrowsError(try longLivedReference.beginLongLivedReadTransaction())
                }
                try compare(longLived, with: longLivedReference, context + ", long-lived")
            }
            XCTAssertLessThanOrEqual(tiny.rowCache.count, 3)
            XCTAssertLessThanOrEqual(cached.rowCache.count, RowCache.defaultLimit)
            for (name, connection) in [("writer", writer), ("cached", cached), ("tiny", tiny), ("long-lived", longLived)] {
                print("row cache hits, keyed \(keyed), \(name): \(connection.rowCache.hits)")
                XCTAssertGreaterThan(connection.rowCache.hits, connection === tiny ? 10 : 100,
                                     "keyed \(keyed), \(name): the cache answered reads")
            }
            XCTAssertEqual(reference.rowCache.hits, 0)
        }
    }

    func testOnlyChangedRowsAreReadAgainAfterACommit() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let writer = try database.newConnection(), reader = try database.newConnection()
        try writer.readWrite { t in
            for index in 0 ..< 10 {
                try t.setObject(Item.encode(group: "g", rank: index), forKey: "k\(index)", inCollection: "items",
                                metadata: nil)
            }
        }
        _ = try reader.read { try $0.view("v").rows(inGroup: "g", range: 0 ..< 10) }
        XCTAssertEqual(reader.rowCache.count, 10)
        try writer.readWrite { try $0.replaceMetadata([1], forKey: "k3", inCollection: "items") }
        let shown = try reader.read { t -> Shown in
            XCTAssertEqual(reader.rowCache.count, 9, "the changed row is forgotten as the read begins")
            return try t.view("v").rows(inGroup: "g", range: 0 ..< 10)
        }
        XCTAssertEqual(shown[3].metadata, [1])
        XCTAssertEqual(reader.rowCache.count, 10)
        // The writer's own cache moves past its own commit the same way.
        _ = try writer.read { try $0.view("v").rows(inGroup: "g", range: 0 ..< 10) }
        try writer.readWrite { try $0.replaceMetadata([2], forKey: "k4", inCollection: "items") }
        XCTAssertEqual(writer.rowCache.count, 9)
        try writer.read { t in
            XCTAssertEqual(try t.view("v").row(at: 4, inGroup: "g")?.metadata, [2])
            XCTAssertEqual(writer.rowCache.count, 10)
        }
        try writer.readWrite { try $0.removeAllObjects(inCollection: "other") }   // no row: no commit
        try writer.readWrite { try $0.setObject([1], forKey: "x", inCollection: "other", metadata: nil) }
        try writer.readWrite { try $0.removeAllObjects(inCollection: "other") }
        try reader.read { _ in XCTAssertEqual(reader.rowCache.count, 0, "an emptied collection empties the cache") }
        // A range longer than the limit bypasses the cache.
        reader.rowCacheLimit = 4
        _ = try reader.read { try $0.view("v").rows(inGroup: "g", range: 0 ..< 10) }
        XCTAssertEqual(reader.rowCache.count, 0)
        _ = try reader.read { try $0.view("v").rows(inGroup: "g", range: 2 ..< 6) }
        XCTAssertEqual(reader.rowCache.count, 4)
        reader.rowCacheLimit = 2
        XCTAssertEqual(reader.rowCache.count, 2, "lowering the limit drops what is over it")
        reader.rowCacheLimit = -5
        XCTAssertEqual(reader.rowCacheLimit, 0)
        XCTAssertEqual(reader.rowCache.count, 0)
        // A large row is read every time rather than kept.
        reader.rowCacheLimit = RowCache.defaultLimit
        let large = [UInt8](repeating: 7, count: RowCache.largestRow)
        try writer.readWrite {
            try $0.setObject(Item.encode(group: "g", rank: 100), forKey: "big", inCollection: "items", metadata: large)
        }
        let shownLarge = try reader.read { try $0.view("v").rows(inGroup: "g", range: 0 ..< 20) }
        XCTAssertEqual(shownLarge.last?.metadata, large)
        XCTAssertEqual(reader.rowCache.count, shownLarge.count - 1)
    }
}
