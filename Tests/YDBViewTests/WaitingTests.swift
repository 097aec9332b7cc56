import Foundation
import XCTest
@testable import YDBView

/// Waiting for the write lock: a timeout instead of forever, `.misuse`
/// instead of a wait that could only end with itself, and registrations
/// from several threads that wait their turn (issue 36, items 5 to 7).
final class WaitingTests: XCTestCase, @unchecked Sendable {   // its threads call only stateless helpers
    func setObject(_ t: ReadWriteTransaction, _ key: String, _ rank: Int = 1) throws {
        try t.setObject(Item.encode(group: "g", rank: rank), forKey: key, inCollection: "c", metadata: nil)
    }

    /// Runs `body` on another thread; the returned semaphore is signalled
    /// when it returned.
    func onAnotherThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            done.signal()
        }
        return done
    }

    /// The gate goes to the writer that waited, not back to the one that
    /// just left it and asks again at once: a thread committing in a loop
    /// could otherwise keep another writer out for as long as it loops.
    func testAWaitingWriterGoesBeforeTheWriterThatJustLeft() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let a = try database.newConnection(), b = try database.newConnection()
        let gate = WriteGate()
        let order = Locked<[String]>([])
        try gate.enter(for: a, waitingAtMost: nil)
        let bDone = onAnotherThread {
            guard (try? gate.enter(for: b, waitingAtMost: 10_000)) != nil else { return }
            order.mutate { $0.append("b") }
            gate.leave()
        }
        let deadline = Date() + 10
        while !gate.hasWaitingWriters && Date() < deadline { usleep(1_000) }
        XCTAssertTrue(gate.hasWaitingWriters)
        gate.leave()
        try gate.enter(for: a, waitingAtMost: 10_000)
        order.mutate { $0.append("a") }
        gate.leave()
        XCTAssertEqual(bDone.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(order.value, ["b", "a"])
    }

    /// A read-write transaction begun on another thread (which then ends):
    /// this thread is not its holder, so it may wait for others as any
    /// thread does, and end it later.
    func beginOnAnotherThread(_ connection: Connection) throws -> ReadWriteTransaction {
        let begun = Locked<Result<ReadWriteTransaction, Error>?>(nil)
        onAnotherThread { begun.mutate { $0 = Result { try connection.beginReadWriteTransaction() } } }.wait()
        return try begun.value!.get()
    }

    // MARK: The write timeout

    func testAForgottenWriteFailsOtherWritersWithBusyNamingTheWait() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        XCTAssertEqual(database.defaultWriteTimeout, .seconds(5))
        let forgetful = try database.newConnection(), other = try database.newConnection()
        XCTAssertEqual(other.writeTimeout, .seconds(5))
        other.writeTimeout = .milliseconds(150)
        let forgotten = try forgetful.beginReadWriteTransaction()
        try setObject(forgotten, "k")
        let outcome = Locked<Result<Void, YDBError>?>(nil)
        let started = Date()
        let done = onAnotherThread {
            do {
                try other.readWrite { try self.setObject($0, "k2") }
                outcome.mutate { $0 = .success(()) }
            } catch {
                outcome.mutate { $0 = .failure(error as! YDBError) }
            }
        }
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success, "the second writer never gave up")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.14)
        guard case .failure(let error)? = outcome.value else { return XCTFail("the second write went through") }
        XCTAssertEqual(error.code, .busy)
        XCTAssertTrue(error.message.contains("database is locked: waited 150 ms"), error.message)
        // The forgotten write is untouched and commits; then others write again.
        try forgotten.commit()
        try other.readWrite { try self.setObject($0, "k2") }
        XCTAssertEqual(try other.read { try $0.count(inCollection: "c") }, 2)
    }

    func testTimeoutsNoneZeroAndTheDefaultForNewConnections() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        database.defaultWriteTimeout = .zero
        let holder = try database.newConnection(), other = try database.newConnection()
        XCTAssertEqual(other.writeTimeout, .zero)
        let open = try beginOnAnotherThread(holder)
        XCTAssertThrowsError(try other.beginReadWriteTransaction()) { XCTAssertEqual(($0 as? YDBError)?.code, .busy) }
        // Registering waits for the write lock as long as the default says.
        XCTAssertThrowsError(try database.registerView(rankView(), name: "v")) {
            XCTAssertEqual(($0 as? YDBError)?.code, .busy)
        }
        // No limit: waits until the holder commits.
        other.writeTimeout = nil
        database.defaultWriteTimeout = .seconds(1_000_000_000_000)   // saturates, no overflow
        XCTAssertEqual(other.writeTimeout, nil)
        let done = onAnotherThread { try? other.readWrite { try self.setObject($0, "late") } }
        XCTAssertEqual(done.wait(timeout: .now() + 0.2), .timedOut)
        try open.commit()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(try other.read { try $0.count(inCollection: "c") }, 1)
    }

    // MARK: Waits that could only end with themselves

    /// A thread waiting for the write lock to begin on connection B holds
    /// nothing of B: the thread holding the lock (on A) may then use B and
    /// gets `.misuse` at once. Before, it waited for B's lock, held by the
    /// waiting thread, which waited for A's commit: both forever.
    func testAThreadWaitingToWriteDoesNotKeepItsConnectionFromOthers() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let a = try database.newConnection(), b = try database.newConnection()
        let holding = try a.beginReadWriteTransaction()
        let wrote = Locked(false)
        let done = onAnotherThread {
            do {
                try b.readWrite { try self.setObject($0, "from b") }
                wrote.mutate { $0 = true }
            } catch {}
        }
        Thread.sleep(forTimeInterval: 0.1)   // b's thread is waiting for the write lock
        let started = Date()
        XCTAssertThrowsError(try b.beginReadTransaction()) {
            XCTAssertEqual(($0 as? YDBError)?.code, .misuse)
            XCTAssertTrue(($0 as? YDBError)?.message.contains("another thread is beginning") ?? false, "\($0)")
        }
        XCTAssertThrowsError(try b.beginLongLivedReadTransaction())
        XCTAssertLessThan(Date().timeIntervalSince(started), 1)
        try holding.commit()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        XCTAssertTrue(wrote.value)
        XCTAssertEqual(try b.read { try $0.count(inCollection: "c") }, 1)
    }

    func testClosingAConnectionWhileItWaitsToWriteEndsTheWaitWithClosed() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let a = try database.newConnection(), b = try database.newConnection()
        let holding = try a.beginReadWriteTransaction()
        let failure = Locked<YDBErrorCode?>(nil)
        let done = onAnotherThread {
            do { _ = try b.beginReadWriteTransaction() } catch { failure.mutate { $0 = (error as? YDBError)?.code } }
        }
        Thread.sleep(forTimeInterval: 0.1)
        b.close()
        try holding.commit()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(failure.value, .closed)
        try a.readWrite { try self.setObject($0, "k") }   // the lock was given back
    }

    func testWaitingForARegistrationWhileHoldingTheWriteLockIsRefused() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.newConnection().readWrite { t in for i in 0..<200 { try self.setObject(t, "k\(i)", i) } }
        let pause = AsyncRegistrationTests.Pause(after: 50)
        let task = try database.registerViewAsync(AsyncRegistrationTests.view(pause: pause), name: "v")
        pause.waitUntilReached()
        let writer = try database.newConnection()
        let holding = try writer.beginReadWriteTransaction()
        pause.resume()
        XCTAssertThrowsError(try task.wait()) {
            XCTAssertEqual(($0 as? YDBError)?.code, .misuse)
            XCTAssertTrue("\($0)".contains("holds a read-write transaction"), "\($0)")
        }
        XCTAssertThrowsError(try task.wait(timeoutMilliseconds: 100))
        XCTAssertFalse(try task.wait(timeoutMilliseconds: 0))   // a look is fine
        holding.rollback()
        XCTAssertEqual(try task.wait(), .built)
        // Finished: waiting with the lock held is fine, it returns at once.
        let again = try writer.beginReadWriteTransaction()
        XCTAssertEqual(try task.wait(), .built)
        again.rollback()
    }

    /// A background registration waits for a write forgotten open as long
    /// as it takes (no timeout fails it), and is still cancelled promptly.
    func testABackgroundRegistrationBehindAForgottenWriteCanBeCancelled() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        database.defaultWriteTimeout = .milliseconds(50)
        try database.newConnection().readWrite { t in for i in 0..<20 { try self.setObject(t, "k\(i)", i) } }
        let forgotten = try beginOnAnotherThread(try database.newConnection())
        let task = try database.registerViewAsync(rankView(), name: "v")
        XCTAssertFalse(try task.wait(timeoutMilliseconds: 300))   // still waiting: no .busy
        task.cancel()
        XCTAssertTrue(try task.wait(timeoutMilliseconds: 30_000))
        forgotten.rollback()
        guard case .failure(let error)? = task.result else { return XCTFail("not cancelled: \(String(describing: task.result))") }
        XCTAssertEqual(error.code, .cancelled)
    }

    // MARK: Registrations from several threads

    /// Registering and unregistering from several threads at once (other
    /// names) wait their turn instead of failing with "a read-write
    /// transaction is already active"; meanwhile a view registered all
    /// along is always found, and its outcome known.
    func testRegistrationsFromSeveralThreadsWaitTheirTurnAndQueriesNeverMissAView() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.newConnection().readWrite { t in for i in 0..<50 { try self.setObject(t, "k\(i)", i) } }
        try database.registerView(rankView(), name: "always")
        let problems = Locked<[String]>([])
        var done: [DispatchSemaphore] = []
        for thread in 0..<4 {
            done.append(onAnotherThread {
                for round in 0..<25 {
                    do {
                        let name = "t\(thread)"
                        let outcome = try database.registerView(rankView(tag: "\(round)", persistent: round % 2 == 0),
                                                                name: name)
                        if database.registrationOutcome(ofView: name) == nil {
                            problems.mutate { $0.append("\(name) registered (\(outcome)) but not found") }
                        }
                        if round % 3 == 0 { try database.unregisterView(name: name) }
                    } catch {
                        problems.mutate { $0.append("thread \(thread) round \(round): \(error)") }
                    }
                }
            })
        }
        let querying = Locked(true)
        let queries = onAnotherThread {
            while querying.value {
                if database.registrationOutcome(ofView: "always") == nil {
                    problems.mutate { $0.append("'always' has no outcome") }
                }
                if !database.registeredViewNames.contains("always") {
                    problems.mutate { $0.append("'always' is not listed") }
                }
            }
        }
        for semaphore in done { XCTAssertEqual(semaphore.wait(timeout: .now() + 120), .success) }
        querying.mutate { $0 = false }
        XCTAssertEqual(queries.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(problems.value, [])
    }

    func testRegisteringWhileThisThreadHoldsTheWriteLockIsRefused() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let holding = try database.newConnection().beginReadWriteTransaction()
        XCTAssertThrowsError(try database.registerView(rankView(), name: "v")) {
            XCTAssertEqual(($0 as? YDBError)?.code, .misuse)
        }
        XCTAssertThrowsError(try database.unregisterView(name: "v")) { XCTAssertEqual(($0 as? YDBError)?.code, .misuse) }
        holding.rollback()
        XCTAssertEqual(try database.registerView(rankView(), name: "v"), .built)
    }
}
