import XCTest
@testable import YDBView

/// Callbacks that read other rows through the transaction they receive:
/// books grouped, sorted and found by their author's row, dynamic groups
/// shown by a row of their own. The C test `test_txn_callbacks.c` and
/// Python's `test_txn_callbacks.py` check the same cases.
///
/// Rows: authors/A holds "COUNTRY|RANK" (`Item`), books/B holds the author's
/// key, countries/C holds a rank (the group C shows while the row exists).
final class TransactionCallbackTests: XCTestCase {

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// "ok", or the message of what `body` threw.
    private static func outcome(_ body: () throws -> Void) -> String {
        do { try body(); return "ok" } catch { return (error as? YDBError)?.message ?? "\(error)" }
    }

    /// The author row of book `row` (object flavour), read through `transaction`.
    private static func author(_ transaction: ReadTransaction, of row: ViewRow) throws -> [UInt8]? {
        guard let object = row.object, let key = String(bytes: object, encoding: .utf8) else { return nil }
        return try transaction.object(forKey: key, inCollection: "authors")
    }

    /// Books grouped by their author's country, sorted by the author's rank
    /// then the book's key (comparator or sort key).
    private static func byAuthor(keyed: Bool = false, grouping: ViewGrouping? = nil) -> View {
        let grouping = grouping ?? ViewGrouping(flavour: .object) { transaction, row in
            guard row.collection == "books" else { return nil }
            return Item.group(try author(transaction, of: row))
        }
        let sorting = keyed
            ? ViewSorting(flavour: .object, key: { transaction, _, row in
                var key = SortKey()
                key.append(Int64(Item.rank(try author(transaction, of: row))))
                key.append(row.key)
                return key
            })
            : ViewSorting(flavour: .object) { transaction, _, a, b in
                let ra = Item.rank(try author(transaction, of: a)), rb = Item.rank(try author(transaction, of: b))
                if ra != rb { return ra < rb ? .ascending : .descending }
                return a.key < b.key ? .ascending : a.key == b.key ? .same : .descending
            }
        return View(grouping: grouping, sorting: sorting, versionTag: keyed ? "keyed" : "compared")
    }

    private func setAuthor(_ t: ReadWriteTransaction, _ key: String, _ country: String, rank: Int = 0) throws {
        try t.setObject(Item.encode(group: country, rank: rank), forKey: key, inCollection: "authors", metadata: nil)
    }

    private func setBook(_ t: ReadWriteTransaction, _ key: String, by author: String) throws {
        try t.setObject(bytes(author), forKey: key, inCollection: "books", metadata: nil)
    }

    private func groups(_ connection: Connection, _ view: String = "byAuthor") throws -> [String: [String]] {
        try connection.read { try $0.view(view).dump() }
    }

    func testGroupingReadsRowsWrittenEarlierInTheSameTransaction() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let connection = try database.newConnection()
        // Registration over existing rows: its transaction reads them.
        try connection.readWrite { t in
            try setAuthor(t, "tolstoy", "ru")
            try setBook(t, "war", by: "tolstoy")
        }
        try database.registerView(Self.byAuthor(), name: "byAuthor")
        XCTAssertEqual(try groups(connection), ["ru": ["war"]])

        // The author first, then the book, in one transaction.
        try connection.readWrite { t in
            try setAuthor(t, "hugo", "fr")
            try setBook(t, "miserables", by: "hugo")
            // The transaction's own view already has it.
            XCTAssertEqual(try t.view("byAuthor").group(forKey: "miserables", inCollection: "books"), "fr")
            try setBook(t, "orphan", by: "nobody")   // no such author: left out
        }
        XCTAssertEqual(try groups(connection), ["ru": ["war"], "fr": ["miserables"]])

