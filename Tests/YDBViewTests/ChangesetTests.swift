import XCTest
@testable import YDBView

/// Hand-written changeset tests: the reference's worked examples and the
/// per-row merging rules, as "given this setup and these writes, this comes out".
final class ChangesetTests: XCTestCase {
    private func summary(_ changeset: Changeset) -> [String] {
        changeset.sectionChanges.map { "\($0.type) section \($0.index) \($0.group)" }
            + changeset.rowChanges.map {
                "\($0.type) \($0.rowid) \($0.indexPath.map { "\($0)" } ?? "-")->\($0.newIndexPath.map { "\($0)" } ?? "-") \($0.changes.rawValue) \($0.rowKey == nil ? "nokey" : "key")"
            }
    }

    func testTop20FixedRangeInsertAt5() throws {
        let view = FakeView.committed(["books": 1...30])
        let mappings = Mappings(groups: ["books"], view: "view")
        mappings.setRangeOptions(try .fixed(length: 20, offset: 0, from: .beginning), forGroup: "books")
        mappings.update(with: view.contents, snapshot: view.snapshot)
        view.set(100, group: "books", value: 55)             // a new best seller at #5 (index 5)
        let changeset = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(summary(changeset), [
            "delete 20 [0, 19]->- 3 nokey",                   // pushed out of the top 20
            "insert 100 -->[0, 5] 3 key",
        ])
        XCTAssertEqual(mappings.numberOfItems(inSection: 0), 20)
    }

    func testMessagesFlexibleRangePinnedToEndWithMaxAndMin() throws {
        let view = FakeView.committed(["chat": 1...30])
        let mappings = Mappings(groups: ["chat"], view: "view")
        mappings.setRangeOptions(try .flexible(length: 5, offset: 0, from: .end, maxLength: 8, minLength: 3),
                                 forGroup: "chat")
        mappings.update(with: view.contents, snapshot: view.snapshot)
        XCTAssertEqual(Table(mappings: mappings, contents: view.contents).sections, [[26, 27, 28, 29, 30]])

        for rowid in Int64(31)...33 { view.set(rowid, group: "chat", value: Int(rowid) * 10) }   // new messages
        var changeset = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(summary(changeset), ["insert 31 -->[0, 5] 3 key", "insert 32 -->[0, 6] 3 key",
                                            "insert 33 -->[0, 7] 3 key"])

        view.set(34, group: "chat", value: 340)            // one more: above max, oldest falls off
        changeset = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(summary(changeset), ["delete 26 [0, 0]->- 3 nokey", "insert 34 -->[0, 7] 3 key"])
        XCTAssertEqual(mappings.rangePosition(forGroup: "chat"),
                       RangePosition(offsetFromBeginning: 26, offsetFromEnd: 0, length: 8))

        for rowid in Int64(27)...32 { view.remove(rowid) }   // user deletes most: below min, 26 (trimmed earlier) comes back
        changeset = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(Table(mappings: mappings, contents: view.contents).sections, [[26, 33, 34]])
        XCTAssertEqual(changeset.rowChanges.filter { $0.type == .delete }.count, 6)
        XCTAssertEqual(changeset.rowChanges.filter { $0.type == .insert }.map(\.rowid), [26])
        XCTAssertEqual(changeset.rowChanges.first { $0.rowid == 26 }?.newIndexPath, TableIndexPath(section: 0, row: 0))
        XCTAssertNil(changeset.rowChanges.first { $0.rowid == 26 }?.rowKey)
    }

    func testMessagesDependencyDeleteHiReloadsTheRowBelow() throws {
        let view = FakeView.committed(["m": 1...3])                  // "You there?", "Hi", "You done coding yet??"
        let mappings = Mappings(groups: ["m"], view: "view")
        mappings.setCellDrawingDependency(offset: -1, forGroup: "m")
        mappings.update(with: view.contents, snapshot: view.snapshot)
        view.remove(2)
        let changeset = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(summary(changeset), ["delete 2 [0, 1]->- 3 key", "update 3 [0, 2]->- 4 nokey"])
        XCTAssertEqual(changeset.rowChanges[1].changes, .dependency)
    }

