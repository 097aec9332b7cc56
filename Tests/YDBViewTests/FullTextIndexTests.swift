import CSQLite
import Foundation
import XCTest
@testable import YDBView

/// Notes in these tests are "title|body" objects; "-" is a row the index
/// leaves out.
enum Note {
    static func encode(_ title: String, _ body: String) -> [UInt8] { Array("\(title)|\(body)".utf8) }
    static let excluded: [UInt8] = Array("-".utf8)

    static func texts(_ bytes: [UInt8]?) -> [String: String]? {
        guard let bytes, let text = String(bytes: bytes, encoding: .utf8), text != "-" else { return nil }
        let parts = text.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
        return ["title": String(parts[0]), "body": parts.count > 1 ? String(parts[1]) : ""]
    }
}

/// Counts callback calls (commits run on the test's thread).
final class ExtractCounter: @unchecked Sendable {
    var calls = 0
}

func notesIndex(_ counter: ExtractCounter = ExtractCounter(), tag: String = "1", flavour: ViewFlavour = .object,
                options: InvokeOptions? = nil, collections: [String]? = nil,
                tokenizer: String = FullTextIndex.defaultTokenizer) -> FullTextIndex {
    FullTextIndex(columns: ["title", "body"], flavour: flavour, options: options, versionTag: tag,
                  allowedCollections: collections, tokenizer: tokenizer) { row in
        counter.calls += 1
        return Note.texts(row.object)
    }
}

extension ReadTransaction {
    /// The keys `query` finds in index "notes", best first.
    func found(_ query: String, index: String = "notes") throws -> [String] {
        try search(index: index, query: query).map(\.key)
    }
}

func set(_ t: ReadWriteTransaction, _ key: String, _ title: String, _ body: String = "",
         in collection: String = "notes") throws {
    try t.setObject(Note.encode(title, body), forKey: key, inCollection: collection, metadata: nil)
}

final class FullTextIndexTests: FileDatabaseTestCase {

    // MARK: Maintenance

