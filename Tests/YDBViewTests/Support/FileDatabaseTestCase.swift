import Foundation
import XCTest

/// Tests that close and reopen a database file: each test gets a directory
/// of its own, removed afterwards.
class FileDatabaseTestCase: XCTestCase {
    var directory: URL!
    var path: String { directory.appendingPathComponent("db.sqlite").path }

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ydbview-test-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(at: directory) }
}
