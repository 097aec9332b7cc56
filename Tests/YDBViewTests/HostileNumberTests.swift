import XCTest
@testable import YDBView

/// Numbers at the edges of their types: accepted and saturating where a
/// value means "no limit", refused with a clear error where it cannot mean
/// anything, never an overflow trap at a later commit or changeset
/// (bindings/c/tests/fuzz_numbers.c gives every C argument such values).
final class HostileNumberTests: XCTestCase {
    func testMaxCommitsBehindOfUInt64MaxMeansNeverAndCommitsGoOn() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let writer = try database.newConnection(), reader = try database.newConnection()
        for limit: UInt64 in [.max, .max - 1, 1 << 63, 0] {
            database.maxCommitsBehind = limit
            XCTAssertEqual(database.maxCommitsBehind, max(limit, 1))
            try reader.beginLongLivedReadTransaction()
            // The commit whose bookkeeping computed `seen + limit` and trapped.
            try writer.readWrite { try $0.setObject([1], forKey: "k", inCollection: "c", metadata: nil) }
            try writer.readWrite { try $0.setObject([2], forKey: "k", inCollection: "c", metadata: nil) }
            let skipped = try? reader.beginLongLivedReadTransaction()
            XCTAssertEqual(skipped?.count, limit == 0 ? nil : 2)   // a limit of 1: too far behind
        }
    }

    func testOffsetsPastTwoToTheFiftyThirdAreRefusedWithTheirReason() {
        for offset in [RangeOptions.maximumOffset + 1, Int.max - 1, Int.max] {
            XCTAssertThrowsError(try RangeOptions.fixed(length: 1, offset: offset, from: .beginning)) {
                XCTAssertEqual(($0 as? YDBError)?.reason, .offsetTooLarge(offset))
                XCTAssertEqual(($0 as? YDBError)?.code, .invalidArgument)
            }
            XCTAssertThrowsError(try RangeOptions.flexible(length: .max, offset: offset, from: .end))
            XCTAssertThrowsError(try RangeOptions.flexible(length: 1, offset: 0, from: .end).copy(withNewOffset: offset))
        }
    }

    /// The largest offset there is, the largest lengths, and inserts before,
    /// inside and after the window, over many commits: every changeset is
    /// computed without an overflow.
    func testTheLargestRangesFollowInsertsWithoutOverflowing() throws {
        let view = FakeView.committed(["g": 1...10])
        let huge = RangeOptions.maximumOffset
        let cases: [RangeOptions] = [
            try .flexible(length: .max, offset: huge, from: .beginning, maxLength: .max, minLength: .max, grow: .bothSides),
            try .flexible(length: .max, offset: huge, from: .end, maxLength: .max, grow: .bothSides),
            try .flexible(length: .max, offset: 0, from: .beginning, maxLength: .max, minLength: .max - 1),
            try .fixed(length: .max, offset: huge, from: .beginning),
            try .fixed(length: .max, offset: huge, from: .end),
            try .flexible(length: 1, offset: huge, from: .beginning),
        ]
        var all: [Mappings] = []
        for options in cases {
            let mappings = Mappings(groups: ["g"], view: "view")
            mappings.setRangeOptions(options, forGroup: "g")
            mappings.setCellDrawingDependencyOffsets([Int(Int32.min), Int(Int32.max)], forGroup: "g")
            mappings.update(with: view.contents, snapshot: view.snapshot)
            all.append(mappings)
        }
        var next: Int64 = 100
        for round in 0..<20 {
            for value in [0, 5 + round, 1000] {   // before, inside and after the rows there are
                view.set(next, group: "g", value: value)
                next += 1
            }
            let commit = view.commit()
            for mappings in all { _ = try mappings.changes(for: [commit]) }
        }
        // Every row went in before the window far past the group's end: it moved along.
        XCTAssertEqual(all.last?.rangeOptions(forGroup: "g")?.offset, huge + 60)
    }
}