    func testIndexFollowsInsertsUpdatesAndRemovals() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        XCTAssertEqual(try database.registerFullTextIndex(notesIndex(), name: "notes"), .built)
        XCTAssertEqual(database.registeredFullTextIndexNames, ["notes"])
        let connection = try database.newConnection()
        try connection.readWrite { t in
            try set(t, "a", "Swift and SQLite", "full text search")
            try set(t, "b", "Cooking", "bread with swift hands")
            try set(t, "c", "Gardening", "roses")
            try set(t, "d", "Swift", "elsewhere", in: "other")
            // The transaction's own writes are searched.
            XCTAssertEqual(Set(try t.found("swift")), ["a", "b", "d"])
        }
        try connection.read { t in
            XCTAssertEqual(Set(try t.found("swift")), ["a", "b", "d"])
            XCTAssertEqual(try t.found("title:swift AND sqlite"), ["a"])
            XCTAssertEqual(try t.found("rose*"), ["c"])
            XCTAssertEqual(try t.search(index: "notes", query: "swift").first { $0.key == "d" }?.collection, "other")
        }
        try connection.readWrite { t in
            try set(t, "a", "Kotlin", "nothing else")
            try t.replaceObject(Note.encode("Tulips", "and swift birds"), forKey: "c", inCollection: "notes")
            try t.removeObject(forKey: "b", inCollection: "notes")
        }
        try connection.read { t in
            XCTAssertEqual(Set(try t.found("swift")), ["c", "d"])
            XCTAssertEqual(try t.found("kotlin"), ["a"])
            XCTAssertEqual(try t.found("roses"), [])
            XCTAssertEqual(try t.found("bread"), [])
        }
        try connection.readWrite { try $0.removeAllObjects(inCollection: "notes") }
        try connection.read { t in XCTAssertEqual(try t.found("swift OR kotlin OR elsewhere"), ["d"]) }
        try connection.readWrite { t in
            try set(t, "e", "swift again")
            try t.removeAllObjectsInAllCollections()
        }
        try connection.read { t in XCTAssertEqual(try t.found("swift OR again"), []) }
    }

    func testARolledBackTransactionLeavesNothing() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerFullTextIndex(notesIndex(), name: "notes")
        let connection = try database.newConnection()
        try connection.readWrite { t in try set(t, "kept", "kept words") }
        let t = try connection.beginReadWriteTransaction()
        try set(t, "gone", "vanishing words")
        try t.removeObject(forKey: "kept", inCollection: "notes")
        XCTAssertEqual(try t.found("words"), ["gone"])
        t.rollback()
        try connection.read { t in
            XCTAssertEqual(try t.found("words"), ["kept"])
            XCTAssertEqual(try t.found("vanishing"), [])
        }
        // A failed callback poisons the transaction: its commit rolls back.
        try database.registerFullTextIndex(FullTextIndex(columns: ["body"], versionTag: "x") { row in
            if row.key == "bad" { throw YDBError(.error, "no text for this one") }
            return ["body": "fine"]
        }, name: "strict")
        let failing = try connection.beginReadWriteTransaction()
        try set(failing, "ok", "fine words")
        XCTAssertThrowsError(try set(failing, "bad", "bad words")) { error in
            XCTAssertEqual((error as? YDBError)?.code, .callbackFailed)
            XCTAssertTrue((error as? YDBError)?.message.contains("full-text index 'strict'") == true, "\(error)")
        }
        XCTAssertThrowsError(try failing.commit())
        try connection.read { t in
            XCTAssertEqual(try t.found("fine", index: "strict"), ["kept"])
            XCTAssertEqual(try t.found("words"), ["kept"])
        }
    }

    /// An update indexes a row again only when the invoke options say the
    /// change matters, as a view's callbacks run again.
    func testUpdatesFollowTheInvokeOptions() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let byObject = ExtractCounter(), byKey = ExtractCounter()
        try database.registerFullTextIndex(notesIndex(byObject), name: "notes")
        try database.registerFullTextIndex(FullTextIndex(columns: ["key"], flavour: .key) { row in
            byKey.calls += 1
            return ["key": row.key.replacingOccurrences(of: "-", with: " ")]
        }, name: "keys")
        let connection = try database.newConnection()
        try connection.readWrite { t in try set(t, "red-apple", "first") }
        XCTAssertEqual([byObject.calls, byKey.calls], [1, 1])
        try connection.readWrite { t in
            try t.replaceMetadata([1], forKey: "red-apple", inCollection: "notes")
            try t.touchMetadata(forKey: "red-apple", inCollection: "notes")
        }
        XCTAssertEqual([byObject.calls, byKey.calls], [1, 1])
        try connection.readWrite { t in
            try t.touchObject(forKey: "red-apple", inCollection: "notes")
            try set(t, "red-apple", "second")
        }
        XCTAssertEqual([byObject.calls, byKey.calls], [3, 1])
        try connection.read { t in
            XCTAssertEqual(try t.found("second"), ["red-apple"])
            XCTAssertEqual(try t.found("first"), [])
            XCTAssertEqual(try t.found("apple", index: "keys"), ["red-apple"])
        }
    }

    func testOnlyAllowedCollectionsAreIndexed() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let counter = ExtractCounter()
        let connection = try database.newConnection()
        try connection.readWrite { t in
            try set(t, "a", "match", in: "notes")
            try set(t, "b", "match", in: "drafts")
        }
        try database.registerFullTextIndex(notesIndex(counter, collections: ["notes", "notes"]), name: "notes")
        XCTAssertEqual(counter.calls, 1)
        try connection.readWrite { t in
            try set(t, "c", "match", in: "drafts")
            try set(t, "d", "match", in: "notes")
            try t.removeAllObjects(inCollection: "drafts")
        }
        XCTAssertEqual(counter.calls, 2)
        try connection.read { t in XCTAssertEqual(try t.found("match"), ["a", "d"]) }
    }

    /// A callback taking the transaction reads other rows, including the
    /// running transaction's own writes.
    func testACallbackReadsOtherRowsThroughItsTransaction() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerFullTextIndex(FullTextIndex(columns: ["author"], flavour: .object) { transaction, row in
            guard row.collection == "books", let author = row.object.map({ String(decoding: $0, as: UTF8.self) }),
                  let name = try transaction.object(forKey: author, inCollection: "authors") else { return nil }
            return ["author": String(decoding: name, as: UTF8.self)]
        }, name: "byAuthor")
        let connection = try database.newConnection()
        try connection.readWrite { t in
            try t.setObject(Array("Ursula Le Guin".utf8), forKey: "ulg", inCollection: "authors", metadata: nil)
            try t.setObject(Array("ulg".utf8), forKey: "earthsea", inCollection: "books", metadata: nil)
        }
        try connection.read { t in XCTAssertEqual(try t.found("guin", index: "byAuthor"), ["earthsea"]) }
    }

    func testSetObjectsBatchesNextToAViewAreIndexed() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerView(rankView(keyed: true), name: "ranked")
        try database.registerFullTextIndex(FullTextIndex(columns: ["text"], flavour: .object) { row in
            ["text": String(decoding: row.object ?? [], as: UTF8.self).replacingOccurrences(of: "|", with: " ")]
        }, name: "text")
        let connection = try database.newConnection()
        try connection.readWrite { t in
            try t.setObjects((0 ..< 50).map { ("k\($0)", Item.encode(group: $0 % 2 == 0 ? "even" : "odd", rank: $0), nil) },
                             inCollection: "c")
        }
        try connection.read { t in
            XCTAssertEqual(try t.search(index: "text", query: "even").count, 25)
            XCTAssertEqual(try t.found("odd AND 7", index: "text"), ["k7"])
            XCTAssertEqual(try t.view("ranked").numberOfItems(inGroup: "odd"), 25)
        }
    }

    // MARK: Queries

    func testBadQueriesUnknownNamesAndLimits() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerFullTextIndex(notesIndex(), name: "notes")
        let connection = try database.newConnection()
        try connection.readWrite { t in
            for index in 0 ..< 10 { try set(t, "k\(index)", "common", String(repeating: "extra ", count: index)) }
        }
        try connection.read { t in
            for bad in ["AND", "\"unterminated", "nosuchcolumn: word", "a AND", "(open", "NEAR(a b"] {
                XCTAssertThrowsError(try t.search(index: "notes", query: bad), bad) { error in
                    XCTAssertEqual((error as? YDBError)?.code, .invalidArgument, "\(bad): \(error)")
                    XCTAssertTrue("\(error)".contains("invalid full-text query"), "\(error)")
                }
            }
            XCTAssertEqual(try t.search(index: "notes", query: ""), [])
            XCTAssertEqual(try t.search(index: "notes", query: " \t\n"), [])
            XCTAssertThrowsError(try t.search(index: "nosuch", query: "common")) { error in
                XCTAssertEqual((error as? YDBError)?.code, .notFound)
            }
            XCTAssertThrowsError(try t.search(index: "notes", query: "a\u{0}b")) { error in
                XCTAssertEqual((error as? YDBError)?.code, .invalidArgument)
            }
            XCTAssertThrowsError(try t.search(index: "notes", query: "common", limit: -1)) { error in
                XCTAssertEqual((error as? YDBError)?.code, .invalidArgument)
            }
            XCTAssertEqual(try t.search(index: "notes", query: "common", limit: 0), [])
            let all = try t.search(index: "notes", query: "common OR extra")
            XCTAssertEqual(all.count, 10)
            XCTAssertEqual(all.map(\.rank), all.map(\.rank).sorted(), "best (lowest) rank first")
            XCTAssertEqual(try t.search(index: "notes", query: "common OR extra", limit: 3), Array(all.prefix(3)))
            // Quoted, a word FTS5 would read as an operator is a word.
            XCTAssertEqual(try t.found("\"and\""), [])
        }
        // The connection still works after the errors.
        try connection.readWrite { t in try set(t, "z", "after") }
        try connection.read { t in XCTAssertEqual(try t.found("after"), ["z"]) }
    }

    func testSnippets() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerFullTextIndex(notesIndex(), name: "notes")
        let connection = try database.newConnection()
        try connection.readWrite { t in
            try set(t, "a", "Release notes", "the quick brown fox jumps over the lazy dog near the river bank")
            try set(t, "b", "Other", "nothing here")
        }
        try connection.read { t in
            XCTAssertEqual(try t.snippet(index: "notes", query: "fox", forKey: "a", inCollection: "notes",
                                         column: "body", before: "[", after: "]", ellipsis: "...", tokens: 4),
                           "the quick brown [fox]...")
            XCTAssertEqual(try t.snippet(index: "notes", query: "release", forKey: "a", inCollection: "notes"),
                           "<b>Release</b> notes")
            XCTAssertNil(try t.snippet(index: "notes", query: "fox", forKey: "b", inCollection: "notes"))
            XCTAssertNil(try t.snippet(index: "notes", query: "fox", forKey: "nosuch", inCollection: "notes"))
            XCTAssertNil(try t.snippet(index: "notes", query: "  ", forKey: "a", inCollection: "notes"))
            XCTAssertThrowsError(try t.snippet(index: "notes", query: "fox", forKey: "a", inCollection: "notes",
                                               column: "nosuch")) { error in
                XCTAssertEqual((error as? YDBError)?.code, .invalidArgument)
            }
            for tokens in [0, 65] {
                XCTAssertThrowsError(try t.snippet(index: "notes", query: "fox", forKey: "a", inCollection: "notes",
                                                   tokens: tokens)) { error in
                    XCTAssertEqual((error as? YDBError)?.code, .invalidArgument)
                }
            }
            XCTAssertThrowsError(try t.snippet(index: "notes", query: "fox OR", forKey: "a", inCollection: "notes")) {
                XCTAssertEqual(($0 as? YDBError)?.code, .invalidArgument)
            }
            XCTAssertThrowsError(try t.snippet(index: "nosuch", query: "fox", forKey: "a", inCollection: "notes")) {
                XCTAssertEqual(($0 as? YDBError)?.code, .notFound)
            }
        }
    }

    /// The package queries a search view builds on: rowid → rank, and one
    /// row's match by its rowid.
    func testRowidQueries() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerFullTextIndex(notesIndex(), name: "notes")
        let connection = try database.newConnection()
        try connection.readWrite { t in
            try set(t, "a", "apple pie")
            try set(t, "b", "apple")
            try set(t, "c", "pear")
        }
        try connection.read { t in
            let rowids = try ["a", "b", "c"].map { try XCTUnwrap(t.rowid(forKey: $0, inCollection: "notes")) }
            let matches = try t.fullTextMatches(index: "notes", query: "apple")
            XCTAssertEqual(Set(matches.keys), [rowids[0], rowids[1]])
            let ranked = try t.search(index: "notes", query: "apple")
            let rankedRowids = try ranked.map { try XCTUnwrap(t.rowid(forKey: $0.key, inCollection: "notes")) }
            XCTAssertEqual(rankedRowids.map { matches[$0] }, ranked.map(\.rank))
            XCTAssertTrue(try t.fullTextRowMatches(index: "notes", query: "apple", rowid: rowids[1]))
            XCTAssertFalse(try t.fullTextRowMatches(index: "notes", query: "apple", rowid: rowids[2]))
            XCTAssertFalse(try t.fullTextRowMatches(index: "notes", query: "apple", rowid: 999_999))
            XCTAssertFalse(try t.fullTextRowMatches(index: "notes", query: " ", rowid: rowids[0]))
            XCTAssertEqual(try t.fullTextMatches(index: "notes", query: ""), [:])
            XCTAssertThrowsError(try t.fullTextMatches(index: "notes", query: "OR")) {
                XCTAssertEqual(($0 as? YDBError)?.code, .invalidArgument)
            }
            XCTAssertThrowsError(try t.fullTextRowMatches(index: "nosuch", query: "a", rowid: 1)) {
                XCTAssertEqual(($0 as? YDBError)?.code, .notFound)
            }
        }
    }

    /// Searching is reading an extension: refused inside a callback, where
    /// extensions are half-updated, as reading a view is.
    func testSearchingFromInsideACallbackIsRefused() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerFullTextIndex(notesIndex(), name: "notes")
        let refusal = Locked<YDBError?>(nil)
        try database.registerFullTextIndex(FullTextIndex(columns: ["x"]) { transaction, _ in
            do { _ = try transaction.search(index: "notes", query: "a") } catch let error as YDBError {
                refusal.mutate { $0 = error }
            }
            return nil
        }, name: "nosy")
        try database.newConnection().readWrite { t in try set(t, "a", "a") }
        XCTAssertEqual(refusal.value?.code, .misuse)
    }

    // MARK: Registration

    func testDefinitionsAreChecked() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        func refused(_ columns: [String], tokenizer: String = FullTextIndex.defaultTokenizer, _ expected: String,
                     line: UInt = #line) {
            let released = Locked(false)
            var index = FullTextIndex(columns: columns, tokenizer: tokenizer) { _ in nil }
            index.releaseHook = ReleaseHook { released.mutate { $0 = true } }
            XCTAssertThrowsError(try database.registerFullTextIndex(index, name: "bad"), line: line) { error in
                XCTAssertEqual((error as? YDBError)?.code, .invalidArgument, line: line)
                XCTAssertTrue("\(error)".contains(expected), "\(error)", line: line)
            }
            XCTAssertTrue(released.value, "a refused definition's callbacks are released", line: line)
        }
        refused([], "at least one column")
        refused(["a", "A"], "named twice")
        refused(["title", "has space"], "not a name")
        refused(["1st"], "not a name")
        refused(["\"quoted\""], "not a name")
        refused(["rank"], "reserved")
        refused(["RowID"], "reserved")
        refused(["ydb_fts_1"], "reserved")
        refused(["ok"], tokenizer: "unicode61\"); DROP TABLE ydb_rows; --", "printable ASCII")
        refused(["ok"], tokenizer: "  ", "empty")
        refused(["ok"], tokenizer: "nosuchtokenizer", "FTS5 refused")
        XCTAssertThrowsError(try database.registerFullTextIndex(notesIndex(), name: "a\u{0}b")) {
            XCTAssertEqual(($0 as? YDBError)?.code, .invalidArgument)
        }
        XCTAssertEqual(database.registeredFullTextIndexNames, [])
        // Other tokenizers and their quoted arguments are accepted.
        XCTAssertEqual(try database.registerFullTextIndex(
            notesIndex(tokenizer: "porter unicode61 tokenchars '-_'"), name: "stems"), .built)
        try database.newConnection().readWrite { t in try set(t, "a", "running well-known") }
        try database.newConnection().read { t in
            XCTAssertEqual(try t.found("run", index: "stems"), ["a"])
            XCTAssertEqual(try t.found("\"well-known\"", index: "stems"), ["a"])
        }
    }

    func testViewsAndIndexesShareOneNamespace() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerView(rankView(), name: "taken")
        try database.registerFullTextIndex(notesIndex(), name: "notes")
        XCTAssertThrowsError(try database.registerFullTextIndex(notesIndex(), name: "taken")) { error in
            XCTAssertEqual((error as? YDBError)?.code, .invalidArgument)
            XCTAssertTrue("\(error)".contains("belongs to a view"), "\(error)")
        }
        XCTAssertThrowsError(try database.registerView(rankView(), name: "notes")) { error in
            XCTAssertEqual((error as? YDBError)?.code, .invalidArgument)
            XCTAssertTrue("\(error)".contains("belongs to a full-text index"), "\(error)")
        }
        // The background form is refused too, and the holders are intact.
        let task = try database.registerViewAsync(rankView(), name: "notes")
        XCTAssertThrowsError(try task.wait()) { XCTAssertEqual(($0 as? YDBError)?.code, .invalidArgument) }
        // Unregistering the other kind's name does nothing.
        try database.unregisterView(name: "notes")
        try database.unregisterFullTextIndex(name: "taken")
        XCTAssertEqual(database.registeredViewNames, ["taken"])
        XCTAssertEqual(database.registeredFullTextIndexNames, ["notes"])
        let connection = try database.newConnection()
        try connection.readWrite { t in try set(t, "a", "still", in: "c") }
        try connection.read { t in
            XCTAssertEqual(try t.found("still"), ["a"])
            XCTAssertEqual(try t.view("taken").numberOfItems(inGroup: "still"), 1)
        }
        // Once unregistered, the name is free for the other kind.
        try database.unregisterFullTextIndex(name: "notes")
        XCTAssertEqual(try database.registerView(rankView(), name: "notes"), .built)
    }

    func testRegisteringAgainSwapsCallbacksOrRebuilds() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let first = ExtractCounter(), second = ExtractCounter(), third = ExtractCounter()
        let firstReleased = Locked(false)
        var index = notesIndex(first)
        index.releaseHook = ReleaseHook { firstReleased.mutate { $0 = true } }
        try database.registerFullTextIndex(index, name: "notes")
        let connection = try database.newConnection()
        try connection.readWrite { t in try set(t, "a", "one") }
        XCTAssertEqual(try database.registerFullTextIndex(notesIndex(second), name: "notes"), .loaded)
        XCTAssertTrue(firstReleased.value)
        try connection.readWrite { t in try set(t, "b", "two") }
        XCTAssertEqual([first.calls, second.calls], [1, 1])
        XCTAssertEqual(try database.registerFullTextIndex(notesIndex(third, tag: "2"), name: "notes"),
                       .rebuiltForNewVersionTag)
        XCTAssertEqual(third.calls, 2)
        XCTAssertEqual(database.registrationOutcome(ofFullTextIndex: "notes"), .rebuiltForNewVersionTag)
        XCTAssertNil(database.registrationOutcome(ofFullTextIndex: "nosuch"))
        try connection.read { t in XCTAssertEqual(try t.found("one OR two"), ["a", "b"]) }
    }

    func testAFailingCallbackRegistersNothing() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.newConnection().readWrite { t in try set(t, "a", "text") }
        XCTAssertThrowsError(try database.registerFullTextIndex(FullTextIndex(columns: ["body"]) { _ in
            ["bdoy": "typo"]
        }, name: "typo")) { error in
            XCTAssertEqual((error as? YDBError)?.code, .callbackFailed)
            XCTAssertTrue("\(error)".contains("'bdoy'"), "\(error)")
        }
        XCTAssertThrowsError(try database.registerFullTextIndex(FullTextIndex(columns: ["body"]) { _ in
            ["body": "nul\u{0}inside"]
        }, name: "nul")) { XCTAssertEqual(($0 as? YDBError)?.code, .callbackFailed) }
        XCTAssertEqual(database.registeredFullTextIndexNames, [])
        XCTAssertFalse(try database.newConnection().read { try Schema.tableExists("ydb_fts_1", $0.handle) })
    }

    // MARK: Persistence and staleness

    func reopen(_ body: (Database) throws -> Void) throws {
        let database = try Database(path: path)
        defer { database.close() }
        try body(database)
    }

    func testAStoredIndexIsLoadedWithoutCallbacksAndRebuiltForANewTag() throws {
        try reopen { database in
            XCTAssertEqual(try database.registerFullTextIndex(notesIndex(), name: "notes"), .built)
            try database.newConnection().readWrite { t in
                try set(t, "a", "persistent words")
                try set(t, "b", "more words")
            }
        }
        let quiet = ExtractCounter()
        try reopen { database in
            XCTAssertEqual(try database.registerFullTextIndex(notesIndex(quiet), name: "notes"), .loaded)
            XCTAssertEqual(quiet.calls, 0)
            try database.newConnection().read { t in XCTAssertEqual(try t.found("words"), ["a", "b"]) }
        }
        let rebuilt = ExtractCounter()
        try reopen { database in
            XCTAssertEqual(try database.registerFullTextIndex(notesIndex(rebuilt, tag: "2"), name: "notes"),
                           .rebuiltForNewVersionTag)
            XCTAssertEqual(rebuilt.calls, 2)
        }
        // Other columns (or tokenizer) under the same tag: another table.
        try reopen { database in
            let index = FullTextIndex(columns: ["all"], flavour: .object, versionTag: "2") { row in
                ["all": String(decoding: row.object ?? [], as: UTF8.self)]
            }
            XCTAssertEqual(try database.registerFullTextIndex(index, name: "notes"), .rebuiltForNewVersionTag)
            try database.newConnection().read { t in XCTAssertEqual(try t.found("all: persistent"), ["a"]) }
        }
    }

    func testUnregisteringDropsTheTables() throws {
        try reopen { database in
            try database.registerFullTextIndex(notesIndex(), name: "notes")
            let handle = { try database.newConnection().read { try Schema.tableExists("ydb_fts_1", $0.handle) } }
            XCTAssertTrue(try handle())
            try database.unregisterFullTextIndex(name: "notes")
            XCTAssertFalse(try handle())
            XCTAssertEqual(database.registeredFullTextIndexNames, [])
            try database.newConnection().read { t in
                XCTAssertThrowsError(try t.search(index: "notes", query: "a")) {
                    XCTAssertEqual(($0 as? YDBError)?.code, .notFound)
                }
            }
        }
        try reopen { database in
            XCTAssertEqual(try database.registerFullTextIndex(notesIndex(), name: "notes"), .built)
        }
    }

    /// Rows written by this library while the index was not registered.
    func testAnIndexThatMissedCommitsIsRebuiltBecauseStale() throws {
        try reopen { database in
            try database.registerFullTextIndex(notesIndex(), name: "notes")
            try database.registerFullTextIndex(notesIndex(), name: "other")
            // A view whose id (1) equals the first index's: ids are per kind.
            try database.registerView(rankView(), name: "v")
        }
        try reopen { database in
            try database.registerFullTextIndex(notesIndex(), name: "other")
            try database.registerView(rankView(), name: "v")
            try database.newConnection().readWrite { t in try set(t, "late", "missed words") }
        }
        let counter = ExtractCounter()
        try reopen { database in
            XCTAssertEqual(try database.registerFullTextIndex(notesIndex(counter), name: "notes"), .rebuiltBecauseStale)
            XCTAssertEqual(counter.calls, 1)
            XCTAssertEqual(try database.registerFullTextIndex(notesIndex(), name: "other"), .loaded)
            XCTAssertEqual(try database.registerView(rankView(), name: "v"), .loaded)
            try database.newConnection().read { t in
                XCTAssertEqual(try t.found("missed"), ["late"])
                XCTAssertEqual(try t.found("missed", index: "other"), ["late"])
            }
        }
    }

    /// Rows written by another SQLite client (whose writes fire the row
    /// triggers the library counts).
    func testWritesByAnotherSQLiteClientMakeTheIndexStale() throws {
        try reopen { database in
            try database.registerFullTextIndex(notesIndex(), name: "notes")
            try database.newConnection().readWrite { t in try set(t, "a", "before") }
        }
        var raw: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &raw), SQLITE_OK)
        XCTAssertEqual(sqlite3_exec(raw, """
            INSERT INTO ydb_rows (rowid, collection, key, object) VALUES (100, 'notes', 'b', CAST('outside|client' AS BLOB));
            UPDATE ydb_rows SET object = CAST('changed|outside' AS BLOB) WHERE key = 'a';
            """, nil, nil, nil), SQLITE_OK, String(cString: sqlite3_errmsg(raw)))
        sqlite3_close(raw)
        let counter = ExtractCounter()
        try reopen { database in
            XCTAssertEqual(try database.registerFullTextIndex(notesIndex(counter), name: "notes"), .rebuiltBecauseStale)
            XCTAssertEqual(counter.calls, 2)
            try database.newConnection().read { t in
                XCTAssertEqual(try t.found("outside"), ["a", "b"])
                XCTAssertEqual(try t.found("before"), [])
            }
        }
    }
}

