import XCTest
@testable import YDBView

/// Hand-written getter tests: the reference's examples and the edge cases.
final class MappingsTests: XCTestCase {
    private func contents(_ groups: [String: ClosedRange<Int64>]) -> FakeContents {
        FakeContents(groups: groups.mapValues { Array($0) })
    }

    func testBeforeFirstUpdateEverythingIsEmptyOrNil() {
        let mappings = Mappings(groups: ["a"], view: "v")
        XCTAssertNil(mappings.snapshotOfLastUpdate)
        XCTAssertEqual(mappings.numberOfSections, 0)
        XCTAssertTrue(mappings.isEmpty)
        XCTAssertNil(mappings.numberOfItems(inSection: 0))
        XCTAssertNil(mappings.numberOfItems(inGroup: "a"))
        XCTAssertNil(mappings.group(forSection: 0))
        XCTAssertNil(mappings.section(forGroup: "a"))
        XCTAssertNil(mappings.groupAndIndex(forRow: 0, inSection: 0))
        XCTAssertNil(mappings.rowAndSection(forIndex: 0, inGroup: "a"))
        XCTAssertNil(mappings.rangePosition(forGroup: "a"))
        XCTAssertNil(mappings.nearestIndexPath(forRow: 0, inGroup: "a"))
        XCTAssertEqual(mappings.visibleGroups, [])
        XCTAssertEqual(mappings.numberOfItemsInAllGroups, 0)
    }

    func testStaticGroupsKeepTheirOrderAndEmptyStaticSections() {
        let mappings = Mappings(groups: ["wine", "liquor", "beer"], view: "order")
        mappings.update(with: contents(["beer": 1...2, "wine": 3...5]), snapshot: 7)
        XCTAssertEqual(mappings.snapshotOfLastUpdate, 7)
        XCTAssertEqual(mappings.visibleGroups, ["wine", "liquor", "beer"])
        XCTAssertEqual(mappings.numberOfItems(inSection: 1), 0)
        XCTAssertEqual(mappings.section(forGroup: "beer"), 2)
        XCTAssertNil(mappings.section(forGroup: "cider"))
        XCTAssertEqual(mappings.groupAndIndex(forRow: 1, inSection: 2)?.group, "beer")
        XCTAssertEqual(mappings.numberOfItemsInAllGroups, 5)
    }

    func testDynamicSectionsAllGroupsClearsPerGroupAndLaterPerGroupOverrides() {
        let mappings = Mappings(groups: ["available", "away", "offline"], view: "roster")
        mappings.setIsDynamicSection(true, forGroup: "away")
        mappings.setIsDynamicSectionForAllGroups(true)
        mappings.setIsDynamicSection(false, forGroup: "offline")
        XCTAssertTrue(mappings.isDynamicSection(forGroup: "away"))
        XCTAssertFalse(mappings.isDynamicSection(forGroup: "offline"))
        XCTAssertTrue(mappings.isDynamicSectionForAllGroups)
        mappings.update(with: contents(["away": 1...1]), snapshot: 1)
        XCTAssertEqual(mappings.visibleGroups, ["away", "offline"])
        mappings.setIsDynamicSectionForAllGroups(false)   // forgets offline's override too
        XCTAssertEqual(mappings.visibleGroups, ["available", "away", "offline"])
    }

    func testDynamicGroupsAreFilteredAndSortedAtEveryUpdate() {
        let mappings = Mappings(filter: { $0 != "hidden" }, sortedBy: >, view: "v")
        mappings.update(with: contents(["a": 1...1, "b": 2...3, "hidden": 4...4]), snapshot: 1)
        XCTAssertEqual(mappings.allGroups, ["b", "a"])
        mappings.update(with: contents(["c": 5...5, "a": 1...1]), snapshot: 2)
        XCTAssertEqual(mappings.visibleGroups, ["c", "a"])
    }

