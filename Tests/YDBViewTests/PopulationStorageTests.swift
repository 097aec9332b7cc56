import XCTest
@testable import YDBView

/// A population writes its rows to storage 64 at a time, with the group
/// names and keys bound where they lie in one buffer; a stored view read
/// back must be the view that was written, whatever the names and however
/// long the keys (held in the value up to 24 bytes, in an array beyond).
final class PopulationStorageTests: FileDatabaseTestCase {
    /// Groups named "", "é", "g" and a long name; keys from 9
    /// to about 70 bytes, by rank and then by a key whose length varies.
    private func view(_ counter: CallCounter) -> View {
        let groups = ["", "\u{e9}", "g", String(repeating: "long group name ", count: 4)]
        let grouping = ViewGrouping(flavour: .object) { row in groups[Item.rank(row.object) % groups.count] }
        let sorting = ViewSorting(flavour: .object, key: { _, row in
            counter.sorting += 1
            var key = SortKey()
            key.append(Int64(Item.rank(row.object) / 7))
            key.append(row.key)
            return key
        })
        return View(grouping: grouping, sorting: sorting, versionTag: "1")
    }

    private static func rowKey(_ index: Int) -> String { "k" + String(repeating: "x", count: index % 60) + "\(index)" }

    /// Rows 0 ..< 301: four full statements of 64 rows, and some left over.
    private static func write301Rows(_ t: ReadWriteTransaction) throws {
        for index in 0 ..< 301 {
            try t.setObject(Item.encode(group: nil, rank: (index * 37) % 101), forKey: rowKey(index),
                            inCollection: "c", metadata: nil)
        }
    }

    func testAStoredPopulationReadsBackAsItWasWritten() throws {
        let counter = CallCounter()
        let before: [String: [String]]
        do {
            let database = try Database(path: path)
            try database.newConnection().readWrite { try Self.write301Rows($0) }
            XCTAssertEqual(try database.registerView(view(counter), name: "v"), .built)
            before = try database.newConnection().read { try $0.view("v").dump() }
            XCTAssertEqual(before.count, 4)
            XCTAssertEqual(before.values.reduce(0) { $0 + $1.count }, 301)
            database.close()
        }
        counter.sorting = 0
        let database = try Database(path: path)
        defer { database.close() }
        XCTAssertEqual(try database.registerView(view(counter), name: "v"), .loaded)
        XCTAssertEqual(counter.sorting, 0)
        XCTAssertEqual(try database.newConnection().read { try $0.view("v").dump() }, before)
        // The keys read back place a new row among them, short and long alike.
        try database.newConnection().readWrite { t in
            try t.setObject(Item.encode(group: nil, rank: 35), forKey: "k", inCollection: "c", metadata: nil)
        }
        let after = try database.newConnection().read { try $0.view("v").dump() }
        let long = String(repeating: "long group name ", count: 4)   // rank 35: group 35 % 4
        var expected = before[long]!
        // Its key starts with 35 / 7 = 5: after every row whose key starts
        // lower, and first among those that start with 5 (the text "k" ends
        // before every other row's key goes on).
        let ranks = try database.newConnection().read { t in
            try expected.map { Item.rank(try t.object(forKey: $0, inCollection: "c")) / 7 }
        }
        expected.insert("k", at: ranks.firstIndex { $0 >= 5 } ?? ranks.count)
        XCTAssertEqual(after[long], expected)
    }

    /// Row ids left sparse (four rows in five removed before the view was
    /// registered) are put in rowid order by a sort, not by a table of
    /// slots spanning them (`PlacesInRowidOrder`): the view must be in key
    /// order and read back as written all the same.
    func testAPopulationOverSparseRowIdsReadsBackAsItWasWritten() throws {
        let counter = CallCounter()
        let before: [String: [String]]
        do {
            let database = try Database(path: path)
            try database.newConnection().readWrite { t in
                try Self.write301Rows(t)
                for index in 0 ..< 301 where index % 5 != 0 { try t.removeObject(forKey: Self.rowKey(index), inCollection: "c") }
            }
            XCTAssertEqual(try database.registerView(view(counter), name: "v"), .built)
            before = try database.newConnection().read { try $0.view("v").dump() }
            XCTAssertEqual(before.values.reduce(0) { $0 + $1.count }, 61)
            for (_, keys) in before {
                let expected = keys.sorted { a, b in
                    let rankA = (Int(a.dropFirst().drop { $0 == "x" })! * 37) % 101 / 7
                    let rankB = (Int(b.dropFirst().drop { $0 == "x" })! * 37) % 101 / 7
                    return rankA != rankB ? rankA < rankB : Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
                }
                XCTAssertEqual(keys, expected)
            }
            database.close()
        }
        let database = try Database(path: path)
        defer { database.close() }
        XCTAssertEqual(try database.registerView(view(counter), name: "v"), .loaded)
        XCTAssertEqual(try database.newConnection().read { try $0.view("v").dump() }, before)
    }
}
