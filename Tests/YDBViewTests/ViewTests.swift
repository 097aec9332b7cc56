import XCTest
@testable import YDBView

/// `@unchecked Sendable`: its observer runs on the committing thread, which
/// in these tests is the test's own.
final class ViewTests: XCTestCase, @unchecked Sendable {
    var database: Database!
    var connection: Connection!

    override func setUpWithError() throws {
        database = try Database(path: nil)
        connection = try database.newConnection()
    }

    override func tearDown() { database.close() }

    func set(_ key: String, _ group: String?, _ rank: Int, collection: String = "items",
             metadata: [UInt8]? = nil) throws {
        try connection.readWrite { try $0.setObject(Item.encode(group: group, rank: rank), forKey: key,
                                                    inCollection: collection, metadata: metadata) }
    }

    func dump(_ name: String = "v") throws -> [String: [String]] {
        try connection.read { try $0.view(name).dump() }
    }

    func lastLog(_ name: String = "v") -> ViewCommitLog? { lastNotification?.viewLog(named: name) }
    var lastNotification: CommitNotification?

    func observe() { database.addCommitObserver { [weak self] in self?.lastNotification = $0 } }

    func testPopulatesOverExistingRowsAndRespectsAllowedCollections() throws {
        try set("a", "g1", 3)
        try set("b", "g1", 1)
        try set("c", "g2", 2)
        try set("x", "g1", 0, collection: "other")
        try set("skip", nil, 5)
        try database.registerView(rankView(collections: ["items"]), name: "v")
        XCTAssertEqual(try dump(), ["g1": ["b", "a"], "g2": ["c"]])
        try connection.read { t in
            let view = try t.view("v")
            XCTAssertEqual(try view.numberOfGroups(), 2)
            XCTAssertEqual(try view.numberOfItemsInAllGroups(), 3)
            XCTAssertEqual(try view.position(forKey: "a", inCollection: "items")?.index, 1)
            XCTAssertNil(try view.position(forKey: "x", inCollection: "other"))
            XCTAssertEqual(try view.firstRowKey(inGroup: "g1")?.key, "b")
            XCTAssertEqual(try view.lastRowKey(inGroup: "g1")?.key, "a")
            XCTAssertNil(try view.rowKey(at: 2, inGroup: "g1"))
            XCTAssertNil(try view.rowKey(at: -1, inGroup: "g1"))
            XCTAssertEqual(try view.object(at: 0, inGroup: "g2"), Item.encode(group: "g2", rank: 2))
        }
    }

    func testEachMutationIsLoggedAndApplied() throws {
        try database.registerView(rankView(), name: "v")
        observe()
        try set("a", "g", 10)
        XCTAssertEqual(lastLog()?.entries, [.groupCreated("g"), .insert(rowid: 1, group: "g", index: 0)])
        try set("b", "g", 20)
        try set("c", "g", 5)
        XCTAssertEqual(try dump(), ["g": ["c", "a", "b"]])
        // Moves within the group: delete + insert.
        try set("c", "g", 30)
        XCTAssertEqual(lastLog()?.entries, [.delete(rowid: 3, group: "g", index: 0), .insert(rowid: 3, group: "g", index: 2)])
        // Stays in place: update with both flags (setObject replaces metadata too).
        try set("c", "g", 31)
        XCTAssertEqual(lastLog()?.entries, [.update(rowid: 3, group: "g", index: 2, changes: [.object, .metadata])])
        // Changes group.
        try set("a", "h", 1)
        XCTAssertEqual(lastLog()?.entries, [.delete(rowid: 1, group: "g", index: 0), .groupCreated("h"),
                                            .insert(rowid: 1, group: "h", index: 0)])
        // Excluded, then back.
        try set("a", nil, 1)
        XCTAssertEqual(lastLog()?.entries, [.delete(rowid: 1, group: "h", index: 0), .groupEmptied("h")])
        try set("a", "g", 25)
        XCTAssertEqual(try dump(), ["g": ["b", "a", "c"]])
        // Touch: update in place, object flag.
        try connection.readWrite { try $0.touchObject(forKey: "b", inCollection: "items") }
        XCTAssertEqual(lastLog()?.entries, [.update(rowid: 2, group: "g", index: 0, changes: .object)])
        // Remove.
        try connection.readWrite { try $0.removeObject(forKey: "b", inCollection: "items") }
        XCTAssertEqual(lastLog()?.entries, [.delete(rowid: 2, group: "g", index: 0)])
        // Remove the collection, then everything.
        try set("z", "h", 1, collection: "more")
        try connection.readWrite { try $0.removeAllObjects(inCollection: "items") }
        XCTAssertEqual(try dump(), ["h": ["z"]])
        try connection.readWrite { try $0.removeAllObjectsInAllCollections() }
        XCTAssertEqual(lastLog()?.entries, [.reset, .groupEmptied("h")])
        XCTAssertEqual(lastLog()?.keys.map(\.key.key), ["z"])
        XCTAssertEqual(try dump(), [:])
    }