        // setViewDefinition repopulates inside the caller's transaction,
        // reading what it wrote before.
        try connection.readWrite { t in
            try setAuthor(t, "nobody", "xx")
            let keyed = Self.byAuthor(keyed: true)
            try t.setViewDefinition(name: "byAuthor", grouping: keyed.grouping, sorting: keyed.sorting, versionTag: "2")
        }
        XCTAssertEqual(try groups(connection), ["ru": ["war"], "fr": ["miserables"], "xx": ["orphan"]])
    }

    func testSortingReadsRowsInBothForms() throws {
        for keyed in [false, true] {
            let database = try Database(path: nil)
            defer { database.close() }
            let connection = try database.newConnection()
            try connection.readWrite { t in
                try setAuthor(t, "a", "fr", rank: 3)
                try setAuthor(t, "b", "fr", rank: 1)
                try setBook(t, "k1", by: "a")
            }
            XCTAssertTrue(try database.registerView(Self.byAuthor(keyed: keyed), name: "byAuthor") == .built)
            try connection.readWrite { t in
                try setAuthor(t, "c", "fr", rank: 2)
                try setBook(t, "k2", by: "b")
                try setBook(t, "k3", by: "c")
            }
            XCTAssertEqual(try groups(connection), ["fr": ["k2", "k3", "k1"]], "keyed: \(keyed)")
        }
    }

    func testFindReadsRows() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let connection = try database.newConnection()
        try database.registerView(Self.byAuthor(keyed: true), name: "byAuthor")
        try connection.readWrite { t in
            try setAuthor(t, "a", "fr", rank: 1)
            try setAuthor(t, "b", "fr", rank: 2)
            for (book, author) in [("k1", "a"), ("k2", "b"), ("k3", "b")] { try setBook(t, book, by: author) }
            // In the writing transaction: it sees the authors just written.
            let rankTwo = ViewFind(flavour: .object) { transaction, row in
                let rank = Item.rank(try Self.author(transaction, of: row))
                return rank < 2 ? .ascending : rank == 2 ? .same : .descending
            }
            XCTAssertEqual(try t.view("byAuthor").find(inGroup: "fr", using: rankTwo), 1 ..< 3)
        }
        // A find may also read views (they are not being updated).
        try connection.read { t in
            let sizeOfGroup = ViewFind(flavour: .key) { transaction, _ in
                try transaction.view("byAuthor").numberOfItems(inGroup: "fr") == 3 ? .same : .descending
            }
            XCTAssertEqual(try t.view("byAuthor").find(inGroup: "fr", using: sizeOfGroup), 0 ..< 3)
        }
    }

    func testDynamicGroupsReadRows() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let connection = try database.newConnection(), ui = try database.newConnection()
        try database.registerView(Self.byAuthor(keyed: true), name: "byAuthor")
        try connection.readWrite { t in
            for (author, country) in [("a", "fr"), ("b", "ru"), ("c", "de")] { try setAuthor(t, author, country) }
            for (book, author) in [("k1", "a"), ("k2", "b"), ("k3", "c")] { try setBook(t, book, by: author) }
            try t.setObject(bytes("1"), forKey: "ru", inCollection: "countries", metadata: nil)
            try t.setObject(bytes("2"), forKey: "fr", inCollection: "countries", metadata: nil)
        }
        func rank(_ transaction: ReadTransaction, _ group: String) throws -> Int {
            try transaction.object(forKey: group, inCollection: "countries")
                .flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
        }
        let mappings = Mappings(filter: { transaction, group in try transaction.exists(key: group, inCollection: "countries") },
                                sortedBy: { transaction, a, b in try rank(transaction, a) < rank(transaction, b) },
                                view: "byAuthor")
        try ui.beginLongLivedReadTransaction()
        try ui.read { try mappings.update(with: $0) }
        XCTAssertEqual(mappings.allGroups, ["ru", "fr"], "de is not listed; ru ranks first")

        try connection.readWrite { t in try t.setObject(bytes("0"), forKey: "de", inCollection: "countries", metadata: nil) }
        try connection.readWrite { t in try setBook(t, "k4", by: "c") }
        let notifications = try ui.beginLongLivedReadTransaction()
        XCTAssertTrue(mappings.hasChanges(for: notifications), "without a transaction every group may show")
        XCTAssertThrowsError(try mappings.changes(for: notifications)) { error in
            XCTAssertEqual((error as? YDBError)?.code, .misuse)
        }
        XCTAssertEqual(mappings.allGroups, ["ru", "fr"], "a refused changeset leaves the mappings alone")
        let changeset = try ui.read { try mappings.changes(for: notifications, in: $0) }
        XCTAssertEqual(mappings.allGroups, ["de", "ru", "fr"])
        XCTAssertEqual(changeset.sectionChanges.map(\.group), ["de"])
    }

    func testTheHandleIsReadOnlyAndLivesForOneCall() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let connection = try database.newConnection()
        let running = Locked<ReadWriteTransaction?>(nil)
        let kept = Locked<ReadTransaction?>(nil)
        let seen = Locked<[String: String]>([:])
        let grouping = ViewGrouping(flavour: .object) { transaction, row in
            kept.mutate { $0 = transaction }
            if let writer = running.value, seen.value.isEmpty {
                var found: [String: String] = [:]
                found["is a writer"] = transaction is ReadWriteTransaction ? "yes" : "no"
                found["view"] = Self.outcome { _ = try transaction.view("byAuthor") }
                found["write"] = Self.outcome { _ = try transaction.writer() }
                found["end"] = Self.outcome { try transaction.endRefusingCallbacks() }
                found["running write"] = Self.outcome { try writer.setObject([1], forKey: "sneaky", inCollection: "books", metadata: nil) }
                seen.mutate { $0 = found }
            }
            transaction.end()   // does nothing: not the callback's to end
            guard row.collection == "books" else { return nil }
            return Item.group(try Self.author(transaction, of: row))
        }
        try database.registerView(Self.byAuthor(grouping: grouping), name: "byAuthor")
        do {
            let transaction = try connection.beginReadWriteTransaction()
            try setAuthor(transaction, "hugo", "fr")
            running.mutate { $0 = transaction }
            try setBook(transaction, "miserables", by: "hugo")
            let found = seen.value
            XCTAssertEqual(found["is a writer"], "no")
            XCTAssertTrue(found["view"]?.contains("half-updated") == true, "\(found)")
            XCTAssertTrue(found["write"]?.contains("read-only") == true, "\(found)")
            XCTAssertTrue(found["end"]?.contains("read-only") == true, "\(found)")
            XCTAssertTrue(found["running write"]?.contains("read-only") == true, "\(found)")
            // The callback swallowed every refusal: the transaction goes on.
            try setBook(transaction, "notre-dame", by: "hugo")
            try transaction.commit()
            XCTAssertEqual(try groups(connection), ["fr": ["miserables", "notre-dame"]])
            XCTAssertNil(try connection.read { try $0.object(forKey: "sneaky", inCollection: "books") })
            running.mutate { $0 = nil }
        }

        // Kept past its call, and past the transaction that lent it (the
        // handle does not keep it alive): every use throws .misuse.
        let handle = try XCTUnwrap(kept.value)
        for use in [{ _ = try handle.object(forKey: "hugo", inCollection: "authors") },
                    { _ = try handle.count(inCollection: "books") },
                    { _ = try handle.view("byAuthor") },
                    { _ = try handle.writer() }] as [() throws -> Void] {
            XCTAssertTrue(Self.outcome(use).contains("valid only during"), Self.outcome(use))
        }
    }

    func testChangingARowACallbackOnlyReadMovesNothingUntilTouched() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let connection = try database.newConnection()
        try database.registerView(Self.byAuthor(), name: "byAuthor")
        try connection.readWrite { t in
            try setAuthor(t, "hugo", "fr")
            try setBook(t, "miserables", by: "hugo")
        }
        try connection.readWrite { t in try setAuthor(t, "hugo", "be") }
        XCTAssertEqual(try groups(connection), ["fr": ["miserables"]], "the author was only read: no callback re-ran")
        try connection.readWrite { t in try t.touchObject(forKey: "miserables", inCollection: "books") }
        XCTAssertEqual(try groups(connection), ["be": ["miserables"]], "touching the book regroups it")
    }
}
