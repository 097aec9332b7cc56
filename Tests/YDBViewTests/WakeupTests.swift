#if canImport(Glibc)
import Glibc
#endif
import XCTest
@testable import YDBView

/// A connection's wakeup descriptor: readable while commits exist that the
/// connection has not caught up with, whatever transaction catches it up;
/// never for its own commits; closed connections have none.
final class WakeupTests: XCTestCase {
    private func readable(_ fd: Int32) -> Bool {
        var waiter = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&waiter, 1, 0) == 1
    }

    func testReadableUntilTheConnectionCatchesUp() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let ui = try database.newConnection(), writer = try database.newConnection()
        try ui.beginLongLivedReadTransaction()
        let fd = try ui.wakeupDescriptor(), own = try writer.wakeupDescriptor()
        XCTAssertEqual(try ui.wakeupDescriptor(), fd)
        XCTAssertFalse(readable(fd))
        try writer.readWrite { try $0.setObject([1], forKey: "k", inCollection: "c", metadata: nil) }
        XCTAssertTrue(readable(fd))
        XCTAssertFalse(readable(own))
        let skipped = try ui.beginLongLivedReadTransaction()
        XCTAssertEqual(skipped.count, 1)
        XCTAssertFalse(readable(fd))
        // A read or a write on the newest snapshot catches up as well.
        try writer.readWrite { try $0.setObject([2], forKey: "k", inCollection: "c", metadata: nil) }
        let other = try database.newConnection()
        let otherFD = try other.wakeupDescriptor()
        try writer.readWrite { try $0.setObject([3], forKey: "k", inCollection: "c", metadata: nil) }
        XCTAssertTrue(readable(otherFD))
        try other.readWrite { try $0.touchObject(forKey: "k", inCollection: "c") }
        XCTAssertFalse(readable(otherFD))
        XCTAssertTrue(readable(own))   // the touch was another connection's commit
        other.close()
        XCTAssertThrowsError(try other.wakeupDescriptor()) { error in
            XCTAssertEqual((error as? YDBError)?.code, .closed)
        }
    }

    /// A connection opened before commits it has not read is readable at
    /// once; internal connections have no descriptor.
    func testALateConnectionIsReadableAtOnce() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let late = try database.newConnection(), writer = try database.newConnection()
        try writer.readWrite { try $0.setObject([1], forKey: "k", inCollection: "c", metadata: nil) }
        XCTAssertTrue(readable(try late.wakeupDescriptor()))
        let engineOwn = try Connection(database: database, tracksNotifications: false)
        defer { engineOwn.close() }
        XCTAssertThrowsError(try engineOwn.wakeupDescriptor()) { error in
            XCTAssertEqual((error as? YDBError)?.code, .misuse)
        }
    }
}