    func testGroupEmptiedAndRefilledInOneTransactionLogsNoGroupChange() throws {
        try database.registerView(rankView(), name: "v")
        try set("a", "g", 1)
        observe()
        try connection.readWrite { t in
            try t.removeObject(forKey: "a", inCollection: "items")
            try t.setObject(Item.encode(group: "g", rank: 2), forKey: "b", inCollection: "items", metadata: nil)
        }
        XCTAssertEqual(lastLog()?.entries, [.delete(rowid: 1, group: "g", index: 0), .insert(rowid: 2, group: "g", index: 0)])
    }

    func testMetadataOnlyChangeSkipsObjectCallbacks() throws {
        let counter = CallCounter()
        try database.registerView(rankView(counter: counter), name: "v")
        for rank in 0 ..< 20 { try set("k\(rank)", "g", rank) }
        observe()
        counter.grouping = 0
        counter.sorting = 0
        try connection.readWrite { try $0.replaceMetadata([1, 2, 3], forKey: "k7", inCollection: "items") }
        XCTAssertEqual(counter.grouping, 0)
        XCTAssertEqual(counter.sorting, 0)
        XCTAssertEqual(lastLog()?.entries, [.update(rowid: 8, group: "g", index: 7, changes: .metadata)])
        try connection.readWrite { try $0.touchMetadata(forKey: "k7", inCollection: "items") }
        XCTAssertEqual(counter.sorting, 0)
        // An object change re-runs grouping and checks the neighbours only.
        try connection.readWrite { try $0.replaceObject(Item.encode(group: "g", rank: 7), forKey: "k7", inCollection: "items") }
        XCTAssertEqual(counter.grouping, 1)
        XCTAssertEqual(counter.sorting, 2)
    }

    func testAppendsUseOneComparison() throws {
        let counter = CallCounter()
        try database.registerView(rankView(counter: counter), name: "v")
        for rank in 0 ..< 100 { try set("k\(rank)", "g", rank) }
        counter.sorting = 0
        try set("last", "g", 1000)
        XCTAssertEqual(counter.sorting, 1)
        counter.sorting = 0
        try set("middle", "g", 50)
        XCTAssertLessThanOrEqual(counter.sorting, 1 + 7)  // failed hint + ⌈log2(102)⌉
    }

