import Foundation
import XCTest
import YDBView

/// The README's Swift example, kept compiling and true.
final class ReadmeExampleTests: XCTestCase {
    struct Book: Codable {
        var title: String, genre: String, rank: Int
        init(title: String, genre: String, rank: Int) { (self.title, self.genre, self.rank) = (title, genre, rank) }
        init?(_ row: ViewRow) {
            guard let book = try? JSONDecoder().decode(Book.self, from: Data(row.object ?? [])) else { return nil }
            self = book
        }
    }

    func testReadmeViewsMappingsAndChangesets() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let connection = try database.newConnection()
        let ui = try database.newConnection()
        let byRank = View(
            grouping: ViewGrouping(flavour: .object) { row in Book(row)?.genre },
            sorting: ViewSorting(flavour: .object) { _, a, b in
                let (x, y) = (Book(a)!.rank, Book(b)!.rank)
                return x < y ? .ascending : x > y ? .descending : .same
            },
            versionTag: "1")
        try database.registerView(byRank, name: "byRank")

        let mappings = Mappings(groups: ["sci-fi"], view: "byRank")
        mappings.setRangeOptions(try .fixed(length: 20, offset: 0, from: .beginning), forGroup: "sci-fi")
        try ui.beginLongLivedReadTransaction()
        try ui.read { try mappings.update(with: $0) }

        try connection.readWrite { t in
            try t.setValue(Book(title: "Dune", genre: "sci-fi", rank: 1), forKey: "b1", inCollection: "books")
        }
        let changeset = try mappings.changes(for: try ui.beginLongLivedReadTransaction())
        XCTAssertEqual(changeset.rowChanges.map(\.type), [.insert])
        XCTAssertEqual(changeset.rowChanges.first?.key, "b1")
        XCTAssertEqual(changeset.rowChanges.first?.newIndexPath, TableIndexPath(section: 0, row: 0))
        XCTAssertEqual("\(changeset.rowChanges[0].newIndexPath!)", "[0, 0]")
        XCTAssertEqual(changeset.steps().map(\.description), ["insert row [0, 0] books/b1"])
        let top = try ui.read { try $0.view("byRank").rowKey(at: TableIndexPath(section: 0, row: 0), mappings: mappings) }
        XCTAssertEqual(top, RowKey(collection: "books", key: "b1"))
    }
}
