import XCTest
@testable import YDBView

/// `Changeset.steps()` on hand-made batches whose order traps a naive
/// script (an insert placed while a moved row still sits in front of it,
/// moves across inserted and deleted sections), and the step checker
/// refusing bad scripts. The random histories of ChangesetPropertyTests,
/// EngineRandomTests and SizeSweepTests check every changeset's steps too.
final class EditScriptTests: XCTestCase {
    private func path(_ section: Int, _ row: Int) -> TableIndexPath { TableIndexPath(section: section, row: row) }

    private func change(_ type: RowChange.Kind, _ rowid: Int64, from: TableIndexPath? = nil,
                        to: TableIndexPath? = nil, changes: RowChangeFlags = []) -> RowChange {
        RowChange(type: type, rowid: rowid, rowKey: RowKey(collection: "c", key: "k\(rowid)"), changes: changes,
                  original: from, originalGroup: from.map { "g\($0.section)" },
                  final: to, finalGroup: to.map { "g\($0.section)" })
    }

    /// Checks the batch itself and its steps against the same tables; returns the steps.
    @discardableResult
    private func checkSteps(_ changeset: Changeset, _ old: Table, _ new: Table,
                            file: StaticString = #filePath, line: UInt = #line) -> [EditStep] {
        XCTAssertNoThrow(try BatchUpdate(changeset).check(from: old, to: new), "the batch itself", file: file, line: line)
        let steps = changeset.steps()
        XCTAssertNoThrow(try BatchUpdate<Int64>.check(steps: steps, from: old, to: new, naming: BatchUpdate<Int64>.rowid),
                         "steps \(steps)", file: file, line: line)
        return steps
    }

    func testAnInsertLandsAfterItsPredecessorWhileAMovedRowStillWaits() {
        // [1, 2, 3] -> [1, 3, 9, 2]: 2 moves to the end, 9 is inserted at final
        // index 2 — but while 2 still sits at index 1, index 2 would put 9 before 3.
        let old = Table(groups: ["g0"], sections: [[1, 2, 3]])
        let new = Table(groups: ["g0"], sections: [[1, 3, 9, 2]])
        let changeset = Changeset(rowChanges: [change(.insert, 9, to: path(0, 2)),
                                               change(.move, 2, from: path(0, 1), to: path(0, 3))])
        let steps = checkSteps(changeset, old, new)
        XCTAssertEqual(steps.map(\.description), ["insert row [0, 3] c/k9", "move row [0, 1] -> [0, 3] c/k2"])
    }

    func testMovesStayMovesAndUpdatesReloadWhereTheRowEnds() {
        // Reverse [1, 2, 3, 4]; 2 also changed.
        let old = Table(groups: ["g0"], sections: [[1, 2, 3, 4]])
        let new = Table(groups: ["g0"], sections: [[4, 3, 2, 1]])
        let changeset = Changeset(rowChanges: [
            change(.move, 1, from: path(0, 0), to: path(0, 3)),
            change(.move, 2, from: path(0, 1), to: path(0, 2), changes: .object),
            change(.move, 3, from: path(0, 2), to: path(0, 1)),
        ])
        let steps = checkSteps(changeset, old, new)
        XCTAssertFalse(steps.contains { $0.kind == .insertRow || $0.kind == .removeRow }, "\(steps)")
        XCTAssertEqual(steps.last?.description, "reload row [0, 2] c/k2")
    }

    func testRowsCrossIntoAnInsertedSectionBeforeTheirSectionIsRemoved() {
        // Sections g0 [1, 2] and g1 [3] become g1 [3, 1] and g5 [2]: g0 is
        // deleted, g5 inserted; both rows of g0 move out before it goes.
        let old = Table(groups: ["g0", "g1"], sections: [[1, 2], [3]])
        let new = Table(groups: ["g1", "g5"], sections: [[3, 1], [2]])
        let changeset = Changeset(
            sectionChanges: [SectionChange(type: .delete, index: 0, group: "g0"),
                             SectionChange(type: .insert, index: 1, group: "g5")],
            rowChanges: [change(.move, 1, from: path(0, 0), to: path(0, 1)),
                         change(.move, 2, from: path(0, 1), to: path(1, 0))])
        let steps = checkSteps(changeset, old, new)
        XCTAssertEqual(steps.first?.kind, .insertSection)
        XCTAssertEqual(steps.last?.kind, .removeSection)
        XCTAssertEqual(steps.filter { $0.kind == .moveRow }.count, 2)
    }

    func testRemovalsGoBottomUpAndSectionsAreEmptyWhenRemoved() {
        let old = Table(groups: ["a", "b"], sections: [[1, 2, 3], [4, 5]])
        let new = Table(groups: ["a"], sections: [[2]])
        let changeset = Changeset(
            sectionChanges: [SectionChange(type: .delete, index: 1, group: "b")],
            rowChanges: [change(.delete, 1, from: path(0, 0)), change(.delete, 3, from: path(0, 2)),
                         change(.delete, 4, from: path(1, 0)), change(.delete, 5, from: path(1, 1))])
        let steps = checkSteps(changeset, old, new)
        XCTAssertEqual(steps.map(\.description), [
            "remove row [1, 1] c/k5", "remove row [1, 0] c/k4", "remove row [0, 2] c/k3",
            "remove row [0, 0] c/k1", "remove section 1 (b)",
        ])
    }

    func testTheCheckerRefusesABadScript() {
        let old = Table(groups: ["g0"], sections: [[1, 2]])
        let new = Table(groups: ["g0"], sections: [[2]])
        let remove = change(.delete, 1, from: path(0, 0))
        let wrongRow = EditStep.row(.removeRow, at: path(0, 1), remove)
        XCTAssertThrowsError(try BatchUpdate<Int64>.check(steps: [wrongRow], from: old, to: new,
                                                           naming: BatchUpdate<Int64>.rowid)) {
            XCTAssertTrue("\($0)".contains("holds 2, not the row the step names"), "\($0)")
        }
        let nonEmpty = EditStep.section(.removeSection, 0, "g0")
        XCTAssertThrowsError(try BatchUpdate<Int64>.check(steps: [nonEmpty], from: old, to: new,
                                                           naming: BatchUpdate<Int64>.rowid)) {
            XCTAssertTrue("\($0)".contains("still has 2 rows"), "\($0)")
        }
        XCTAssertThrowsError(try BatchUpdate<Int64>.check(steps: [], from: old, to: new,
                                                           naming: BatchUpdate<Int64>.rowid))
    }
}