    func testRestartWithSameTagLoadsWithoutCallbacks() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ydbview-restart-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        var expected: [String: [String]] = [:]
        do {
            let database = try Database(path: path)
            try database.registerView(rankView(), name: "v")
            let connection = try database.newConnection()
            try connection.readWrite { t in
                for index in 0 ..< 300 {
                    try t.setObject(Item.encode(group: "g\(index % 3)", rank: (index * 37) % 101),
                                    forKey: "k\(index)", inCollection: "items", metadata: nil)
                }
            }
            expected = try connection.read { try $0.view("v").dump() }
            database.close()
        }
        let counter = CallCounter()
        let reopened = try Database(path: path)
        defer { reopened.close() }
        try reopened.registerView(rankView(counter: counter), name: "v")
        XCTAssertEqual(counter.grouping + counter.sorting, 0, "same tag must not repopulate")
        let connection = try reopened.newConnection()
        XCTAssertEqual(try connection.read { try $0.view("v").dump() }, expected)
        // The loaded view keeps working.
        try connection.readWrite { try $0.setObject(Item.encode(group: "g0", rank: -1), forKey: "first", inCollection: "items", metadata: nil) }
        XCTAssertEqual(try connection.read { try $0.view("v").rowKey(at: 0, inGroup: "g0")?.key }, "first")
        // A new tag repopulates.
        counter.grouping = 0
        try reopened.registerView(rankView(counter: counter, tag: "2"), name: "v")
        XCTAssertEqual(counter.grouping, 301)
    }

    func testNonPersistentViewsAndTwoViews() throws {
        try set("a", "g", 2)
        try set("b", "g", 1)
        try database.registerView(rankView(persistent: false), name: "memory")
        let reversed = View(grouping: ViewGrouping(flavour: .key) { _ in "all" },
                            sorting: ViewSorting(flavour: .key) { _, a, b in
                                a.key == b.key ? .same : a.key > b.key ? .ascending : .descending })
        try database.registerView(reversed, name: "keysDescending")
        try set("c", "g", 0)
        XCTAssertEqual(try dump("memory"), ["g": ["c", "b", "a"]])
        XCTAssertEqual(try dump("keysDescending"), ["all": ["c", "b", "a"]])
        XCTAssertEqual(database.registeredViewNames, ["keysDescending", "memory"])
        try database.unregisterView(name: "keysDescending")
        XCTAssertFalse(try connection.read { try $0.hasView("keysDescending") })
    }

    func testFindAndEnumerationWithRangesAndReverse() throws {
        try database.registerView(rankView(), name: "v")
        try connection.readWrite { t in
            for rank in 0 ..< 50 {
                try t.setObject(Item.encode(group: "g", rank: rank / 5), forKey: String(format: "k%02d", rank),
                                inCollection: "items", metadata: nil)
            }
        }
        try connection.read { t in
            let view = try t.view("v")
            let find = ViewFind(flavour: .object) { row in
                let rank = Item.rank(row.object)
                return rank < 3 ? .ascending : rank > 4 ? .descending : .same
            }
            XCTAssertEqual(try view.find(inGroup: "g", using: find), 15 ..< 25)
            let none = ViewFind(flavour: .object) { Item.rank($0.object) < 100 ? .ascending : .descending }
            XCTAssertNil(try view.find(inGroup: "g", using: none))
            XCTAssertNil(try view.find(inGroup: "nope", using: find))
            var seen: [Int] = []
            try view.enumerateKeys(inGroup: "g", range: 10 ..< 14, reverse: true) { _, index, _ in seen.append(index) }
            XCTAssertEqual(seen, [13, 12, 11, 10])
            seen = []
            try view.enumerateRows(inGroup: "g", range: 45 ..< 99) { _, _, _, index, stop in
                seen.append(index)
                stop = index == 47
            }
            XCTAssertEqual(seen, [45, 46, 47])
        }
    }

    func testReadersKeepTheirSnapshotOfViews() throws {
        try database.registerView(rankView(), name: "v")
        try set("a", "g", 1)
        let reader = try database.newConnection()
        try reader.beginLongLivedReadTransaction()
        let before = try reader.read { try $0.view("v").dump() }
        for index in 0 ..< 50 { try set("n\(index)", "g", index) }
        try connection.readWrite { try $0.removeObject(forKey: "a", inCollection: "items") }
        XCTAssertEqual(try reader.read { try $0.view("v").dump() }, before)
        let skipped = try reader.beginLongLivedReadTransaction()
        XCTAssertEqual(skipped.count, 51)
        XCTAssertTrue(skipped.hasChanges(forView: "v"))
        XCTAssertTrue(skipped.hasChanges(forGroup: "g", inView: "v"))
        XCTAssertFalse(skipped.hasChanges(forGroup: "other", inView: "v"))
        XCTAssertEqual(try reader.read { try $0.view("v").numberOfItems(inGroup: "g") }, 50)
    }

    func testFailingCallbackRollsBackEverything() throws {
        struct Refused: Error {}
        let failing = View(grouping: ViewGrouping(flavour: .object) { row in
            if Item.rank(row.object) == 13 { throw Refused() }
            return "g"
        }, sorting: rankView().sorting)
        try database.registerView(failing, name: "v")
        try set("ok", "g", 1)
        XCTAssertThrowsError(try connection.readWrite { t in
            try t.setObject(Item.encode(group: "g", rank: 2), forKey: "fine", inCollection: "items", metadata: nil)
            try t.setObject(Item.encode(group: "g", rank: 13), forKey: "bad", inCollection: "items", metadata: nil)
        }) { error in
            XCTAssertEqual((error as? YDBError)?.code, .callbackFailed)
            XCTAssertTrue("\(error)".contains("view 'v'"))
        }
        XCTAssertEqual(try connection.read { try $0.countAll() }, 1)
        XCTAssertEqual(try dump(), ["g": ["ok"]])
        // Registration whose population fails registers nothing.
        try database.unregisterView(name: "v")
        try set("bad", "g", 13, collection: "later")
        XCTAssertThrowsError(try database.registerView(failing, name: "w"))
        XCTAssertFalse(try connection.read { try $0.hasView("w") })
    }

    /// A comparator that throws while an update moves a row poisons the
    /// transaction, which may still be read: the row must read as out of
    /// the view, not as half-placed (its index entry left without a row in
    /// its group), and the rollback restores it.
    func testAComparatorThrowingMidMoveLeavesTheViewReadable() throws {
        struct Refused: Error {}
        // Comparisons allowed before the comparator throws; nil: never.
        let allowed = Locked<Int?>(nil)
        let byRank = rankView().sorting
        let guarded = ViewSorting(flavour: .object) { t, group, a, b in
            var refuse = false
            allowed.mutate { count in
                guard let left = count else { return }
                if left == 0 { refuse = true } else { count = left - 1 }
            }
            if refuse { throw Refused() }
            guard case .comparator(let compare) = byRank.form else { return .same }
            return try compare(t, group, a, b)
        }
        try database.registerView(View(grouping: rankView().grouping, sorting: guarded), name: "v")
        for rank in 0 ..< 40 { try set("k\(rank)", "g", rank) }
        let t = try connection.beginReadWriteTransaction()
        // Two comparisons find that k3 no longer fits between its
        // neighbours; the search for its new place then fails.
        allowed.mutate { $0 = 2 }
        XCTAssertThrowsError(try t.setObject(Item.encode(group: "g", rank: 20), forKey: "k3",
                                             inCollection: "items", metadata: nil))
        allowed.mutate { $0 = nil }
        let view = try t.view("v")
        XCTAssertNil(try view.position(forKey: "k3", inCollection: "items"))
        XCTAssertEqual(try view.numberOfItemsInAllGroups(), 39)
        XCTAssertEqual(try view.numberOfItems(inGroup: "g"), 39)
        t.rollback()
        XCTAssertEqual(try dump(), ["g": (0 ..< 40).map { "k\($0)" }])
    }

    func testChangingSortingInATransaction() throws {
        try database.registerView(rankView(), name: "v")
        for rank in 0 ..< 5 { try set("k\(rank)", "g", rank) }
        observe()
        let byKeyDescending = ViewSorting(flavour: .key) { _, a, b in
            a.key == b.key ? .same : a.key > b.key ? .ascending : .descending }
        try connection.readWrite { t in
            try t.setViewDefinition(name: "v", grouping: rankView().grouping, sorting: byKeyDescending, versionTag: "2")
        }
        XCTAssertEqual(try dump(), ["g": ["k4", "k3", "k2", "k1", "k0"]])
        // Logged as what changed, not as every row removed and inserted again.
        XCTAssertEqual(lastLog()?.entries, [.reordered("g")])
        XCTAssertEqual(try connection.read { try $0.view("v").versionTag }, "2")
    }

    func testInconsistentComparatorNeverCrashes() throws {
        let random = Locked(SeededGenerator(seed: 99))
        let chaos = View(grouping: ViewGrouping(flavour: .key) { _ in "g" },
                         sorting: ViewSorting(flavour: .key) { _, _, _ in
                             var order = ViewOrder.same
                             random.mutate { order = [ViewOrder.ascending, .same, .descending].randomElement(using: &$0)! }
                             return order })
        try database.registerView(chaos, name: "v")
        for index in 0 ..< 300 { try set("k\(index)", "g", index) }
        for index in stride(from: 0, to: 300, by: 3) {
            try connection.readWrite { try $0.touchObject(forKey: "k\(index)", inCollection: "items") }
        }
        XCTAssertEqual(try connection.read { try $0.view("v").numberOfItems(inGroup: "g") }, 300)
    }

    func testRegisterAndUnregisterWhileAReaderHoldsASnapshot() throws {
        try set("a", "g", 1)
        let reader = try database.newConnection()
        try reader.beginLongLivedReadTransaction()
        try database.registerView(rankView(), name: "v")
        XCTAssertFalse(try reader.read { try $0.hasView("v") }, "a frozen reader does not see a later registration")
        let skipped = try reader.beginLongLivedReadTransaction()
        XCTAssertEqual(skipped.last?.viewLog(named: "v")?.entries.last, .insert(rowid: 1, group: "g", index: 0))
        XCTAssertEqual(try reader.read { try $0.view("v").dump() }, ["g": ["a"]])
        try database.unregisterView(name: "v")
        XCTAssertEqual(try reader.read { try $0.view("v").dump() }, ["g": ["a"]], "still there at its snapshot")
        try reader.beginLongLivedReadTransaction()
        XCTAssertFalse(try reader.read { try $0.hasView("v") })
    }
}

