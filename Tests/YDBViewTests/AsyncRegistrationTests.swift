import Foundation
import XCTest
@testable import YDBView

/// `registerViewAsync`: population off the write lock, commits recorded and
/// caught up, visibility only once installed, progress, cancellation,
/// failures, closing, and the same-name rule (docs/behaviour.md,
/// "Asynchronous registration").
final class AsyncRegistrationTests: XCTestCase {
    struct Failure: Error {}

    /// Holds the population at its `after`-th grouping call (on the
    /// registration's thread) until `resume()`: what the test commits
    /// meanwhile lands on rows already scanned and rows not yet scanned.
    final class Pause: @unchecked Sendable {
        private let after: Int
        private let calls = Locked(0)
        private let reachedSignal = DispatchSemaphore(value: 0)
        private let resumeSignal = DispatchSemaphore(value: 0)

        init(after: Int) { self.after = after }

        func pass() {
            var call = 0
            calls.mutate { $0 += 1; call = $0 }
            if call == after {
                reachedSignal.signal()
                _ = resumeSignal.wait(timeout: .now() + 120)
            }
        }

        func waitUntilReached(file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertEqual(reachedSignal.wait(timeout: .now() + 120), .success, "the population never paused",
                           file: file, line: line)
        }

        func resume() { resumeSignal.signal() }
    }

    /// Grouped by the object's group ("-": left out), sorted by rank, then
    /// key, then collection (a total order, so any two registrations agree
    /// on ties). `failOn`: the grouping throws for that key.
    static func view(tag: String = "1", keyed: Bool = false, persistent: Bool = true,
                     collections: [String]? = nil, pause: Pause? = nil, failOn: String? = nil) -> View {
        var view = rankView(tag: tag, persistent: persistent, collections: collections, keyed: keyed)
        view.grouping = ViewGrouping(flavour: .object) { row in
            pause?.pass()
            if let failOn, row.key == failOn { throw Failure() }
            return Item.group(row.object)
        }
        return view
    }

    static let groups = ["g0", "g1", "g2", "g3", "-"]

    func fill(_ database: Database, rows: Int, seed: UInt64 = 1) throws {
        var rng = SeededGenerator(seed: seed)
        try database.newConnection().readWrite { t in
            for index in 0..<rows {
                let group = Self.groups.randomElement(using: &rng)!
                try t.setObject(Item.encode(group: group == "-" ? nil : group, rank: Int.random(in: 0..<1000, using: &rng)),
                                forKey: "k\(index)", inCollection: index % 10 == 9 ? "other" : "items", metadata: nil)
            }
        }
    }

