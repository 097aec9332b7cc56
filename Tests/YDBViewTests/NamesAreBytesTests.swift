import Foundation
import XCTest
@testable import YDBView

/// Names are their UTF-8 bytes everywhere: canonically equivalent spellings
/// ("é" as U+00E9 and as "e" + U+0301; "Å" three ways) are different
/// collections, keys, groups and views, exactly as SQLite and C see them.
final class NamesAreBytesTests: XCTestCase {
    /// Visually identical or canonically equivalent names, plus plain ones.
    static let alphabet = ["\u{E9}", "e\u{301}", "\u{C5}", "\u{212B}", "A\u{30A}", "a", "b"]

    var database: Database!
    override func setUpWithError() throws { database = try Database(path: nil) }
    override func tearDown() { database.close() }

    /// The object is the group name's bytes; rows sort by key bytes, then collection bytes.
    func byteView(tag: String = "1") -> View {
        let grouping = ViewGrouping(flavour: .object) { row in String(decoding: row.object ?? [], as: UTF8.self) }
        let sorting = ViewSorting(flavour: .key) { _, a, b in
            let left = Array(a.key.utf8) + [0] + Array(a.collection.utf8)
            let right = Array(b.key.utf8) + [0] + Array(b.collection.utf8)
            return left == right ? .same : left.lexicographicallyPrecedes(right) ? .ascending : .descending
        }
        return View(grouping: grouping, sorting: sorting, versionTag: tag)
    }

    struct Model {
        /// (collection bytes, key bytes) → group bytes
        var rows: [[UInt8]: (collection: [UInt8], key: [UInt8], group: [UInt8])] = [:]

        /// Group bytes → keys in view order.
        var groups: [[UInt8]: [[UInt8]]] {
            var result: [[UInt8]: [([UInt8], [UInt8])]] = [:]
            for row in rows.values { result[row.group, default: []].append((row.key, row.collection)) }
            return result.mapValues { members in
                members.sorted { ($0.0 + [0] + $0.1).lexicographicallyPrecedes($1.0 + [0] + $1.1) }.map(\.0)
            }
        }
    }

    func contents(_ connection: Connection, view: String = "v") throws -> [[UInt8]: [[UInt8]]] {
        try connection.read { t in
            var result: [[UInt8]: [[UInt8]]] = [:]
            guard try t.hasView(view) else { return result }
            let view = try t.view(view)
            for group in try view.allGroups() {
                var keys: [[UInt8]] = []
                try view.enumerateKeys(inGroup: group) { key, _, _ in keys.append(Array(key.key.utf8)) }
                XCTAssertNil(result[Array(group.utf8)], "group \(Array(group.utf8)) listed twice")
                result[Array(group.utf8)] = keys
            }
            return result
        }
    }

    func testNamesAndRowKeysOrderAsTheirBytes() {
        // Prefixes, equal prefixes of different lengths, bytes above 0x7F
        // (which a signed comparison would put first), and equivalent spellings.
        let names = ["", "a", "ab", "abc", "b", "\u{7F}", "\u{80}", "\u{FF}", "\u{100}", "\u{FFFF}",
                     "\u{10000}", "z\u{E9}", "ze\u{301}"] + Self.alphabet
        for left in names {
            for right in names {
                let expected = Array(left.utf8).lexicographicallyPrecedes(Array(right.utf8))
                XCTAssertEqual(Name(left) < Name(right), expected, "\(Array(left.utf8)) < \(Array(right.utf8))")
                // Also for a name made from part of a longer string.
                let cut = String("x\(left)".dropFirst())
                XCTAssertEqual(Name(cut) < Name(right), expected)
                let rowKeys = (RowKey(collection: "c", key: left), RowKey(collection: "c", key: right))
                XCTAssertEqual(rowKeys.0 < rowKeys.1, expected)
                XCTAssertEqual(RowKey(collection: left, key: "b") < RowKey(collection: right, key: "a"),
                               Array(left.utf8) == Array(right.utf8) ? false : expected)
            }
        }
    }