    func testRangePositionExampleFromTheReference() throws {
        let mappings = Mappings(groups: ["sales"], view: "v")
        mappings.setRangeOptions(try .fixed(length: 20, offset: 0, from: .beginning), forGroup: "sales")
        mappings.update(with: contents(["sales": 1...100]), snapshot: 1)
        XCTAssertEqual(mappings.rangePosition(forGroup: "sales"),
                       RangePosition(offsetFromBeginning: 0, offsetFromEnd: 80, length: 20))
    }

    func testEldersFixedRangeFromEndMapsRowZeroToIndex80() throws {
        let mappings = Mappings(groups: ["elders"], view: "v")
        mappings.setRangeOptions(try .fixed(length: 20, offset: 0, from: .end), forGroup: "elders")
        mappings.update(with: contents(["elders": 1...100]), snapshot: 1)
        XCTAssertEqual(mappings.index(forRow: 0, inSection: 0), 80)
        XCTAssertEqual(mappings.row(forIndex: 99, inGroup: "elders"), 19)
        XCTAssertNil(mappings.row(forIndex: 79, inGroup: "elders"))
        XCTAssertEqual(mappings.rowAndSection(forIndex: 85, inGroup: "elders"), TableIndexPath(section: 0, row: 5))
    }

    func testFixedRangeWithOffsetsWindowsLargerThanTheGroupAndShrinkingGroups() throws {
        let mappings = Mappings(groups: ["g"], view: "v")
        mappings.setIsDynamicSection(true, forGroup: "g")
        mappings.setRangeOptions(try .fixed(length: 10, offset: 3, from: .end), forGroup: "g")
        mappings.update(with: contents(["g": 1...8]), snapshot: 1)
        // Rows [8-3-10, 8-3) clipped: indexes 0..<5.
        XCTAssertEqual(mappings.numberOfItems(inGroup: "g"), 5)
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 0, offsetFromEnd: 3, length: 5))
        mappings.update(with: contents(["g": 1...3]), snapshot: 2)       // group below the offset
        XCTAssertEqual(mappings.numberOfItems(inGroup: "g"), 0)
        XCTAssertEqual(mappings.numberOfSections, 0)                    // dynamic: hidden
        mappings.update(with: contents(["g": 1...40]), snapshot: 3)      // grows back to its length
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 27, offsetFromEnd: 3, length: 10))
    }

    func testReverseThenRangeEqualsRangeThenReverse() throws {
        let first = Mappings(groups: ["books"], view: "v")
        first.setRangeOptions(try .fixed(length: 20, offset: 0, from: .end), forGroup: "books")
        first.setIsReversed(true, forGroup: "books")
        let second = Mappings(groups: ["books"], view: "v")
        second.setIsReversed(true, forGroup: "books")
        second.setRangeOptions(try .fixed(length: 20, offset: 0, from: .beginning), forGroup: "books")
        let books = contents(["books": 1...50])
        first.update(with: books, snapshot: 1)
        second.update(with: books, snapshot: 1)
        XCTAssertEqual(Table(mappings: first, contents: books), Table(mappings: second, contents: books))
        XCTAssertEqual(first.index(forRow: 0, inSection: 0), 49)       // worst seller on top
        XCTAssertEqual(first.rangeOptions(forGroup: "books")?.pin, .beginning)   // read in display order
        XCTAssertEqual(second.rangeOptions(forGroup: "books")?.pin, .beginning)  // as set
        XCTAssertEqual(first.rangePosition(forGroup: "books"), RangePosition(offsetFromBeginning: 0, offsetFromEnd: 30, length: 20))
    }

    func testDependencyOffsetsFollowTheReversal() {
        let first = Mappings(groups: ["books"], view: "v")
        first.setCellDrawingDependency(offset: 1, forGroup: "books")
        first.setIsReversed(true, forGroup: "books")
        let second = Mappings(groups: ["books"], view: "v")
        second.setIsReversed(true, forGroup: "books")
        second.setCellDrawingDependency(offset: -1, forGroup: "books")
        XCTAssertEqual(first.dependencyOffsets, second.dependencyOffsets)
        XCTAssertEqual(first.cellDrawingDependencyOffsets(forGroup: "books"), [-1])
        second.setCellDrawingDependencyOffsets([0, 2], forGroup: "books")
        XCTAssertEqual(second.cellDrawingDependencyOffsets(forGroup: "books"), [2])
    }

    func testConsolidationBelowAtAndAboveThreshold() {
        let mappings = Mappings(groups: ["A", "B", "R"], view: "contacts")
        mappings.setAutoConsolidateGroups(threshold: 5, name: "all")
        mappings.update(with: contents(["A": 1...1, "B": 2...3, "R": 4...4]), snapshot: 1)   // 4 < 5
        XCTAssertTrue(mappings.isUsingConsolidatedGroup)
        XCTAssertEqual(mappings.visibleGroups, ["all"])
        XCTAssertEqual(mappings.numberOfItems(inSection: 0), 4)
        XCTAssertEqual(mappings.group(forSection: 0), "all")
        XCTAssertEqual(mappings.section(forGroup: "B"), 0)
        XCTAssertEqual(mappings.groupAndIndex(forRow: 2, inSection: 0)?.group, "B")
        XCTAssertEqual(mappings.groupAndIndex(forRow: 2, inSection: 0)?.index, 1)
        XCTAssertEqual(mappings.rowAndSection(forIndex: 0, inGroup: "R"), TableIndexPath(section: 0, row: 3))
        XCTAssertEqual(mappings.index(forRow: 3, inGroup: "all"), 0)
        mappings.update(with: contents(["A": 1...1, "B": 2...3, "R": 4...5]), snapshot: 2)   // 5 == threshold
        XCTAssertFalse(mappings.isUsingConsolidatedGroup)
        XCTAssertEqual(mappings.numberOfSections, 3)
        mappings.setAutoConsolidateGroups(threshold: 0, name: "all")
        XCTAssertEqual(mappings.autoConsolidateGroupsThreshold, 0)
        let colliding = Mappings(groups: ["all", "B"], view: "contacts")
        colliding.setAutoConsolidateGroups(threshold: 100, name: "all")
        colliding.update(with: contents(["B": 1...2]), snapshot: 1)
        XCTAssertFalse(colliding.isUsingConsolidatedGroup)
    }

    func testRowForIndexIsTheTableRowAlsoWhenConsolidated() throws {
        let mappings = Mappings(groups: ["a", "b"], view: "view")
        mappings.setRangeOptions(try .fixed(length: 2, offset: 1, from: .beginning), forGroup: "b")
        mappings.setAutoConsolidateGroups(threshold: 10, name: "all")
        mappings.update(with: contents(["a": 1...2, "b": 3...6]), snapshot: 1)
        XCTAssertTrue(mappings.isUsingConsolidatedGroup)
        // b shows its indexes 1 and 2, after a's two rows.
        XCTAssertEqual(mappings.row(forIndex: 2, inGroup: "b"), 3)
        XCTAssertEqual(mappings.row(forIndex: 2, inGroup: "b"), mappings.rowAndSection(forIndex: 2, inGroup: "b")?.row)
        XCTAssertEqual(mappings.windowRow(forIndex: 2, inGroup: "b"), 1)
        XCTAssertEqual(mappings.index(forRow: 1, inGroup: "b"), 2)
        XCTAssertEqual(mappings.row(forIndex: 1, inGroup: "a"), 1)
        XCTAssertNil(mappings.row(forIndex: 0, inGroup: "b"))  // outside the range
        XCTAssertNil(mappings.row(forIndex: 0, inGroup: "all"))

        mappings.setAutoConsolidateGroups(threshold: 0, name: "all")
        XCTAssertFalse(mappings.isUsingConsolidatedGroup)
        XCTAssertEqual(mappings.row(forIndex: 2, inGroup: "b"), 1)
        XCTAssertEqual(mappings.windowRow(forIndex: 2, inGroup: "b"), 1)
        XCTAssertEqual(mappings.rowAndSection(forIndex: 2, inGroup: "b"), TableIndexPath(section: 1, row: 1))
    }

    func testNearestIndexPath() {
        let mappings = Mappings(groups: ["a", "b", "c"], view: "v")
        mappings.setIsDynamicSectionForAllGroups(true)
        mappings.update(with: contents(["a": 1...3, "c": 4...5]), snapshot: 1)
        XCTAssertEqual(mappings.nearestIndexPath(forRow: 10, inGroup: "a"), TableIndexPath(section: 0, row: 2))
        XCTAssertEqual(mappings.nearestIndexPath(forRow: 0, inGroup: "b"), TableIndexPath(section: 0, row: 2))
        mappings.update(with: contents(["c": 4...5]), snapshot: 2)
        XCTAssertEqual(mappings.nearestIndexPath(forRow: 1, inGroup: "a"), TableIndexPath(section: 0, row: 0))
        XCTAssertNil(mappings.nearestIndexPath(forRow: 0, inGroup: "zzz"))
    }

    func testFlexibleRangeOnPlainUpdateKeepsOffsetAndLengthClipped() throws {
        let mappings = Mappings(groups: ["g"], view: "v")
        mappings.setRangeOptions(try .flexible(length: 5, offset: 2, from: .beginning, minLength: 3), forGroup: "g")
        mappings.update(with: contents(["g": 1...20]), snapshot: 1)
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 2, offsetFromEnd: 13, length: 5))
        mappings.update(with: contents(["g": 1...5]), snapshot: 2)      // clipped to 3 rows
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 2, offsetFromEnd: 0, length: 3))
        mappings.update(with: contents(["g": 1...20]), snapshot: 3)     // a flexible window does not grow back
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 2, offsetFromEnd: 15, length: 3))
        mappings.update(with: contents(["g": 1...2]), snapshot: 4)      // no rows from the offset on; min length waits
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 2, offsetFromEnd: 0, length: 0))
        mappings.update(with: contents(["g": 1...1]), snapshot: 5)      // the offset now lies past the end
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 2, offsetFromEnd: 0, length: 0))
    }

    func testRangeOptionsValidation() {
        XCTAssertThrowsError(try RangeOptions.fixed(length: 0, offset: 0, from: .beginning)) {
            XCTAssertEqual(($0 as? YDBError)?.reason, .lengthNotPositive(0))
        }
        XCTAssertThrowsError(try RangeOptions.fixed(length: 1, offset: -1, from: .end))
        XCTAssertThrowsError(try RangeOptions.flexible(length: 3, from: .end, maxLength: 2, minLength: 3)) {
            XCTAssertEqual(($0 as? YDBError)?.reason, .minLengthAboveMaxLength(min: 3, max: 2))
        }
        XCTAssertThrowsError(try RangeOptions.flexible(length: 3, from: .end, maxLength: 0))
        XCTAssertThrowsError(try RangeOptions.flexible(length: 3, from: .end, minLength: -1))
        let fixed = try? RangeOptions.fixed(length: 4, offset: 1, from: .end)
        XCTAssertEqual(fixed?.maxLength, 4)
        XCTAssertEqual(fixed?.minLength, 0)
    }

    func testRemovingARangeShowsTheWholeGroup() throws {
        let mappings = Mappings(groups: ["g"], view: "v")
        mappings.setRangeOptions(try .fixed(length: 2, from: .beginning), forGroup: "g")
        mappings.update(with: contents(["g": 1...5]), snapshot: 1)
        XCTAssertEqual(mappings.numberOfItems(inGroup: "g"), 2)
        mappings.setRangeOptions(nil, forGroup: "g")
        XCTAssertEqual(mappings.numberOfItems(inGroup: "g"), 5)
        XCTAssertNil(mappings.rangeOptions(forGroup: "g"))
    }
}