// MARK: - Random operations against a brute-force search

/// A query the test writes in FTS5 syntax and evaluates itself, over
/// documents tokenized as unicode61 does ASCII text: lowercased, split at
/// anything that is not a letter or a digit.
indirect enum ModelQuery {
    case word(String), prefix(String), inColumn(String, String), phrase([String])
    case and(ModelQuery, ModelQuery), or(ModelQuery, ModelQuery), not(ModelQuery, ModelQuery)

    var text: String {
        switch self {
        case .word(let word): word
        case .prefix(let start): "\(start)*"
        case .inColumn(let column, let word): "\(column): \(word)"
        case .phrase(let words): "\"\(words.joined(separator: " "))\""
        case .and(let a, let b): "(\(a.text)) AND (\(b.text))"
        case .or(let a, let b): "(\(a.text)) OR (\(b.text))"
        case .not(let a, let b): "(\(a.text)) NOT (\(b.text))"
        }
    }

    func matches(_ document: [String: [String]]) -> Bool {
        let all = document.values
        switch self {
        case .word(let word): return all.contains { $0.contains(word) }
        case .prefix(let start): return all.contains { $0.contains { $0.hasPrefix(start) } }
        case .inColumn(let column, let word): return document[column]?.contains(word) == true
        case .phrase(let words):
            return all.contains { tokens in
                tokens.count >= words.count
                    && (0 ... tokens.count - words.count).contains { Array(tokens[$0 ..< $0 + words.count]) == words }
            }
        case .and(let a, let b): return a.matches(document) && b.matches(document)
        case .or(let a, let b): return a.matches(document) || b.matches(document)
        case .not(let a, let b): return a.matches(document) && !b.matches(document)
        }
    }

    static func tokens(_ text: String) -> [String] {
        text.lowercased().split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }
}

