import XCTest
@testable import YDBView

/// The engine's one re-entrancy rule (`ReentryRule`), as Swift sees it; the
/// C test `test_reentry.c` and Python's `test_reentry.py` check the same cases.
/// The `.misuse` message `body` throws, nil when it succeeds.
private func misuse(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch let error as YDBError where error.code == .misuse {
        return error.message
    } catch {
        return "unexpected \(error)"
    }
}

final class ReentryTests: XCTestCase {

    func testObserverMayWriteOnTheCommittingConnection() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let connection = try database.newConnection()
        let seen = Locked<[UInt64]>([])
        database.addCommitObserver { notification in
            seen.mutate { $0.append(notification.snapshot) }
            guard !notification.hasChange(forKey: "echo", inCollection: "c") else { return }
            try? connection.readWrite { try $0.setObject(Array("from observer".utf8), forKey: "echo", inCollection: "c", metadata: nil) }
        }
        try connection.readWrite { try $0.setObject([1], forKey: "k", inCollection: "c", metadata: nil) }
        XCTAssertEqual(seen.value, [1, 2], "its own commit is delivered after, in order")
        XCTAssertEqual(try connection.read { try $0.object(forKey: "echo", inCollection: "c") }, Array("from observer".utf8))
    }

    func testEnumerationMayReadAndWriteButEndingWaitsForIt() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let connection = try database.newConnection()
        try connection.readWrite { t in
            for key in ["a", "b"] { try t.setObject([1], forKey: key, inCollection: "c", metadata: nil) }
        }
        let transaction = try connection.beginReadWriteTransaction()
        var refusals: [String?] = []
        try transaction.enumerateKeys(inCollection: "c") { key, _ in
            XCTAssertNotNil(try transaction.object(forKey: key, inCollection: "c"))   // reading: fine
            try transaction.setObject([2], forKey: key, inCollection: "d", metadata: nil)   // writing: fine
            refusals.append(misuse { try transaction.endRefusingCallbacks() })
            refusals.append(misuse { try transaction.commit() })
        }
        XCTAssertEqual(refusals.count, 4)
        XCTAssertTrue(refusals.allSatisfy { $0?.contains("own callbacks") == true }, "\(refusals)")
        XCTAssertFalse(transaction.hasEnded)
        // Swift's non-throwing rollback() asked for inside waits for the enumeration.
        try transaction.enumerateKeys(inCollection: "c") { _, stop in
            transaction.rollback()
            XCTAssertFalse(transaction.hasEnded)
            stop = true
        }
        XCTAssertTrue(transaction.hasEnded)
        XCTAssertNil(try connection.read { try $0.object(forKey: "a", inCollection: "d") })
    }

    func testViewCallbackReadsRowsButNotViewsAndNeverWrites() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let connection = try database.newConnection(), other = try database.newConnection()
        try other.readWrite { try $0.setObject([7], forKey: "seen", inCollection: "c", metadata: nil) }
        let writing = Locked<ReadWriteTransaction?>(nil)
        let outcomes = Locked<[String: String]>([:])
        let grouping = ViewGrouping(flavour: .key) { _ in
            if let transaction = writing.value, outcomes.value.isEmpty {
                var found: [String: String] = [:]
                found["same transaction"] = misuse { _ = try transaction.object(forKey: "seen", inCollection: "c") } ?? "ok"
                found["same transaction's view"] = misuse { _ = try transaction.view("v").numberOfItemsInAllGroups() } ?? "ok"
                found["same transaction write"] = misuse { try transaction.touchObject(forKey: "seen", inCollection: "c") } ?? "ok"
                found["same connection"] = misuse { _ = try connection.read { _ in } } ?? "ok"
                found["write elsewhere"] = misuse { _ = try other.beginReadWriteTransaction() } ?? "ok"
                found["read elsewhere"] = (try? other.read { try $0.object(forKey: "seen", inCollection: "c") }) == [7] ? "ok" : "failed"
                outcomes.mutate { $0 = found }
            }
            return "all"
        }
        let sorting = ViewSorting(flavour: .key) { _, a, b in a.key < b.key ? .ascending : a.key == b.key ? .same : .descending }
        try database.registerView(View(grouping: grouping, sorting: sorting), name: "v")
        let transaction = try connection.beginReadWriteTransaction()
        writing.mutate { $0 = transaction }
        try transaction.setObject([1], forKey: "new", inCollection: "c", metadata: nil)
        try transaction.commit()
        let found = outcomes.value
        XCTAssertEqual(found["same transaction"], "ok", "rows may be read")
        XCTAssertTrue(found["same transaction's view"]?.contains("half-updated") == true, "\(found)")
        XCTAssertTrue(found["same transaction write"]?.contains("read-only") == true, "\(found)")
        XCTAssertNotEqual(found["same connection"], "ok")
        XCTAssertTrue(found["write elsewhere"]?.contains("wait for itself") == true, "\(found)")
        XCTAssertEqual(found["read elsewhere"], "ok")
    }

    func testRegisteringWhileThisThreadWritesIsRefused() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let connection = try database.newConnection()
        let transaction = try connection.beginReadWriteTransaction()
        defer { transaction.rollback() }
        XCTAssertNotNil(misuse { try database.registerView(rankView(), name: "v") })
    }

    /// A view definition's release hook runs once, when it stops being used:
    /// replaced by a commit, not installed by a rollback, or at close.
    func testDefinitionsAreReleasedWhenTheyStopBeingUsed() throws {
        let database = try Database(path: nil)
        let connection = try database.newConnection()
        let released = Locked<[String]>([])
        func view(_ tag: String) -> View {
            var view = rankView(tag: tag)
            view.releaseHook = ReleaseHook { released.mutate { $0.append(tag) } }
            return view
        }
        try database.registerView(view("1"), name: "v")
        let v2 = view("2")
        try connection.readWrite { try $0.setViewDefinition(name: "v", grouping: v2.grouping, sorting: v2.sorting,
                                                               versionTag: "2", releaseHook: v2.releaseHook) }
        XCTAssertEqual(released.value, ["1"], "replaced by a commit")
        let v3 = view("3")
        let transaction = try connection.beginReadWriteTransaction()
        try transaction.setViewDefinition(name: "v", grouping: v3.grouping, sorting: v3.sorting,
                                          versionTag: "3", releaseHook: v3.releaseHook)
        XCTAssertEqual(released.value, ["1"])
        transaction.rollback()
        XCTAssertEqual(released.value, ["1", "3"], "not installed")
        XCTAssertThrowsError(try database.registerView(view("bad"), name: "nul\u{0}inside"))
        XCTAssertEqual(released.value, ["1", "3", "bad"], "refused registration")
        database.close()
        XCTAssertEqual(released.value, ["1", "3", "bad", "2"], "the live one goes at close")
    }
}