    func testRandomOperationsWithEquivalentNamesMatchAByteExactModel() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ydbview-names-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        database.close()
        database = try Database(path: directory.appendingPathComponent("db.sqlite").path)
        try database.registerView(byteView(), name: "v")
        let connection = try database.newConnection()
        let changed = Locked<[Int]>([])
        database.addCommitObserver { notification in changed.mutate { $0.append(notification.changedRows.count) } }
        var changedKeys: [Int] { changed.value }
        var random = SeededGenerator(seed: 20261122)
        var model = Model()
        for _ in 0 ..< 300 {
            // The distinct byte-keys this commit really changes: each is one
            // entry of the notification (two spellings are never merged).
            var touched = Set<[UInt8]>()
            let notificationsBefore = changedKeys.count
            try connection.readWrite { t in
                for _ in 0 ..< Int.random(in: 1 ... 3, using: &random) {
                    let collection = Self.alphabet.randomElement(using: &random)!
                    let key = Self.alphabet.randomElement(using: &random)!
                    let id = Array(collection.utf8) + [0] + Array(key.utf8)
                    if Int.random(in: 0 ..< 4, using: &random) == 0 {
                        try t.removeObject(forKey: key, inCollection: collection)
                        if model.rows[id] != nil { touched.insert(id) }
                        model.rows[id] = nil
                    } else {
                        // Often the same row switches between two spellings of one group.
                        let group = Self.alphabet.randomElement(using: &random)!
                        try t.setObject(Array(group.utf8), forKey: key, inCollection: collection, metadata: nil)
                        touched.insert(id)
                        model.rows[id] = (Array(collection.utf8), Array(key.utf8), Array(group.utf8))
                    }
                }
            }
            XCTAssertEqual(try contents(connection), model.groups)
            XCTAssertEqual(changedKeys.count, notificationsBefore + (touched.isEmpty ? 0 : 1))
            if !touched.isEmpty { XCTAssertEqual(changedKeys.last, touched.count) }
        }
        // Every distinct byte-key a commit touched is its own changed row.
        try connection.readWrite { t in
            try t.setObject(Array("a".utf8), forKey: "\u{E9}", inCollection: "c", metadata: nil)
            try t.setObject(Array("a".utf8), forKey: "e\u{301}", inCollection: "c", metadata: nil)
        }
        XCTAssertEqual(changedKeys.last, 2)
        // Reloading the persistent view from storage gives the same groups.
        let path = database.path
        let expected = try contents(connection)
        database.close()
        database = try Database(path: path)
        XCTAssertEqual(try database.registerView(byteView(), name: "v"), .loaded)
        XCTAssertEqual(try contents(try database.newConnection()), expected)
    }

    func testRowMovingBetweenTwoSpellingsOfAGroupDoesNotCrash() throws {
        try database.registerView(byteView(), name: "v")
        let connection = try database.newConnection()
        try connection.readWrite { try $0.setObject(Array("\u{E9}".utf8), forKey: "k", inCollection: "c", metadata: nil) }
        try connection.readWrite { try $0.setObject(Array("e\u{301}".utf8), forKey: "k", inCollection: "c", metadata: nil) }
        XCTAssertEqual(try contents(connection), [Array("e\u{301}".utf8): [Array("k".utf8)]])
    }

    func testTwoViewsWithEquivalentNamesAreIndependent() throws {
        let connection = try database.newConnection()
        try connection.readWrite { try $0.setObject(Array("g".utf8), forKey: "k", inCollection: "c", metadata: nil) }
        try database.registerView(byteView(), name: "v\u{E9}")
        try database.registerView(byteView(tag: "2"), name: "ve\u{301}")
        XCTAssertEqual(database.registeredViewNames.count, 2)
        try database.unregisterView(name: "v\u{E9}")
        XCTAssertEqual(database.registeredViewNames.map { Array($0.utf8) }, [Array("ve\u{301}".utf8)])
        XCTAssertEqual(try contents(connection, view: "ve\u{301}"), [Array("g".utf8): [Array("k".utf8)]])
        XCTAssertTrue(try contents(connection, view: "v\u{E9}").isEmpty)
    }

    func testMappingsKeepTwoSpellingsApart() throws {
        try database.registerView(byteView(), name: "v")
        let connection = try database.newConnection()
        try connection.readWrite { t in
            try t.setObject(Array("\u{E9}".utf8), forKey: "one", inCollection: "c", metadata: nil)
            try t.setObject(Array("e\u{301}".utf8), forKey: "two", inCollection: "c", metadata: nil)
            try t.setObject(Array("e\u{301}".utf8), forKey: "three", inCollection: "c", metadata: nil)
        }
        let mappings = Mappings(groups: ["\u{E9}", "e\u{301}"], view: "v")
        try connection.read { try mappings.update(with: $0) }
        XCTAssertEqual(mappings.numberOfSections, 2)
        XCTAssertEqual(mappings.numberOfItems(inSection: 0), 1)
        XCTAssertEqual(mappings.numberOfItems(inSection: 1), 2)
        XCTAssertEqual(mappings.group(forSection: 1).map { Array($0.utf8) }, Array("e\u{301}".utf8))
        XCTAssertEqual(mappings.section(forGroup: "e\u{301}"), 1)
    }
}
