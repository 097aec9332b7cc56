import Foundation
import XCTest
@testable import YDBView

/// A persistent view that missed row changes repopulates at registration.
final class StaleViewTests: FileDatabaseTestCase {

    func write(_ keys: [String], rank: Int = 1) throws {
        let database = try Database(path: path)
        defer { database.close() }
        try database.newConnection().readWrite { t in
            for key in keys {
                try t.setObject(Item.encode(group: "g", rank: rank), forKey: key, inCollection: "c", metadata: nil)
            }
        }
    }

    func reopen(_ counter: CallCounter = CallCounter(), tag: String = "1",
                _ body: (Database, ViewRegistrationOutcome) throws -> Void) throws {
        let database = try Database(path: path)
        defer { database.close() }
        try body(database, try database.registerView(rankView(counter: counter, tag: tag), name: "v"))
    }

    func keys(_ database: Database) throws -> [String] {
        try database.newConnection().read { try $0.view("v").dump()["g"] ?? [] }
    }

    /// A transaction that changes a batch of rows or more writes its view's
    /// storage rows at its commit, all at once in rowid order
    /// (`StoragePlan.save`): after one
    /// transaction that inserts, moves (relabelling windows) and removes
    /// many rows, the view reopens as stored, with no callback, exactly as
    /// it was shown.
    func testRowsChangedManyTimesInOneTransactionAreStoredAsShown() throws {
        var shown: [String] = []
        try reopen { database, _ in
            try database.newConnection().readWrite { t in
                for index in 0 ..< 400 {
                    try t.setObject(Item.encode(group: "g", rank: 0), forKey: "k\(index)", inCollection: "c", metadata: nil)
                }
                for index in stride(from: 0, to: 400, by: 2) {
                    try t.setObject(Item.encode(group: "g", rank: index % 7), forKey: "k\(index)", inCollection: "c",
                                    metadata: nil)
                }
                for index in stride(from: 0, to: 400, by: 3) { try t.removeObject(forKey: "k\(index)", inCollection: "c") }
            }
            shown = try keys(database)
        }
        XCTAssertEqual(shown.count, 400 - 134)
        let counter = CallCounter()
        try reopen(counter) { database, outcome in
            XCTAssertEqual(outcome, .loaded)
            XCTAssertEqual(counter.grouping + counter.sorting, 0)
            XCTAssertEqual(try keys(database), shown)
        }
    }

    func testViewThatMissedCommitsIsRepopulatedAndSaysSo() throws {
        try reopen { _, outcome in XCTAssertEqual(outcome, .built) }
        try write(["a", "b"])
        let counter = CallCounter()
        try reopen(counter) { database, outcome in
            XCTAssertEqual(outcome, .rebuiltBecauseStale)
            XCTAssertEqual(counter.grouping, 2)
            XCTAssertEqual(try keys(database), ["a", "b"])
            XCTAssertEqual(database.registrationOutcome(ofView: "v"), .rebuiltBecauseStale)
            XCTAssertNil(database.registrationOutcome(ofView: "nosuch"))
            try database.newConnection().readWrite { t in
                try t.setObject(Item.encode(group: "g", rank: 0), forKey: "c", inCollection: "c", metadata: nil)
            }
        }
        // Registered while rows changed: loaded as stored next time.
        let quiet = CallCounter()
        try reopen(quiet) { database, outcome in
            XCTAssertEqual(outcome, .loaded)
            XCTAssertEqual(quiet.grouping + quiet.sorting, 0)
            XCTAssertEqual(try keys(database), ["c", "a", "b"])
        }
        try reopen(tag: "2") { _, outcome in XCTAssertEqual(outcome, .rebuiltForNewVersionTag) }
    }

    func testOnlyTheViewsNotRegisteredGoStale() throws {
        do {
            let database = try Database(path: path)
            try database.registerView(rankView(), name: "v")
            try database.registerView(rankView(), name: "w")
            database.close()
        }
        do {
            let database = try Database(path: path)
            try database.registerView(rankView(), name: "v")
            try database.newConnection().readWrite { t in
                try t.setObject(Item.encode(group: "g", rank: 1), forKey: "k", inCollection: "c", metadata: nil)
            }
            database.close()
        }
        let database = try Database(path: path)
        defer { database.close() }
        XCTAssertEqual(try database.registerView(rankView(), name: "v"), .loaded)
        XCTAssertEqual(try database.registerView(rankView(), name: "w"), .rebuiltBecauseStale)
        XCTAssertEqual(try database.newConnection().read { try $0.view("w").dump()["g"] }, ["k"])
    }
}

extension StaleViewTests {
    /// SQLite's extended result code stays on the error.
    func testSQLiteCodeIsKept() throws {
        XCTAssertTrue(FileManager.default.createFile(
            atPath: path, contents: Data("this is not an SQLite database, not even close -- ".utf8)))
        XCTAssertThrowsError(try Database(path: path)) { error in
            XCTAssertEqual((error as? YDBError)?.code, .corrupt)
            XCTAssertEqual((error as? YDBError)?.sqliteCode, 26)   // SQLITE_NOTADB
        }
    }
}