extension FullTextIndexTests {
    static let vocabulary = ["apple", "apricot", "banana", "cherry", "chestnut", "date", "fig", "grape", "honey",
                             "kiwi", "lemon", "lime", "mango", "melon", "olive", "peach", "pear", "plum"]

    func testRandomOperationsMatchABruteForceSearch() throws {
        var random = SeededGenerator(seed: 41)
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerFullTextIndex(notesIndex(collections: ["notes", "drafts"]), name: "notes")
        let connection = try database.newConnection()
        var committed: [RowKey: [UInt8]] = [:]
        var nonEmpty = 0
        let collections = ["notes", "drafts", "private"]

        func words(_ range: ClosedRange<Int>) -> String {
            let separators = [" ", ", ", ". ", "-", " / "]
            return (0 ..< Int.random(in: range, using: &random)).map { index in
                let word = Self.vocabulary.randomElement(using: &random)!
                let spelled = Bool.random(using: &random) ? word : word.prefix(1).uppercased() + word.dropFirst()
                return (index == 0 ? "" : separators.randomElement(using: &random)!) + spelled
            }.joined()
        }
        func object() -> [UInt8] {
            Int.random(in: 0 ..< 10, using: &random) == 0 ? Note.excluded : Note.encode(words(1 ... 3), words(0 ... 10))
        }
        func query(depth: Int = 0) -> ModelQuery {
            let word = { Self.vocabulary.randomElement(using: &random)! }
            switch Int.random(in: 0 ..< (depth < 2 ? 8 : 4), using: &random) {
            case 0: return .word(word())
            case 1: return .prefix(String(word().prefix(Int.random(in: 1 ... 3, using: &random))))
            case 2: return .inColumn(Bool.random(using: &random) ? "title" : "body", word())
            case 3: return .phrase([word(), word()])
            case 4, 5: return .and(query(depth: depth + 1), query(depth: depth + 1))
            case 6: return .or(query(depth: depth + 1), query(depth: depth + 1))
            default: return .not(query(depth: depth + 1), query(depth: depth + 1))
            }
        }
        /// Compares a search in `t` with the brute force over `rows`.
        func check(_ t: ReadTransaction, _ rows: [RowKey: [UInt8]], queries: Int, step: Int) throws {
            var documents: [RowKey: [String: [String]]] = [:]
            for (rowKey, bytes) in rows where rowKey.collection != "private" {
                if let texts = Note.texts(bytes) { documents[rowKey] = texts.mapValues(ModelQuery.tokens) }
            }
            for _ in 0 ..< queries {
                let asked = query()
                let found = try t.search(index: "notes", query: asked.text)
                let expected = Set(documents.filter { asked.matches($0.value) }.keys)
                if !expected.isEmpty { nonEmpty += 1 }
                XCTAssertEqual(Set(found.map { RowKey(collection: $0.collection, key: $0.key) }), expected,
                               "step \(step): \(asked.text)")
                XCTAssertEqual(found.count, expected.count, "each row once: \(asked.text)")
                XCTAssertEqual(found.map(\.rank), found.map(\.rank).sorted(), "best first: \(asked.text)")
                // By rowid, with no join to the rows: a row the index kept
                // after its removal shows here.
                let expectedRowids = try Set(expected.map { try XCTUnwrap(t.rowid(forKey: $0.key, inCollection: $0.collection)) })
                XCTAssertEqual(Set(try t.fullTextMatches(index: "notes", query: asked.text).keys), expectedRowids,
                               "step \(step): \(asked.text)")
                if let probe = rows.keys.randomElement(using: &random), let rowid = try t.rowid(forKey: probe.key, inCollection: probe.collection) {
                    XCTAssertEqual(try t.fullTextRowMatches(index: "notes", query: asked.text, rowid: rowid),
                                   expected.contains(probe), "step \(step): \(probe) for \(asked.text)")
                }
            }
        }

        let transactions = TestScale.pick(70, long: 2_000)
        var peak = 0
        for step in 0 ..< transactions {
            var rows = committed
            let t = try connection.beginReadWriteTransaction()
            for _ in 0 ..< Int.random(in: 1 ... 8, using: &random) {
                let collection = collections.randomElement(using: &random)!
                let key = "k\(Int.random(in: 0 ..< 80, using: &random))"
                let rowKey = RowKey(collection: collection, key: key)
                switch Int.random(in: 0 ..< 100, using: &random) {
                case 0 ..< 40:
                    let bytes = object()
                    try t.setObject(bytes, forKey: key, inCollection: collection, metadata: nil)
                    rows[rowKey] = bytes
                case 40 ..< 55:
                    let bytes = object()
                    try t.replaceObject(bytes, forKey: key, inCollection: collection)
                    if rows[rowKey] != nil { rows[rowKey] = bytes }
                case 55 ..< 60:
                    try t.replaceMetadata([UInt8(step & 0xff)], forKey: key, inCollection: collection)
                case 60 ..< 65:
                    try t.touchObject(forKey: key, inCollection: collection)
                case 65 ..< 80:
                    try t.removeObject(forKey: key, inCollection: collection)
                    rows[rowKey] = nil
                case 80 ..< 93:
                    let batch = (0 ..< Int.random(in: 1 ... 6, using: &random)).map { _ in
                        ("k\(Int.random(in: 0 ..< 80, using: &random))", object(), [UInt8]?.none)
                    }
                    try t.setObjects(batch, inCollection: collection)
                    for (batchKey, bytes, _) in batch { rows[RowKey(collection: collection, key: batchKey)] = bytes }
                case 93 ..< 98:
                    let keys = (0 ..< 4).map { _ in "k\(Int.random(in: 0 ..< 80, using: &random))" }
                    try t.removeObjects(forKeys: keys, inCollection: collection)
                    for removed in keys { rows[RowKey(collection: collection, key: removed)] = nil }
                case 98:
                    try t.removeAllObjects(inCollection: collection)
                    rows = rows.filter { $0.key.collection != collection }
                default:
                    try t.removeAllObjectsInAllCollections()
                    rows = [:]
                }
            }
            // The transaction searches its own writes.
            try check(t, rows, queries: 2, step: step)
            if Int.random(in: 0 ..< 10, using: &random) == 0 {
                t.rollback()
            } else {
                try t.commit()
                committed = rows
            }
            try connection.read { try check($0, committed, queries: 10, step: step) }
            peak = max(peak, committed.count)
        }
        XCTAssertGreaterThan(peak, 60, "the rows the checks ran over, at most")
        XCTAssertGreaterThan(nonEmpty, transactions * 3, "queries that found rows")
    }
}
