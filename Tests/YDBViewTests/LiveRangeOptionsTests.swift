import XCTest
@testable import YDBView

/// Range options read back with their current length and offset, copied with a new
/// length or offset, changed (max, min, grow) and set again (part of issue 11).
final class LiveRangeOptionsTests: XCTestCase {
    private func mappings(_ view: FakeView, groups: [String], ranges: [String: RangeOptions]) -> Mappings {
        let mappings = Mappings(groups: groups, view: "view")
        for (group, options) in ranges { mappings.setRangeOptions(options, forGroup: group) }
        mappings.update(with: view.contents, snapshot: view.snapshot)
        return mappings
    }

    // MARK: Current length and offset

    func testFlexibleRangeGrownByInsertsReportsItsCurrentLength() throws {
        let view = FakeView.committed(["g": 1...10])
        let mappings = Mappings(groups: ["g"], view: "view")
        mappings.setRangeOptions(try .flexible(length: 3, offset: 0, from: .end), forGroup: "g")
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g")?.length, 3)      // before the first update: as set
        mappings.update(with: view.contents, snapshot: view.snapshot)
        for rowid in Int64(11)...14 { view.set(rowid, group: "g", value: Int(rowid) * 10) }   // four at the pinned end
        _ = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 7, offsetFromEnd: 0, length: 7))
        let options = try XCTUnwrap(mappings.rangeOptions(forGroup: "g"))
        XCTAssertEqual(options.length, 7)
        XCTAssertEqual(options.offset, 0)
        XCTAssertEqual(options.pin, .end)
        XCTAssertTrue(options.isFlexible)
        XCTAssertEqual(options.maxLength, .max)
    }

    func testFlexibleRangeShiftedByRowsBeforeItReportsItsCurrentOffset() throws {
        let view = FakeView.committed(["g": 1...10])
        let mappings = mappings(view, groups: ["g"], ranges: ["g": try .flexible(length: 3, offset: 4, from: .beginning)])
        view.set(101, group: "g", value: 5)          // index 0
        view.set(102, group: "g", value: 15)         // index 2: both before the window
        _ = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g")?.offset, 6)
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g")?.length, 3)
        view.remove(1)                               // before the window again
        _ = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g")?.offset, 5)
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 5, offsetFromEnd: 3, length: 3))
    }

    func testPinnedToTheEndTheOffsetCountsFromTheEndAndAFixedOffsetNeverChanges() throws {
        let view = FakeView.committed(["g": 1...10, "f": 21...30])
        let mappings = mappings(view, groups: ["g", "f"], ranges: [
            "g": try .flexible(length: 3, offset: 2, from: .end),
            "f": try .fixed(length: 3, offset: 2, from: .end),
        ])
        view.set(101, group: "g", value: 95)         // between the window and the end
        view.set(102, group: "g", value: 1000)
        view.set(103, group: "f", value: 295)
        view.set(104, group: "f", value: 1000)
        _ = try mappings.changes(for: [view.commit()])
        let flexible = try XCTUnwrap(mappings.rangeOptions(forGroup: "g"))
        XCTAssertEqual([flexible.offset, flexible.length], [4, 3])
        XCTAssertEqual(flexible.pin, .end)
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 5, offsetFromEnd: 4, length: 3))
        let fixed = try XCTUnwrap(mappings.rangeOptions(forGroup: "f"))
        XCTAssertEqual([fixed.offset, fixed.length, fixed.maxLength], [2, 3, 3])
        XCTAssertEqual(mappings.rangePosition(forGroup: "f"), RangePosition(offsetFromBeginning: 7, offsetFromEnd: 2, length: 3))
    }

    func testReversedGroupReportsThePinAndOffsetInDisplayOrder() throws {
        let view = FakeView.committed(["g": 1...10])
        let mappings = Mappings(groups: ["g"], view: "view")
        mappings.setIsReversed(true, forGroup: "g")
        // Display order: the top of the table is the view's end.
        mappings.setRangeOptions(try .flexible(length: 3, offset: 1, from: .beginning), forGroup: "g")
        mappings.update(with: view.contents, snapshot: view.snapshot)
        XCTAssertEqual(mappings.index(forRow: 0, inSection: 0), 8)
        view.set(101, group: "g", value: 105)        // view index 10: above the window on screen, not at its edge
        _ = try mappings.changes(for: [view.commit()])
        let options = try XCTUnwrap(mappings.rangeOptions(forGroup: "g"))
        XCTAssertEqual(options.pin, .beginning)
        XCTAssertEqual([options.offset, options.length], [2, 3])
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 2, offsetFromEnd: 6, length: 3))
        mappings.setIsReversed(false, forGroup: "g")  // the same window, read in view order
        let unreversed = try XCTUnwrap(mappings.rangeOptions(forGroup: "g"))
        XCTAssertEqual(unreversed.pin, .end)
        XCTAssertEqual([unreversed.offset, unreversed.length], [2, 3])
    }

    func testRangeShrunkByDeletesReportsItsCurrentLengthAndOffset() throws {
        let view = FakeView.committed(["g": 1...10])
        let mappings = mappings(view, groups: ["g"], ranges: ["g": try .flexible(length: 5, offset: 2, from: .beginning)])
        view.remove(4)                               // inside
        view.remove(5)                               // inside
        view.remove(1)                               // before
        _ = try mappings.changes(for: [view.commit()])
        let options = try XCTUnwrap(mappings.rangeOptions(forGroup: "g"))
        XCTAssertEqual([options.offset, options.length], [1, 3])
        XCTAssertEqual(mappings.numberOfItems(inGroup: "g"), 3)
    }

    func testFixedRangeReadsBackItsClippedLengthAndKeepsItsLengthAsSet() throws {
        let view = FakeView.committed(["g": 1...4])
        let mappings = mappings(view, groups: ["g"], ranges: ["g": try .fixed(length: 10, offset: 0, from: .beginning)])
        let options = try XCTUnwrap(mappings.rangeOptions(forGroup: "g"))
        XCTAssertEqual([options.length, options.maxLength, options.offset], [4, 10, 0])
        mappings.setRangeOptions(options, forGroup: "g")      // set back: still a range of 10
        for rowid in Int64(5)...12 { view.set(rowid, group: "g", value: Int(rowid) * 10) }
        _ = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(mappings.numberOfItems(inGroup: "g"), 10)
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g")?.length, 10)
        mappings.setRangeOptions(try options.copy(withNewLength: 6), forGroup: "g")
        XCTAssertEqual(mappings.numberOfItems(inGroup: "g"), 6)
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g")?.maxLength, 6)
    }

    func testBeforeTheFirstUpdateTheOptionsAreAsSet() throws {
        let mappings = Mappings(groups: ["g"], view: "view")
        let options = try RangeOptions.flexible(length: 20, offset: 3, from: .beginning, maxLength: 30, minLength: 2,
                                                grow: .bothSides)
        mappings.setRangeOptions(options, forGroup: "g")
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g"), options)
        mappings.update(with: FakeView.committed(["g": 1...10]).contents, snapshot: 1)
        // The length wanted, clipped to the rows there are; the settings as set.
        let placed = try XCTUnwrap(mappings.rangeOptions(forGroup: "g"))
        XCTAssertEqual([placed.offset, placed.length, placed.maxLength, placed.minLength], [3, 7, 30, 2])
        XCTAssertEqual(placed.growOptions, .bothSides)
        XCTAssertEqual(placed, try options.copy(withNewLength: 7))
    }

    // MARK: Copies and changed settings, set again

    func testCopiesWithANewLengthOrOffsetAreSetFromWhereTheRangeStands() throws {
        let view = FakeView.committed(["g": 1...20])
        let mappings = mappings(view, groups: ["g"], ranges: ["g": try .flexible(length: 3, offset: 0, from: .end)])
        for rowid in Int64(21)...22 { view.set(rowid, group: "g", value: Int(rowid) * 10) }
        _ = try mappings.changes(for: [view.commit()])
        var options = try XCTUnwrap(mappings.rangeOptions(forGroup: "g"))
        mappings.setRangeOptions(options, forGroup: "g")       // unchanged: the window stays where it is
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 17, offsetFromEnd: 0, length: 5))

        options = try options.copy(withNewLength: 8)
        mappings.setRangeOptions(options, forGroup: "g")
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 14, offsetFromEnd: 0, length: 8))
        options = try options.copy(withNewOffset: 4)
        mappings.setRangeOptions(options, forGroup: "g")
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 10, offsetFromEnd: 4, length: 8))
        mappings.setRangeOptions(try options.copy(withNewLength: 2, newOffset: 1), forGroup: "g")
        XCTAssertEqual(mappings.rangePosition(forGroup: "g"), RangePosition(offsetFromBeginning: 19, offsetFromEnd: 1, length: 2))

        view.set(23, group: "g", value: 230)                    // after the window: the offset from the end grows
        _ = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g")?.offset, 2)
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g")?.length, 2)
    }

    func testAMaxLengthLoweredAfterCreationTrimsTheNextChangeset() throws {
        let view = FakeView.committed(["g": 1...10])
        let mappings = mappings(view, groups: ["g"], ranges: ["g": try .flexible(length: 3, offset: 0, from: .end)])
        var options = try XCTUnwrap(mappings.rangeOptions(forGroup: "g"))
        options.maxLength = 4
        mappings.setRangeOptions(options, forGroup: "g")
        for rowid in Int64(11)...13 { view.set(rowid, group: "g", value: Int(rowid) * 10) }
        let changeset = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g")?.length, 4)
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g")?.maxLength, 4)
        XCTAssertEqual(Table(mappings: mappings, contents: view.contents).sections, [[10, 11, 12, 13]])
        XCTAssertEqual(changeset.rowChanges.filter { $0.type == .delete }.count, 2)   // 8 and 9 fall off
    }

    func testGrowOptionsChangedAfterCreationLetTheNonPinEdgeGrow() throws {
        let view = FakeView.committed(["g": 1...10])
        let mappings = mappings(view, groups: ["g"], ranges: ["g": try .flexible(length: 3, offset: 2, from: .beginning)])
        view.set(101, group: "g", value: 55)                    // exactly at the far edge: pin side only, so no
        _ = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g")?.length, 3)
        var options = try XCTUnwrap(mappings.rangeOptions(forGroup: "g"))
        options.growOptions = .nonPinSide
        mappings.setRangeOptions(options, forGroup: "g")
        view.set(102, group: "g", value: 51)                    // at the far edge again: now it joins
        _ = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g")?.length, 4)
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g")?.growOptions, .nonPinSide)
        XCTAssertEqual(Table(mappings: mappings, contents: view.contents).sections, [[3, 4, 5, 102]])
    }

    func testAMinLengthRaisedAfterCreationPullsRowsBackInTheNextChangeset() throws {
        let view = FakeView.committed(["g": 1...10])
        let mappings = mappings(view, groups: ["g"], ranges: ["g": try .flexible(length: 4, offset: 0, from: .beginning)])
        var options = try XCTUnwrap(mappings.rangeOptions(forGroup: "g"))
        options.minLength = 3
        mappings.setRangeOptions(options, forGroup: "g")
        view.remove(1)
        view.remove(2)
        _ = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(mappings.rangeOptions(forGroup: "g")?.length, 3)
        XCTAssertEqual(Table(mappings: mappings, contents: view.contents).sections, [[3, 4, 5]])
    }

    func testSettersClampLikeYapDatabaseAndCopiesAreValidated() throws {
        var flexible = try RangeOptions.flexible(length: 3, from: .beginning, maxLength: 10, minLength: 2)
        flexible.maxLength = 1
        XCTAssertEqual(flexible.maxLength, 2)                   // not below the minimum
        flexible.minLength = 50
        XCTAssertEqual(flexible.minLength, 2)                   // not above the maximum
        flexible.minLength = -3
        XCTAssertEqual(flexible.minLength, 0)
        flexible.maxLength = 0
        XCTAssertEqual(flexible.maxLength, 1)
        XCTAssertEqual(flexible.length, 3)

        var fixed = try RangeOptions.fixed(length: 5, offset: 1, from: .end)
        fixed.minLength = 3
        fixed.growOptions = .bothSides
        XCTAssertEqual(fixed.minLength, 0)                      // read-only for a fixed range
        XCTAssertEqual(fixed.growOptions, .pinSide)
        fixed.maxLength = 8                                     // a fixed range's length as set
        XCTAssertEqual([fixed.length, fixed.maxLength, fixed.offset], [8, 8, 1])
        XCTAssertEqual(try fixed.copy(withNewLength: 2).maxLength, 2)

        XCTAssertThrowsError(try fixed.copy(withNewLength: 0)) {
            XCTAssertEqual(($0 as? YDBError)?.reason, .lengthNotPositive(0))
        }
        XCTAssertEqual(try flexible.copy(withNewLength: 0).length, 0)   // what an empty window reads back as
        XCTAssertThrowsError(try flexible.copy(withNewLength: -1)) {
            XCTAssertEqual(($0 as? YDBError)?.reason, .negativeLength(-1))
        }
        XCTAssertThrowsError(try flexible.copy(withNewOffset: -1)) {
            XCTAssertEqual(($0 as? YDBError)?.reason, .negativeOffset(-1))
        }
        XCTAssertThrowsError(try fixed.copy(withNewLength: 3, newOffset: -2))
    }
}
