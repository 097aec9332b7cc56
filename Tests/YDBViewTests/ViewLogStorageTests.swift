import XCTest
@testable import YDBView

/// A view log's compact storage must read as the plain collections it
/// replaces: `RowKeys` (scanned rows packed in rowid order, others in a
/// dictionary) as one dictionary, `ViewLogEntries` (populations as runs of
/// rowids) as one array of entries.
final class ViewLogStorageTests: XCTestCase {
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

    /// Random logs of single entries, runs of inserts and appended logs,
    /// each read back (iterated, subscripted, compared) against an array.
    func testLogEntriesWithRunsReadAsAnArray() {
        var random = SeededGenerator(seed: 12)
        func build(depth: Int) -> (ViewLogEntries, [ViewLogEntry]) {
            var log = ViewLogEntries(), model: [ViewLogEntry] = []
            for _ in 0 ..< Int.random(in: 0 ..< 12, using: &random) {
                let group = "g\(Int.random(in: 0 ..< 3, using: &random))"
                switch Int.random(in: 0 ..< 6, using: &random) {
                case 0 ..< 3:
                    let entry: ViewLogEntry = Bool.random(using: &random)
                        ? .delete(rowid: Int64.random(in: 0 ..< 50, using: &random), group: group, index: 1)
                        : .groupCreated(group)
                    log.append(entry)
                    model.append(entry)
                case 3, 4:
                    let rowids = (0 ..< Int.random(in: 0 ..< 6, using: &random)).map { _ in
                        Int64.random(in: 0 ..< 50, using: &random)
                    }
                    log.appendInserts(into: group, rowids: rowids)
                    model += rowids.enumerated().map { .insert(rowid: $0.element, group: group, index: $0.offset) }
                default:
                    guard depth < 2 else { continue }
                    let (other, otherModel) = build(depth: depth + 1)
                    log.append(contentsOf: other)
                    model += otherModel
                }
            }
            return (log, model)
        }
        for round in 0 ..< 300 {
            let (log, model) = build(depth: 0)
            XCTAssertEqual(Array(log), model, "round \(round)")
            XCTAssertEqual(log.count, model.count, "round \(round)")
            for (position, entry) in model.enumerated() { XCTAssertEqual(log[position], entry, "round \(round)") }
            XCTAssertEqual(log, ViewLogEntries(model), "round \(round)")
            XCTAssertEqual(log.isEmpty, model.isEmpty, "round \(round)")
        }
    }
}
