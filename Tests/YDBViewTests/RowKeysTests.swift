import XCTest
@testable import YDBView

/// `RowKeys` keeps scanned rows in a sorted array and other rows in a
/// dictionary; every sequence of operations must read as one dictionary.
final class RowKeysTests: XCTestCase {
    private static func key(_ rowid: Int64, _ version: Int) -> RowKey {
        RowKey(collection: "c\(version % 3)", key: "k\(rowid)-\(version)")
    }

    /// Random builds of two tables (scanned in order, scanned out of order,
    /// named one at a time, removed), then a merge either way, each checked
    /// against a dictionary model.
    func testRandomOperationsMatchADictionary() {
        var random = SeededGenerator(seed: 11)
        func build(_ version: inout Int) -> (RowKeys, [Int64: RowKey]) {
            var table = RowKeys(), model: [Int64: RowKey] = [:]
            var next: Int64 = Int64.random(in: 0 ..< 5, using: &random)
            for _ in 0 ..< Int.random(in: 0 ..< 60, using: &random) {
                version += 1
                switch Int.random(in: 0 ..< 10, using: &random) {
                case 0 ..< 5:   // a scan's next row, mostly ascending
                    next += Int64.random(in: -2 ... 4, using: &random)
                    table.appendScanned(next, Self.key(next, version))
                    model[next] = Self.key(next, version)
                case 5 ..< 9:
                    let rowid = Int64.random(in: 0 ..< 80, using: &random)
                    table[rowid] = Self.key(rowid, version)
                    model[rowid] = Self.key(rowid, version)
                default:
                    let rowid = Int64.random(in: 0 ..< 80, using: &random)
                    table[rowid] = nil
                    model[rowid] = nil
                }
            }
            return (table, model)
        }
        func check(_ table: RowKeys, _ model: [Int64: RowKey], _ context: String) {
            for rowid in -5 ..< 300 as Range<Int64> {
                XCTAssertEqual(table[rowid], model[rowid], "\(context), rowid \(rowid)")
            }
            XCTAssertEqual(table.rowids.sorted(), model.keys.sorted(), context)
            XCTAssertEqual(table.isEmpty, model.isEmpty, context)
        }
        var version = 0
        for round in 0 ..< 300 {
            let (mine, mineModel) = build(&version)
            let (theirs, theirModel) = build(&version)
            check(mine, mineModel, "round \(round), built")
            for keepingOwn in [true, false] {
                var merged = mine
                merged.merge(theirs, keepingOwn: keepingOwn)
                let model = mineModel.merging(theirModel) { own, their in keepingOwn ? own : their }
                check(merged, model, "round \(round), merged keeping own \(keepingOwn)")
            }
        }
    }
}
