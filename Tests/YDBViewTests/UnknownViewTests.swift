import XCTest
@testable import YDBView

/// A view name that is not registered is an error on every surface, naming
/// the view, instead of an empty table; mappings made before their view is
/// registered say so explicitly (docs/behaviour.md, "Mappings").
final class UnknownViewTests: XCTestCase {
    func testAMisspeltViewNameThrowsNotFoundNamingIt() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerView(rankView(), name: "byRank")
        let connection = try database.newConnection()
        try connection.readWrite { try $0.setObject(Item.encode(group: "g", rank: 1), forKey: "k", inCollection: "c",
                                                    metadata: nil) }
        try connection.read { t in
            XCTAssertTrue(try t.hasView("byRank"))
            XCTAssertFalse(try t.hasView("byRnak"))
            XCTAssertThrowsError(try t.view("byRnak")) {
                XCTAssertEqual(($0 as? YDBError)?.code, .notFound)
                XCTAssertTrue("\($0)".contains("'byRnak'"), "\($0)")
            }
            XCTAssertEqual(try t.view("byRank").numberOfItems(inGroup: "g"), 1)
            let mappings = Mappings(groups: ["g"], view: "byRnak")
            XCTAssertThrowsError(try mappings.update(with: t)) {
                XCTAssertEqual(($0 as? YDBError)?.code, .notFound)
                XCTAssertTrue("\($0)".contains("'byRnak'"), "\($0)")
            }
            XCTAssertNil(mappings.snapshotOfLastUpdate)   // left as it was
        }
    }

    func testMappingsMadeBeforeRegistrationSayWhatTheyWant() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let writer = try database.newConnection(), reader = try database.newConnection()
        try writer.readWrite { try $0.setObject(Item.encode(group: "g", rank: 1), forKey: "k", inCollection: "c",
                                                metadata: nil) }
        let mappings = Mappings(groups: ["g"], view: "later")
        mappings.allowsUnregisteredView = true
        try reader.beginLongLivedReadTransaction()
        try reader.read { try mappings.update(with: $0) }
        XCTAssertEqual(mappings.numberOfItems(inGroup: "g"), 0)
        try database.registerView(rankView(), name: "later")
        let changeset = try mappings.changes(for: try reader.beginLongLivedReadTransaction())
        XCTAssertEqual(changeset.rowChanges.map(\.type), [.insert])
        XCTAssertEqual(mappings.numberOfItems(inGroup: "g"), 1)
    }
}