    /// One random write: insert, update (regroup, re-rank, leave out),
    /// metadata only, touch, remove, remove many, remove and re-insert,
    /// or empty a collection (rarely).
    static func randomWrite(_ t: ReadWriteTransaction, _ rng: inout SeededGenerator, keys: Int) throws {
        let key = "k\(Int.random(in: 0..<keys + keys / 10, using: &rng))"
        let collection = Bool.random(using: &rng) ? "items" : "other"
        let group = groups.randomElement(using: &rng)!
        let object = Item.encode(group: group == "-" ? nil : group, rank: Int.random(in: 0..<1000, using: &rng))
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<45: try t.setObject(object, forKey: key, inCollection: collection, metadata: nil)
        case 45..<55: try t.replaceMetadata([1, 2, 3], forKey: key, inCollection: collection)
        case 55..<62: try t.touchObject(forKey: key, inCollection: collection)
        case 62..<80: try t.removeObject(forKey: key, inCollection: collection)
        case 80..<90:
            let more = (0..<5).map { _ in "k\(Int.random(in: 0..<keys, using: &rng))" }
            try t.removeObjects(forKeys: more, inCollection: collection)
        case 90..<99:
            try t.removeObject(forKey: key, inCollection: collection)
            try t.setObject(object, forKey: key, inCollection: collection, metadata: nil)
        default:
            if Int.random(in: 0..<20, using: &rng) == 0 { try t.removeAllObjects(inCollection: "other") }
        }
    }

    // MARK: Concurrent writes

    /// 20,000 rows (100,000 in the long run); 1M rows is the C test's
    /// (built in release by CMake).
    func testCommitsDuringPopulationAreCaughtUpComparator() throws {
        let rows = TestScale.pick(20_000, long: 100_000)
        let started = Date()
        try assertAsyncEqualsSync(rows: rows, keyed: false, writerPause: 1000, seed: 11)
        print("async registration of \(rows) rows under concurrent writes: \(Date().timeIntervalSince(started)) s")
    }

    func testCommitsDuringPopulationAreCaughtUpSortKeys() throws {
        try assertAsyncEqualsSync(rows: 20_000, keyed: true, collections: ["items"], seed: 12)
    }

    func testCommitsDuringPopulationAreCaughtUpNotPersistent() throws {
        try assertAsyncEqualsSync(rows: 10_000, keyed: false, persistent: false, seed: 13)
    }

    /// A registration over `rows` rows while another connection keeps
    /// committing random writes and a third keeps reading. The population
    /// pauses half-way while the test commits both small changes and one
    /// large one (enough for a catch-up round on a read snapshot), so rows
    /// already scanned and rows not yet scanned both change. Checks that
    /// commits completed while the population ran, that readers saw no
    /// view before the install commit and the view from it on, and that
    /// the view then equals one registered synchronously.
    func assertAsyncEqualsSync(rows: Int, keyed: Bool, persistent: Bool = true, collections: [String]? = nil,
                               writerPause: UInt32 = 200, seed: UInt64) throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try fill(database, rows: rows, seed: seed)
        let installedAt = Locked<UInt64?>(nil)
        database.addCommitObserver { notification in
            if notification.viewLog(named: "v") != nil {
                installedAt.mutate { if $0 == nil { $0 = notification.snapshot } }
            }
        }
        let stop = Locked(false)
        let completed = Locked(false)
        let commitsWhileRunning = Locked(0)
        let problems = Locked<[String]>([])
        let reads = Locked<[(snapshot: UInt64, visible: Bool)]>([])
        let threads = DispatchGroup()
        threads.enter()
        Thread.detachNewThread {
            defer { threads.leave() }
            var rng = SeededGenerator(seed: seed)
            do {
                let writer = try database.newConnection()
                while !stop.value {
                    try writer.readWrite { t in
                        for _ in 0..<Int.random(in: 1...4, using: &rng) { try Self.randomWrite(t, &rng, keys: rows) }
                    }
                    if !completed.value { commitsWhileRunning.mutate { $0 += 1 } }
                    // A busy writer, not a flood: the catch-up runs the
                    // callbacks again for every changed row, and must be
                    // able to catch up with the rows changed meanwhile.
                    usleep(writerPause)
                }
            } catch {
                problems.mutate { $0.append("writer: \(error)") }
            }
        }
        threads.enter()
        Thread.detachNewThread {
            defer { threads.leave() }
            do {
                let reader = try database.newConnection()
                while !stop.value {
                    try reader.read { t in
                        let visible = try t.hasView("v")
                        reads.mutate { $0.append((t.snapshot, visible)) }
                    }
                    usleep(500)
                }
            } catch {
                problems.mutate { $0.append("reader: \(error)") }
            }
        }

        let pause = Pause(after: rows / 2)
        let completions = Locked(0)
        let task = try database.registerViewAsync(
            Self.view(keyed: keyed, persistent: persistent, collections: collections, pause: pause), name: "v",
            completion: { _ in
                completed.mutate { $0 = true }
                completions.mutate { $0 += 1 }
            })
        pause.waitUntilReached()
        // While the population is held: commits go through (this thread's
        // and the writer's), and no reader sees the view.
        let connection = try database.newConnection()
        let deadline = Date().addingTimeInterval(60)
        while commitsWhileRunning.value < 20 && Date() < deadline { usleep(1000) }
        var rng = SeededGenerator(seed: seed + 100)
        for _ in 0..<50 {
            try connection.readWrite { t in try Self.randomWrite(t, &rng, keys: rows) }
        }
        try connection.readWrite { t in
            // Rows on both sides of the scan: remove, regroup, leave out,
            // re-insert under the same key (a new row id), insert anew.
            try t.removeObject(forKey: "k1", inCollection: "items")
            try t.removeObject(forKey: "k\(rows - 2)", inCollection: "items")
            try t.setObject(Item.encode(group: "g9", rank: 5), forKey: "k2", inCollection: "items", metadata: nil)
            try t.setObject(Item.encode(group: "g9", rank: 6), forKey: "k\(rows - 3)", inCollection: "items", metadata: nil)
            try t.setObject(Item.encode(group: nil, rank: 7), forKey: "k3", inCollection: "items", metadata: nil)
            try t.removeObject(forKey: "k4", inCollection: "items")
            try t.setObject(Item.encode(group: "g0", rank: 8), forKey: "k4", inCollection: "items", metadata: nil)
            try t.setObject(Item.encode(group: "g8", rank: 9), forKey: "new", inCollection: "items", metadata: nil)
        }
        // One large commit: more changed rows than the install catches up
        // under the write lock, so a round runs on a read snapshot.
        try connection.readWrite { t in
            for index in stride(from: 0, to: rows, by: max(1, rows / (BackgroundRegistration.catchUpLimit * 2))) {
                try t.setObject(Item.encode(group: "g\(index % 3)", rank: index % 997), forKey: "k\(index)",
                                inCollection: "items", metadata: nil)
            }
        }
        try connection.read { t in XCTAssertFalse(try t.hasView("v")) }
        XCTAssertFalse(task.isFinished)
        pause.resume()
        XCTAssertEqual(try task.wait(), .built)
        stop.mutate { $0 = true }
        XCTAssertEqual(threads.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(problems.value, [])
        XCTAssertEqual(completions.value, 1)
        XCTAssertGreaterThanOrEqual(commitsWhileRunning.value, 20, "commits waited for the population")

        try database.registerView(Self.view(keyed: keyed, persistent: persistent, collections: collections),
                                  name: "sync")
        try connection.read { t in
            let async = try t.view("v").dump()
            XCTAssertGreaterThan(async.values.reduce(0) { $0 + $1.count }, rows / 3)
            XCTAssertEqual(async, try t.view("sync").dump())
            XCTAssertEqual(try t.view("v").position(forKey: "new", inCollection: "items")?.group, "g8")
            XCTAssertNil(try t.view("v").position(forKey: "k3", inCollection: "items"))
        }
        let install = try XCTUnwrap(installedAt.value)
        let seen = reads.value
        XCTAssertTrue(seen.contains { !$0.visible }, "no read before the install")
        for read in seen {
            XCTAssertEqual(read.visible, read.snapshot >= install, "snapshot \(read.snapshot), install \(install)")
        }
        XCTAssertEqual(database.registrationOutcome(ofView: "v"), .built)
    }

    /// A writer that changes rows faster than the view's callbacks place
    /// them (the grouping is slowed down here) would keep the catch-up from
    /// ever converging: it is slowed down instead, by slices of the
    /// catch-up under the write lock, and the registration completes while
    /// the writer still runs.
    func testAWriterFasterThanTheCatchUpIsSlowedDown() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        let rows = 3000
        try fill(database, rows: rows)
        let slow = Locked(false)
        let pause = Pause(after: 1000)
        var view = Self.view(pause: pause)
        let grouping = view.grouping
        view.grouping = ViewGrouping(flavour: grouping.flavour) { transaction, row in
            if slow.value { usleep(300) }
            return try grouping.run(transaction, row)
        }
        let completed = Locked(false)
        let task = try database.registerViewAsync(view, name: "v", completion: { _ in completed.mutate { $0 = true } })
        pause.waitUntilReached()
        let writerDone = DispatchSemaphore(value: 0)
        let commits = Locked(0)
        Thread.detachNewThread {
            defer { writerDone.signal() }
            var rng = SeededGenerator(seed: 3)
            guard let writer = try? database.newConnection() else { return }
            while !completed.value {
                try? writer.readWrite { t in
                    for _ in 0..<20 { try Self.randomWrite(t, &rng, keys: rows) }
                }
                commits.mutate { $0 += 1 }
            }
        }
        while commits.value < 20 { usleep(1000) }
        slow.mutate { $0 = true }
        pause.resume()
        XCTAssertEqual(try task.wait(), .built)
        XCTAssertEqual(writerDone.wait(timeout: .now() + 60), .success)
        XCTAssertGreaterThan(task.catchUpSlices, 0)
        slow.mutate { $0 = false }
        try database.registerView(Self.view(), name: "sync")
        try database.newConnection().read { t in XCTAssertEqual(try t.view("v").dump(), try t.view("sync").dump()) }
    }

    /// A re-registration with a new tag: until its install, readers see the
    /// previous definition (kept up to date by commits); the install
    /// commit's notification gives mappings a valid changeset to the new one.
    func testReregistrationKeepsThePreviousDefinitionUntilInstalled() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try fill(database, rows: 3000)
        try database.registerView(Self.view(tag: "1", collections: ["other"]), name: "v")
        let reader = try database.newConnection()
        try reader.beginLongLivedReadTransaction()
        let mappings = Mappings(groups: ["g0", "g1", "g2", "g3"], view: "v")
        try reader.read { try mappings.update(with: $0) }
        let oldTable = try reader.read { Table(mappings: mappings, contents: try $0.view("v").contents()) }

        let pause = Pause(after: 1000)
        let task = try database.registerViewAsync(Self.view(tag: "2", keyed: true, pause: pause), name: "v")
        pause.waitUntilReached()
        let writer = try database.newConnection()
        try writer.readWrite { t in
            try t.setObject(Item.encode(group: "g1", rank: 1), forKey: "late", inCollection: "other", metadata: nil)
        }
        try writer.read { t in
            XCTAssertEqual(try t.view("v").versionTag, "1")
            XCTAssertEqual(try t.view("v").position(forKey: "late", inCollection: "other")?.group, "g1")
        }
        pause.resume()
        XCTAssertEqual(try task.wait(), .rebuiltForNewVersionTag)

        let notifications = try reader.beginLongLivedReadTransaction()
        let changeset = try mappings.changes(for: notifications)
        let newTable = try reader.read { Table(mappings: mappings, contents: try $0.view("v").contents()) }
        XCTAssertEqual(try BatchUpdate(changeset).apply(to: oldTable), newTable)
        try database.registerView(Self.view(tag: "2", keyed: true), name: "sync")
        reader.endLongLivedReadTransaction()
        try reader.read { t in
            XCTAssertEqual(try t.view("v").versionTag, "2")
            XCTAssertEqual(try t.view("v").dump(), try t.view("sync").dump())
            XCTAssertGreaterThan(try t.view("v").numberOfItemsInAllGroups(), 2000)
        }
    }

    /// Every row removed while the population runs, then a few written:
    /// the view holds just those.
    func testRemoveAllDuringPopulation() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try fill(database, rows: 3000)
        let pause = Pause(after: 1500)
        let task = try database.registerViewAsync(Self.view(pause: pause), name: "v")
        pause.waitUntilReached()
        let writer = try database.newConnection()
        try writer.readWrite { t in
            try t.removeAllObjectsInAllCollections()
            try t.setObject(Item.encode(group: "g1", rank: 2), forKey: "k10", inCollection: "items", metadata: nil)
            try t.setObject(Item.encode(group: "g1", rank: 1), forKey: "k2999", inCollection: "other", metadata: nil)
        }
        pause.resume()
        XCTAssertEqual(try task.wait(), .built)
        try writer.read { t in XCTAssertEqual(try t.view("v").dump(), ["g1": ["k2999", "k10"]]) }
    }

    // MARK: Progress

    func testProgressIsMonotonicAndEndsAtTotal() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try fill(database, rows: 20_000)
        let reports = Locked<[ViewRegistrationProgress]>([])
        let task = try database.registerViewAsync(Self.view(), name: "v", progress: { report in
            reports.mutate { $0.append(report) }
        })
        try task.wait()
        let seen = reports.value
        XCTAssertGreaterThanOrEqual(seen.count, 3, "\(seen)")
        XCTAssertLessThanOrEqual(seen.count, 103, "never per row")
        XCTAssertEqual(seen.first?.done, 0)
        XCTAssertEqual(seen.last, ViewRegistrationProgress(done: 40_000, total: 40_000))
        XCTAssertTrue(seen.allSatisfy { $0.total == 40_000 })
        XCTAssertEqual(seen.map(\.done), seen.map(\.done).sorted(), "monotonic")
        XCTAssertEqual(seen.filter { $0.done == $0.total }.count, 1, "done reaches total once, at the end")
        XCTAssertEqual(seen.last?.fractionCompleted, 1)
    }

    /// A persistent view stored with the same tag needs no population: it
    /// is loaded, still in the background, with one report of 0 of 0.
    func testStoredViewIsLoaded() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ydbview-async-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        var database = try Database(path: path)
        try fill(database, rows: 500)
        XCTAssertEqual(try database.registerViewAsync(Self.view(), name: "v").wait(), .built)
        let before = try database.newConnection().read { try $0.view("v").dump() }
        database.close()
        database = try Database(path: path)
        defer { database.close() }
        let reports = Locked<[ViewRegistrationProgress]>([])
        let task = try database.registerViewAsync(Self.view(), name: "v", progress: { report in
            reports.mutate { $0.append(report) }
        })
        XCTAssertEqual(try task.wait(), .loaded)
        XCTAssertEqual(reports.value, [ViewRegistrationProgress(done: 0, total: 0)])
        XCTAssertEqual(try database.newConnection().read { try $0.view("v").dump() }, before)
        // Registered again with the same tag: kept as is.
        XCTAssertEqual(try database.registerViewAsync(Self.view(), name: "v").wait(), .loaded)
    }

    // MARK: Cancellation

    func testCancelInstallsNothingAndTheDatabaseKeepsWorking() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try fill(database, rows: 5000)
        let pause = Pause(after: 2000)
        let released = Locked(0)
        var view = Self.view(pause: pause)
        view.releaseHook = ReleaseHook { released.mutate { $0 += 1 } }
        let results = Locked<[Result<ViewRegistrationOutcome, YDBError>]>([])
        let task = try database.registerViewAsync(view, name: "v", completion: { result in
            results.mutate { $0.append(result) }
            // Released before the completion is called.
            XCTAssertEqual(released.value, 1)
        })
        pause.waitUntilReached()
        task.cancel()
        pause.resume()
        XCTAssertThrowsError(try task.wait()) { XCTAssertEqual(($0 as? YDBError)?.code, .cancelled) }
        XCTAssertTrue(task.isFinished)
        XCTAssertEqual(results.value.count, 1)
        XCTAssertEqual(released.value, 1)
        task.cancel()   // after completion: nothing
        XCTAssertEqual(results.value.count, 1)
        if case .failure(let error) = task.result { XCTAssertEqual(error.code, .cancelled) } else { XCTFail() }
        XCTAssertEqual(database.registeredViewNames, [])

        let connection = try database.newConnection()
        try connection.readWrite { t in
            try t.setObject(Item.encode(group: "g1", rank: 3), forKey: "after", inCollection: "items", metadata: nil)
        }
        try connection.read { t in XCTAssertFalse(try t.hasView("v")) }
        // Registering again works; the pending changes of the cancelled one are gone.
        XCTAssertEqual(try database.registerViewAsync(Self.view(), name: "v").wait(), .built)
        try database.registerView(Self.view(), name: "sync")
        try connection.read { t in XCTAssertEqual(try t.view("v").dump(), try t.view("sync").dump()) }
    }

    /// A progress handler may cancel from the registration's own thread;
    /// waiting there is refused instead of hanging.
    func testCancelAndWaitFromTheProgressHandler() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try fill(database, rows: 5000)
        let holder = Locked<ViewRegistrationTask?>(nil)
        let waitError = Locked<YDBErrorCode?>(nil)
        let gate = DispatchSemaphore(value: 0)
        let task = try database.registerViewAsync(Self.view(), name: "v", progress: { _ in
            gate.wait()
            gate.signal()
            guard let task = holder.value else { return }
            do { try task.wait() } catch { waitError.mutate { $0 = ($0 ?? (error as? YDBError)?.code) } }
            task.cancel()
        })
        holder.mutate { $0 = task }
        gate.signal()
        XCTAssertThrowsError(try task.wait()) { XCTAssertEqual(($0 as? YDBError)?.code, .cancelled) }
        XCTAssertEqual(waitError.value, .misuse)
        XCTAssertEqual(database.registeredViewNames, [])
    }

    // MARK: Failures

    func testFailingCallbackDuringPopulationInstallsNothing() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try fill(database, rows: 3000)
        let released = Locked(0)
        var view = Self.view(failOn: "k1500")
        view.releaseHook = ReleaseHook { released.mutate { $0 += 1 } }
        let results = Locked<[Result<ViewRegistrationOutcome, YDBError>]>([])
        let task = try database.registerViewAsync(view, name: "v", completion: { result in
            results.mutate { $0.append(result) }
        })
        XCTAssertThrowsError(try task.wait()) { error in
            XCTAssertEqual((error as? YDBError)?.code, .callbackFailed)
            XCTAssertTrue("\(error)".contains("view 'v': grouping callback failed"), "\(error)")
        }
        XCTAssertEqual(results.value.count, 1)
        XCTAssertEqual(released.value, 1)
        XCTAssertEqual(database.registeredViewNames, [])
        try database.newConnection().readWrite { t in
            try t.setObject(Item.encode(group: "g0", rank: 1), forKey: "x", inCollection: "items", metadata: nil)
        }
    }

    /// The callback fails on a row written while the population ran: the
    /// catch-up fails, and nothing is installed.
    func testFailingCallbackWhileCatchingUpInstallsNothing() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try fill(database, rows: 3000)
        let pause = Pause(after: 1000)
        let task = try database.registerViewAsync(Self.view(pause: pause, failOn: "poison"), name: "v")
        pause.waitUntilReached()
        try database.newConnection().readWrite { t in
            try t.setObject(Item.encode(group: "g0", rank: 1), forKey: "poison", inCollection: "items", metadata: nil)
        }
        pause.resume()
        XCTAssertThrowsError(try task.wait()) { XCTAssertEqual(($0 as? YDBError)?.code, .callbackFailed) }
        XCTAssertEqual(database.registeredViewNames, [])
        try database.newConnection().read { t in XCTAssertFalse(try t.hasView("v")) }
    }

    // MARK: Closing and the same name

    func testClosingTheDatabaseDuringPopulation() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ydbview-async-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        let database = try Database(path: path)
        try fill(database, rows: 3000)
        let pause = Pause(after: 1000)
        let released = Locked(0)
        var view = Self.view(pause: pause)
        view.releaseHook = ReleaseHook { released.mutate { $0 += 1 } }
        let results = Locked<[Result<ViewRegistrationOutcome, YDBError>]>([])
        let task = try database.registerViewAsync(view, name: "v", completion: { result in
            results.mutate { $0.append(result) }
        })
        pause.waitUntilReached()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { pause.resume() }
        database.close()   // waits for the registration to let go of the database
        XCTAssertThrowsError(try task.wait()) { XCTAssertEqual(($0 as? YDBError)?.code, .closed) }
        XCTAssertEqual(results.value.count, 1)
        XCTAssertEqual(released.value, 1)
        XCTAssertThrowsError(try database.registerViewAsync(Self.view(), name: "w")) {
            XCTAssertEqual(($0 as? YDBError)?.code, .closed)
        }
        // The file is free again at once, and the view was never stored.
        let reopened = try Database(path: path)
        defer { reopened.close() }
        XCTAssertEqual(try reopened.registerViewAsync(Self.view(), name: "v").wait(), .built)
    }

    /// A persistent view is stored after its install, a chunk per write
    /// transaction, and marked fresh once every row is: closed before
    /// that (here by an observer of the install commit, on the
    /// registration's own thread), it is left stale and repopulated.
    func testAViewClosedBeforeItIsStoredIsRepopulated() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ydbview-async-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        var database = try Database(path: path)
        try fill(database, rows: 3000)
        let closer = database
        database.addCommitObserver { notification in
            if notification.viewLog(named: "v") != nil { closer.close() }
        }
        XCTAssertEqual(try database.registerViewAsync(Self.view(), name: "v").wait(), .built)
        XCTAssertTrue(database.isClosed)
        database = try Database(path: path)
        XCTAssertEqual(try database.registerView(Self.view(), name: "v"), .rebuiltBecauseStale)
        database.close()
        // Stored to the end: loaded as stored.
        database = try Database(path: path)
        XCTAssertEqual(try database.registerViewAsync(Self.view(), name: "w").wait(), .built)
        database.close()
        database = try Database(path: path)
        defer { database.close() }
        XCTAssertEqual(try database.registerViewAsync(Self.view(), name: "w").wait(), .loaded)
    }

    func testTheLaterRequestOfTheSameNameWins() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try fill(database, rows: 3000)

        // Async, then async: the first is cancelled, the second installs.
        var pause = Pause(after: 500)
        let first = try database.registerViewAsync(Self.view(tag: "1", pause: pause), name: "v")
        pause.waitUntilReached()
        let second = try database.registerViewAsync(Self.view(tag: "2"), name: "v")
        pause.resume()
        XCTAssertThrowsError(try first.wait()) { XCTAssertEqual(($0 as? YDBError)?.code, .cancelled) }
        XCTAssertEqual(try second.wait(), .built)
        try database.newConnection().read { t in XCTAssertEqual(try t.view("v").versionTag, "2") }

        // Async, then a synchronous registration: the synchronous one stays.
        pause = Pause(after: 500)
        let third = try database.registerViewAsync(Self.view(tag: "3", pause: pause), name: "v")
        pause.waitUntilReached()
        try database.registerView(Self.view(tag: "4"), name: "v")
        pause.resume()
        XCTAssertThrowsError(try third.wait()) { XCTAssertEqual(($0 as? YDBError)?.code, .cancelled) }
        try database.newConnection().read { t in XCTAssertEqual(try t.view("v").versionTag, "4") }

        // Async, then unregistering: nothing stays.
        pause = Pause(after: 500)
        let fourth = try database.registerViewAsync(Self.view(tag: "5", pause: pause), name: "v")
        pause.waitUntilReached()
        try database.unregisterView(name: "v")
        pause.resume()
        XCTAssertThrowsError(try fourth.wait()) { XCTAssertEqual(($0 as? YDBError)?.code, .cancelled) }
        XCTAssertEqual(database.registeredViewNames, [])
    }

    func testRefusedBeforeStarting() throws {
        let database = try Database(path: nil)
        let released = Locked(0)
        var view = Self.view()
        view.releaseHook = ReleaseHook { released.mutate { $0 += 1 } }
        XCTAssertThrowsError(try database.registerViewAsync(view, name: "a\u{0}b")) {
            XCTAssertEqual(($0 as? YDBError)?.code, .invalidArgument)
        }
        XCTAssertEqual(released.value, 1)
        database.close()
    }

    func testAwaitingTheValue() async throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try fill(database, rows: 1000)
        let task = try database.registerViewAsync(Self.view(), name: "v")
        let outcome = try await task.value
        XCTAssertEqual(outcome, .built)
        let again = try await task.value
        XCTAssertEqual(again, .built)
    }
}
