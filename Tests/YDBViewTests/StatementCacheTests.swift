import XCTest
@testable import YDBView

/// A handle finds the statements it used last by where their SQL text lies
/// (`SQLiteHandle.recent`), which for a literal never changes. A text short
/// enough to live inside its `String` is read from a copy on the stack, at
/// an address every short text shares: each must still get its own
/// statement (the first test; it fails when the text is not compared). A
/// longer text's address cannot come back with other SQL while an entry
/// holds it: the other two tests check that texts built at run time, and
/// literals pushed out of the 16 recent entries, still get their own.
final class StatementCacheTests: XCTestCase {
    func testShortTextsGetTheirOwnStatements() throws {
        let handle = try SQLiteHandle(path: ":memory:")
        defer { handle.close() }
        for _ in 0 ..< 3 {
            for number in 0 ..< 10 {
                let select = try handle.statement("SELECT \(number)")
                XCTAssertTrue(try select.step())
                XCTAssertEqual(select.int64(0), Int64(number))
                select.reset()
            }
        }
    }

    func testTextsBuiltAtRunTimeGetTheirOwnStatements() throws {
        let handle = try SQLiteHandle(path: ":memory:")
        defer { handle.close() }
        for _ in 0 ..< 3 {
            for number in 0 ..< 100 {
                // A new string each time: far more than the recent entries.
                let sql = "SELECT \(number) AS a_name_long_enough_to_be_stored_on_the_heap"
                let select = try handle.statement(sql)
                XCTAssertTrue(try select.step())
                XCTAssertEqual(select.int64(0), Int64(number), sql)
                select.reset()
            }
        }
    }

    func testLiteralsKeepTheirStatementsPastTheRecentOnes() throws {
        let handle = try SQLiteHandle(path: ":memory:")
        defer { handle.close() }
        try handle.execute("CREATE TABLE t (v INTEGER)")
        let insert = "INSERT INTO t (v) VALUES (?1)", count = "SELECT count(*), sum(v) FROM t"
        for value in 1 ... 40 {
            let statement = try handle.statement(insert)
            statement.bind(1, Int64(value))
            try statement.run()
            // Other statements push the two out of the recent ones now and then.
            if value % 8 == 0 {
                for other in 0 ..< 20 {
                    let select = try handle.statement("SELECT \(other) AS another_name_long_enough_for_the_heap")
                    XCTAssertTrue(try select.step())
                    select.reset()
                }
            }
        }
        let select = try handle.statement(count)
        XCTAssertTrue(try select.step())
        XCTAssertEqual(select.int64(0), 40)
        XCTAssertEqual(select.int64(1), 820)
        select.reset()
    }
}
