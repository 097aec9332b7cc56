import XCTest
import YDBView

/// The batch-update checker itself: it applies what a valid changeset says,
/// and names the change at fault in an invalid one (the other tests only
/// ever feed it valid changesets).
final class BatchUpdateTests: XCTestCase {
    typealias Update = BatchUpdate<Int64>

    private func change(_ type: RowChange.Kind, _ from: [Int]?, _ to: [Int]?, _ row: Int64?) -> Update.Change {
        Update.Change(type: type, indexPath: from.map { TableIndexPath(section: $0[0], row: $0[1]) },
                      newIndexPath: to.map { TableIndexPath(section: $0[0], row: $0[1]) },
                      originalRow: row, finalRow: row)
    }

    private let old = Update.Table(groups: ["a", "b"], sections: [[1, 2, 3], [4]])

    func testRemovesAtOriginalPathsThenInsertsAtFinalPaths() throws {
        let update = Update(sectionChanges: [], rowChanges: [
            change(.delete, [0, 0], nil, 1),
            change(.move, [0, 2], [1, 0], 3),
            change(.insert, nil, [0, 0], 5),
            change(.update, [0, 1], nil, 2),
        ])
        XCTAssertEqual(try update.apply(to: old), Update.Table(groups: ["a", "b"], sections: [[5, 2], [3, 4]]))
    }

    func testSectionsAreDeletedThenInserted() throws {
        let update = Update(sectionChanges: [SectionChange(type: .delete, index: 0, group: "a"),
                                             SectionChange(type: .insert, index: 1, group: "c")],
                            rowChanges: [change(.delete, [0, 0], nil, 1), change(.delete, [0, 1], nil, 2),
                                         change(.move, [0, 2], [1, 0], 3), change(.insert, nil, [1, 1], 7)])
        XCTAssertEqual(try update.apply(to: old), Update.Table(groups: ["b", "c"], sections: [[4], [3, 7]]))
    }

    func testARowTheChangeDoesNotNameIsReadFromTheNewTable() throws {
        let update = Update(sectionChanges: [], rowChanges: [change(.insert, nil, [1, 1], nil)])
        let new = Update.Table(groups: ["a", "b"], sections: [[1, 2, 3], [4, 9]])
        XCTAssertNoThrow(try update.check(from: old, to: new))
        XCTAssertThrowsError(try update.apply(to: old)) {
            XCTAssertEqual("\($0)", "row change 0 (insert [1, 1]): names no row, and no new table was given to read it from")
        }
    }

    func testAnInvalidChangeIsNamedWithWhatIsWrong() {
        let deleteA = SectionChange(type: .delete, index: 0, group: "a")
        let cases: [(sections: [SectionChange], rows: [Update.Change], error: String)] = [
            ([], [change(.delete, [0, 5], nil, 1)],
             "row change 0 (delete [0, 5] 1): original path [0, 5] is not in the old table (section 0 has 3 rows)"),
            ([], [change(.delete, [0, 0], nil, 2)],
             "row change 0 (delete [0, 0] 2): original path [0, 0] holds 1, not the row the change names"),
            ([], [change(.move, [0, 0], nil, 1)], "row change 0 (move [0, 0] -> nil 1): has no final path"),
            ([], [change(.update, [0, 0], [0, 0], 1)], "row change 0 (update [0, 0] 1): has a final path"),
            ([], [change(.delete, [0, 0], nil, 1), change(.insert, nil, [0, 0], 1)],
             "row change 1 (insert [0, 0] 1): row 1 is also changed by row change 0 (delete [0, 0] 1)"),
            ([], [change(.insert, nil, [0, 0], 8), change(.insert, nil, [0, 0], 9)],
             "row change 1 (insert [0, 0] 9): row change 0 (insert [0, 0] 8) arrives at the same final path"),
            ([], [change(.insert, nil, [0, 4], 8)],
             "row change 0 (insert [0, 4] 8): final path is beyond the end of section 0, which then has 3 rows"),
            ([], [change(.insert, nil, [2, 0], 8)],
             "row change 0 (insert [2, 0] 8): final section 2 does not exist: the table then has 2 sections"),
            ([deleteA], [change(.delete, [0, 0], nil, 1), change(.delete, [0, 1], nil, 2), change(.update, [0, 2], nil, 3)],
             "row change 2 (update [0, 2] 3): reloads a row of deleted section 0"),
            ([deleteA], [change(.delete, [0, 0], nil, 1), change(.delete, [0, 1], nil, 2)],
             "delete section 0 (a): its row 3 at [0, 2] is neither deleted nor moved"),
            ([SectionChange(type: .delete, index: 1, group: "a")], [change(.delete, [1, 0], nil, 4)],
             "delete section 1 (a): the section showed b"),
            ([SectionChange(type: .insert, index: 3, group: "c")], [],
             "insert section 3 (c): beyond the end of the table, which then has 2 sections"),
        ]
        for (sections, rows, error) in cases {
            XCTAssertThrowsError(try Update(sectionChanges: sections, rowChanges: rows).apply(to: old)) {
                XCTAssertEqual("\($0)", error)
            }
        }
    }

    func testCheckNamesTheFirstRowThatDiffers() {
        let update = Update(sectionChanges: [], rowChanges: [change(.move, [0, 0], [0, 1], 1)])
        let new = Update.Table(groups: ["a", "b"], sections: [[2, 3, 1], [4]])
        XCTAssertThrowsError(try update.check(from: old, to: new)) {
            XCTAssertEqual("\($0)", "the changes give 1 at [0, 1] of a, the new table has 3 (3 rows against 3)")
        }
    }
}