extension ViewTests {
    /// A view's rows are read a batch of 64 at a time: ranges across batch
    /// boundaries, both directions, a stop in the middle of a batch, and the
    /// objects each row holds.
    func testRangesAcrossBatchesMatchTheRowsOneByOne() throws {
        try database.registerView(rankView(), name: "v")
        try connection.readWrite { t in
            for index in 0 ..< 150 {
                try t.setObject(Item.encode(group: "g", rank: (index * 37) % 150), forKey: "k\(index)",
                                inCollection: "c", metadata: index % 3 == 0 ? [UInt8(index)] : nil)
            }
        }
        try connection.read { t in
            let view = try XCTUnwrap(t.view("v"))
            let expected = try (0 ..< 150).map { try XCTUnwrap(view.rowKey(at: $0, inGroup: "g")) }
            for (range, reverse) in [(0 ..< 150, false), (0 ..< 150, true), (63 ..< 129, false), (1 ..< 65, true),
                                     (64 ..< 64, false), (140 ..< 400, false)] {
                var seen: [(RowKey, Int)] = []
                try view.enumerateRows(inGroup: "g", range: range, reverse: reverse) { key, object, metadata, index, _ in
                    XCTAssertEqual(object, try t.object(forKey: key.key, inCollection: key.collection))
                    XCTAssertEqual(metadata, try t.metadata(forKey: key.key, inCollection: key.collection))
                    seen.append((key, index))
                }
                let indexes = Array(range.clamped(to: 0 ..< 150))
                let order = reverse ? indexes.reversed() : indexes
                XCTAssertEqual(seen.map(\.1), order, "\(range) reverse: \(reverse)")
                XCTAssertEqual(seen.map(\.0), order.map { expected[$0] }, "\(range) reverse: \(reverse)")
            }
            var visited = 0
            try view.enumerateRows(inGroup: "g") { _, _, _, index, stop in
                visited += 1
                if index == 69 { stop = true }
            }
            XCTAssertEqual(visited, 70, "a stop in the second batch ends the enumeration there")
        }
    }
}
