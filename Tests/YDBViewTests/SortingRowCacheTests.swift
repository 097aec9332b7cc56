import XCTest
@testable import YDBView

/// The rows a comparator view keeps from one commit to the next
/// (`SortingRowCache`) are bounded by their bytes, whatever their size.
final class SortingRowCacheTests: XCTestCase {
    static func row(_ key: String, objectBytes: Int) -> ViewRow {
        ViewRow(collection: "c", key: key, object: [UInt8](repeating: 7, count: objectBytes), metadata: nil)
    }

    func testKeepsRowsWithinItsBudget() {
        let cache = SortingRowCache()
        let size = SortingRowCache.budget / 10
        for index in 0..<25 {
            let row = Self.row("k\(index)", objectBytes: size)
            XCTAssertNil(cache.entry(Int64(index)))
            XCTAssertEqual(cache.store(row, for: Int64(index)).row.key, row.key)
            XCTAssertLessThanOrEqual(cache.bytes, SortingRowCache.budget)
            XCTAssertNotNil(cache.entry(Int64(index)), "the row just stored is kept")
        }
        XCTAssertLessThan(cache.count, 10)
        // Forgetting a row gives its bytes back.
        let before = cache.bytes
        cache.forget(24)
        XCTAssertEqual(cache.bytes, before - SortingRowCache.cost(of: Self.row("k24", objectBytes: size)))
        // A row larger than the budget is handed back, not kept.
        let huge = Self.row("huge", objectBytes: SortingRowCache.budget)
        XCTAssertEqual(cache.store(huge, for: 100).row.object?.count, SortingRowCache.budget)
        XCTAssertNil(cache.entry(100))
        cache.removeAll()
        XCTAssertEqual(cache.bytes, 0)
        XCTAssertEqual(cache.count, 0)
    }

    /// Commits into a comparator view of 120 KB objects (more than the
    /// budget in all) read rows back to
    /// compare with; the view keeps at most its budget of them.
    func testAViewOfLargeObjectsKeepsItsBudget() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let connection = try database.newConnection()
        let padding = String(repeating: "x", count: 120_000)
        for index in 0..<40 {
            try connection.readWrite { t in
                try t.setObject(Array("a|\(padding)|\((index * 7919) % 40)".utf8), forKey: "k\(index)",
                                inCollection: "c", metadata: nil)
            }
        }
        let (bytes, count) = try connection.read { t in
            let cache = t.viewInstance(named: "v")!.rowCache
            return (cache.bytes, cache.count)
        }
        XCTAssertGreaterThan(count, 0, "comparisons read rows back")
        XCTAssertLessThanOrEqual(bytes, SortingRowCache.budget)
        XCTAssertLessThanOrEqual(count, SortingRowCache.budget / 120_000)
        try connection.read { t in
            let keys = try t.view("v").dump()["a"]!
            XCTAssertEqual(keys.count, 40)
        }
    }
}