    func testReverseWithRangeEquivalentConfigurationsGiveIdenticalChangesets() throws {
        var rng = SeededGenerator(seed: 42)
        let view = FakeView.committed(["books": 1...40])
        let first = Mappings(groups: ["books"], view: "view")
        first.setRangeOptions(try .fixed(length: 20, offset: 0, from: .end), forGroup: "books")
        first.setCellDrawingDependency(offset: 1, forGroup: "books")
        first.setIsReversed(true, forGroup: "books")
        let second = Mappings(groups: ["books"], view: "view")
        second.setIsReversed(true, forGroup: "books")
        second.setRangeOptions(try .fixed(length: 20, offset: 0, from: .beginning), forGroup: "books")
        second.setCellDrawingDependency(offset: -1, forGroup: "books")
        first.update(with: view.contents, snapshot: view.snapshot)
        second.update(with: view.contents, snapshot: view.snapshot)
        var next = Int64(100)
        for _ in 0..<30 {
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: view.set(next, group: "books", value: Int.random(in: 0...500, using: &rng)); next += 1
            case 1: view.remove(view.allRowids.randomElement(using: &rng)!)
            default: view.touch(view.allRowids.randomElement(using: &rng)!, .object)
            }
            let log = view.commit()
            XCTAssertEqual(try first.changes(for: [log]), try second.changes(for: [log]))
            XCTAssertEqual(Table(mappings: first, contents: view.contents), Table(mappings: second, contents: view.contents))
        }
    }

    func testConsolidationSwitchingReportsEveryRow() throws {
        let view = FakeView.committed(["a": 1...1, "b": 2...2])
        let mappings = Mappings(groups: ["a", "b"], view: "view")
        mappings.setAutoConsolidateGroups(threshold: 4, name: "all")
        mappings.update(with: view.contents, snapshot: view.snapshot)
        XCTAssertEqual(mappings.visibleGroups, ["all"])
        for rowid in Int64(3)...5 { view.set(rowid, group: "b", value: Int(rowid) * 10) }
        var changeset = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(summary(changeset), [
            "delete section 0 all", "insert section 0 a", "insert section 1 b",
            "insert 3 -->[1, 1] 3 key", "insert 4 -->[1, 2] 3 key", "insert 5 -->[1, 3] 3 key",
            "move 1 [0, 0]->[0, 0] 0 nokey", "move 2 [0, 1]->[1, 0] 0 nokey",
        ])
        view.remove(5)                                         // 4 rows: not below the threshold
        changeset = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(summary(changeset), ["delete 5 [1, 3]->- 3 key"])
        view.remove(4)                                         // 3 rows: consolidated again
        changeset = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(summary(changeset), [
            "delete section 0 a", "delete section 1 b", "insert section 0 all",
            "delete 4 [1, 2]->- 3 key",
            "move 1 [0, 0]->[0, 0] 0 nokey", "move 2 [1, 0]->[0, 1] 0 nokey", "move 3 [1, 1]->[0, 2] 0 nokey",
        ])
    }

    /// Dynamic groups consolidated into one section, in an order read from a
    /// row, which a commit flips: the rows of the group that changed its
    /// place move, though no log names them (before, none moved, and the
    /// batch left the section in the old group order).
    func testConsolidatedGroupsWhoseOrderChangesMoveTheirRows() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerView(rankView(collections: ["c"]), name: "view")
        let writer = try database.newConnection(), reader = try database.newConnection()
        try writer.readWrite { t in
            try t.setObject([0], forKey: "descending", inCollection: "settings", metadata: nil)
            for (key, group) in [("x", "a"), ("y", "a"), ("z", "b")] {
                try t.setObject(Item.encode(group: group, rank: 1), forKey: key, inCollection: "c", metadata: nil)
            }
        }
        let mappings = Mappings(filter: { _, _ in true }, sortedBy: { t, a, b in
            try t.object(forKey: "descending", inCollection: "settings") == [1] ? a > b : a < b
        }, view: "view")
        mappings.setAutoConsolidateGroups(threshold: 10, name: "all")
        try reader.beginLongLivedReadTransaction()
        try reader.read { try mappings.update(with: $0) }
        let old = try reader.read { Table(mappings: mappings, contents: try $0.viewContents(named: "view")) }
        try writer.readWrite { t in
            try t.setObject([1], forKey: "descending", inCollection: "settings", metadata: nil)
            try t.setObject(Item.encode(group: "b", rank: 2), forKey: "w", inCollection: "c", metadata: nil)
        }
        let notifications = try reader.beginLongLivedReadTransaction()
        let (changeset, new) = try reader.read { t in
            (try mappings.changes(for: notifications, in: t), Table(mappings: mappings, contents: try t.viewContents(named: "view")))
        }
        XCTAssertEqual(old.sections.map(\.count), [3])
        XCTAssertEqual(new.sections[0].suffix(2), old.sections[0].prefix(2))   // group a now last
        XCTAssertNoThrow(try BatchUpdate(changeset).check(from: old, to: new))
        XCTAssertEqual(try BatchUpdate(changeset).apply(to: old), new)
    }

    func testSeveralCommitsMergePerRow() throws {
        let view = FakeView.committed(["g": 1...5])
        let mappings = Mappings(groups: ["g"], view: "view")
        mappings.update(with: view.contents, snapshot: view.snapshot)
        view.set(10, group: "g", value: 25)      // insert…
        let c1 = view.commit()
        view.remove(10)                          // …delete: nothing
        view.touch(1, .metadata)                 // update…
        let c2 = view.commit()
        view.set(1, group: "g", value: 45)       // …moved: move
        view.touch(3, .object)                   // updates only: update
        view.remove(4)
        view.set(4, group: "g", value: 40)       // delete…insert at the same place: move
        let c3 = view.commit()
        let changeset = try mappings.changes(for: [c1, c2, c3])
        XCTAssertEqual(summary(changeset), [
            "move 1 [0, 0]->[0, 3] 3 key", "move 4 [0, 3]->[0, 2] 3 key", "update 3 [0, 2]->- 1 key",
        ])
        XCTAssertEqual(mappings.snapshotOfLastUpdate, view.snapshot)
    }

    func testDynamicSectionAppearsAndVanishes() throws {
        let view = FakeView.committed(["a": 1...2])
        let mappings = Mappings(groups: ["a", "b"], view: "view")
        mappings.setIsDynamicSection(true, forGroup: "b")
        mappings.update(with: view.contents, snapshot: view.snapshot)
        view.set(3, group: "b", value: 0)
        var changeset = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(summary(changeset), ["insert section 1 b", "insert 3 -->[1, 0] 3 key"])
        view.set(3, group: "a", value: 0)        // moves to the other group: b vanishes
        changeset = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(summary(changeset), ["delete section 1 b", "move 3 [1, 0]->[0, 0] 3 key"])
        view.remove(3)                           // vanish and come back inside one changeset
        view.set(4, group: "b", value: 0)
        let c1 = view.commit()
        view.remove(4)
        view.set(5, group: "b", value: 0)
        changeset = try mappings.changes(for: [c1, view.commit()])
        XCTAssertEqual(summary(changeset), ["insert section 1 b", "delete 3 [0, 0]->- 3 key", "insert 5 -->[1, 0] 3 key"])
    }

    func testResetDeletesEveryRowAndReinsertedRowsMove() throws {
        let view = FakeView.committed(["a": 1...3])
        let mappings = Mappings(groups: ["a"], view: "view")
        mappings.update(with: view.contents, snapshot: view.snapshot)
        view.reset()
        view.set(2, group: "a", value: 20)
        let changeset = try mappings.changes(for: [view.commit()])
        XCTAssertEqual(summary(changeset), ["delete 1 [0, 0]->- 3 key", "delete 3 [0, 2]->- 3 key",
                                            "move 2 [0, 1]->[0, 0] 3 key"])
    }

    func testChangesOutsideTheMappingsGroupsAreDropped() throws {
        let view = FakeView.committed(["a": 1...2, "other": 3...4])
        let mappings = Mappings(groups: ["a"], view: "view")
        mappings.update(with: view.contents, snapshot: view.snapshot)
        view.touch(3, .object)
        view.set(9, group: "other", value: 0)
        let log = view.commit()
        XCTAssertFalse(mappings.hasChanges(for: [log]))
        XCTAssertTrue(try mappings.changes(for: [log]).isEmpty)
        view.set(1, group: "other", value: 0)    // leaves the mappings' groups: a delete
        XCTAssertEqual(summary(try mappings.changes(for: [view.commit()])), ["delete 1 [0, 0]->- 3 key"])
    }

    /// One row inserted into a million-row group with a fixed and a flexible range,
    /// reverse and dependencies: a handful of lookups, not a walk of the group.
    func testOneRowChangeInAMillionRowGroupCostsFewLookups() throws {
        let counter = LookupCounter()
        let n = 1_000_000
        let before = ArithmeticContents(group: "big", evenRows: n, inserted: nil, counter: counter)
        let after = ArithmeticContents(group: "big", evenRows: n, inserted: (rowid: 777, index: 389), counter: counter)
        let log = ViewCommitLog(viewName: "view", snapshotBefore: 1, snapshot: 2, before: before, after: after,
                                entries: [.insert(rowid: 777, group: "big", index: 389)],
                                keys: [777: RowKey(collection: "c", key: "new")])
        let configurations: [(Mappings) throws -> Void] = [
            { _ in },
            { $0.setRangeOptions(try .fixed(length: 50, offset: 350, from: .beginning), forGroup: "big") },
            { $0.setRangeOptions(try .flexible(length: 50, offset: 360, from: .beginning), forGroup: "big") },
            { $0.setIsReversed(true, forGroup: "big"); $0.setCellDrawingDependencyOffsets([-1, 1], forGroup: "big") },
        ]
        for configure in configurations {
            let mappings = Mappings(groups: ["big"], view: "view")
            try configure(mappings)
            mappings.update(with: before, snapshot: 1)
            counter.lookups = 0
            let changeset = try mappings.changes(for: [log])
            XCTAssertLessThan(counter.lookups, 40)
            XCTAssertTrue(changeset.rowChanges.contains { $0.rowid == 777 && $0.type == .insert })
        }
    }
}

extension ChangesetTests {
    /// A row change describes itself in table terms, never by database id.
    func testRowChangeDescriptionShowsIndexPathsAndKey() {
        let move = RowChange(type: .move, rowid: 987, rowKey: RowKey(collection: "books", key: "b1"),
                             changes: [.object], original: TableIndexPath(section: 0, row: 3), originalGroup: "g",
                             final: TableIndexPath(section: 1, row: 0), finalGroup: "h")
        XCTAssertEqual(move.description, "move [0, 3] -> [1, 0] books/b1 (object)")
        XCTAssertFalse(move.description.contains("987"))
    }
}
