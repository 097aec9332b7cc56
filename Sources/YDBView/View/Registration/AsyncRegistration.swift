#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Asynchronous view registration (YapDatabase's asyncRegisterExtension):
// the population runs on a thread of its own, on a read snapshot, without
// the write lock; commits meanwhile record the rows they change; one short
// read-write transaction at the end catches the view up with them and
// installs it. docs/behaviour.md, "Asynchronous registration", states the
// rules.

/// How far an asynchronous registration has come.
public struct ViewRegistrationProgress: Sendable, Equatable {
    /// Steps done: one per row the population read (grouping), then one
    /// per row it sorted into its group.
    public let done: Int
    /// Every step: twice the rows the population reads; 0 when the
    /// registration needs no population (a view kept, or loaded as stored).
    /// `done` reaches `total` only in the last report, made once the view
    /// is installed.
    public let total: Int

    public init(done: Int, total: Int) {
        self.done = done
        self.total = total
    }

    /// `done / total`, 1 when there is nothing to do.
    public var fractionCompleted: Double { total == 0 ? 1 : Double(done) / Double(total) }
}

/// A view registration running in the background
/// (`Database.registerViewAsync`): cancel it, wait for it, or read its
/// result once it finished.
///
/// ```swift
/// let task = try database.registerViewAsync(view, name: "byTitle",
///                                            progress: { print("\(Int($0.fractionCompleted * 100))%") })
/// let outcome = try task.wait()            // or: try await task.value
/// ```
///
/// `Sendable`: its mutable state is guarded by `lock`; the progress fields
/// are used only by the registration's own thread, and `recorded` only
/// under its database's `PendingRegistrations` lock.
public final class ViewRegistrationTask: @unchecked Sendable {
    /// The name the view is being registered as.
    public let viewName: String
    let view: View
    /// Its database's write gate: a thread holding it cannot wait for the
    /// registration, which needs it to install (and store) the view.
    private let writeGate: WriteGate
    // Used by the registration's thread only; let go once it finished.
    private var progressHandler: (@Sendable (ViewRegistrationProgress) -> Bool)?
    private var completion: (@Sendable (Result<ViewRegistrationOutcome, YDBError>) -> Void)?

    private let lock = Mutex()
    /// Why it must stop (cancel, a later registration of the name, close).
    private var stopReason: YDBError?
    private var outcome: Result<ViewRegistrationOutcome, YDBError>?
    /// Its install committed: it can no longer be cancelled.
    private var installed = false
    private var completionReturned = false
    private var thread: UInt?
    private var continuations: [CheckedContinuation<ViewRegistrationOutcome, Error>] = []
    /// Signalled once the completion handler returned (and again by each waiter).
    private let finished = Semaphore(value: 0)
    /// Signalled once the registration no longer uses its database.
    private let leftDatabase = Semaphore(value: 0)

    // The registration's thread only (read by tests once it finished).
    /// Catch-up slices it ran under the write lock (see `populateAndInstall`).
    package private(set) var catchUpSlices = 0
    private var total = 0
    private var nextReport = 0
    private var lastReport: Int64 = 0

    /// Row changes of the commits since it began recording (see `PendingRegistrations`).
    var recorded: [(snapshot: UInt64, rows: [Int64: RowChangeKind])] = []
    /// A new definition of a registered view set in the background
    /// (`setViewDefinitionAsync`, `setFilterAsync`): its install logs what
    /// changed, as `setViewDefinition` does, instead of a reset.
    var logsDifference = false

    init(view: View, name: String, writeGate: WriteGate, progress: (@Sendable (ViewRegistrationProgress) -> Bool)?,
         completion: (@Sendable (Result<ViewRegistrationOutcome, YDBError>) -> Void)?) {
        self.view = view
        viewName = name
        self.writeGate = writeGate
        progressHandler = progress
        self.completion = completion
    }

    // MARK: Public

    /// Asks the registration to stop: it completes with `.cancelled` and
    /// installs nothing — unless its install already committed, in which
    /// case this does nothing. It stops at its next step (within a few
    /// thousand rows of the population); `wait()` waits for that.
    public func cancel() {
        stop(because: YDBError(.cancelled, "the registration of view '\(viewName)' was cancelled"))
    }

    /// True once the registration finished and its completion handler returned.
    public var isFinished: Bool { lock.withLock { completionReturned } }

    /// The outcome, or why it failed (`.cancelled` when cancelled); nil
    /// while it runs. Known as soon as the completion handler is called.
    public var result: Result<ViewRegistrationOutcome, YDBError>? { lock.withLock { outcome } }

    /// Waits until the registration finished and its completion handler
    /// returned; returns how the view was built, or throws why it was not
    /// (`.cancelled`, `.callbackFailed`, `.closed`, ...). From the
    /// registration's own callbacks, or on a thread holding a read-write
    /// transaction of its database (the registration needs the write lock
    /// to finish), it throws `.misuse`: it would wait for itself.
    @discardableResult
    public func wait() throws -> ViewRegistrationOutcome {
        _ = try waitUntilFinished(milliseconds: nil)
        return try result!.get()
    }

    /// Waits at most `milliseconds` (0: just looks); true when the
    /// registration finished and its completion handler returned. Throws
    /// only `.misuse`, as `wait()` does (a look, 0, is always allowed).
    public func wait(timeoutMilliseconds milliseconds: Int) throws -> Bool {
        try waitUntilFinished(milliseconds: max(0, milliseconds))
    }

    /// `wait(timeoutMilliseconds:)`; nil waits as long as it takes.
    package func waitUntilFinished(milliseconds: Int?) throws -> Bool {
        try refuseOwnThread()
        if milliseconds == 0 {
            guard finished.wait(milliseconds: 0) else { return false }
            finished.signal()
            return true
        }
        if writeGate.isHeldByCurrentThread && !isFinished {
            throw YDBError(.misuse, "cannot wait for the registration of view '\(viewName)' while this thread holds a read-write transaction: the registration needs the write lock to finish (it would wait for itself)")
        }
        if let milliseconds {
            guard finished.wait(milliseconds: min(milliseconds, 1 << 40)) else { return false }
        } else {
            finished.wait()
        }
        finished.signal()
        return true
    }

    /// `wait()` for Swift concurrency: suspends instead of blocking.
    public var value: ViewRegistrationOutcome {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let done: Result<ViewRegistrationOutcome, YDBError>? = lock.withLock {
                    if completionReturned { return outcome }
                    continuations.append(continuation)
                    return nil
                }
                if let done { continuation.resume(with: done.mapError { $0 }) }
            }
        }
    }

    // MARK: For the engine

    /// Sets why it must stop, unless it was installed, finished or stopped already.
    func stop(because reason: YDBError) {
        lock.withLock { if !installed && outcome == nil && stopReason == nil { stopReason = reason } }
    }

    func markInstalled() { lock.withLock { installed = true } }

    /// Throws the stop reason, if any.
    func checkStop() throws {
        if let reason = lock.withLock({ stopReason }) { throw reason }
    }

    var runsOnCurrentThread: Bool {
        guard let thread = lock.withLock({ thread }) else { return false }
        return thread == currentThreadID()
    }

    private func refuseOwnThread() throws {
        if runsOnCurrentThread {
            throw YDBError(.misuse, "cannot wait for the registration of view '\(viewName)' from its own callbacks (it would wait for itself)")
        }
    }

    func started() { lock.withLock { thread = currentThreadID() } }

    /// Waits until the registration stopped using its database (`withDatabase`) or finished.
    func waitUntilDone(withDatabase: Bool) {
        let signal = withDatabase ? leftDatabase : finished
        signal.wait()
        signal.signal()
    }

    func leftTheDatabase() { leftDatabase.signal() }

    /// The population reads `rows` rows: reports 0 of 2 × rows.
    func populationBegins(rows: Int) throws {
        total = 2 * rows
        nextReport = 0
        lastReport = 0
        try tick(0)
    }

    /// Called by the population every few thousand steps: stops when asked
    /// to, and reports progress at most every 1% and every 10 ms.
    func tick(_ done: Int) throws {
        try checkStop()
        guard let progressHandler else { return }
        let now = monotonicMilliseconds()
        guard done >= nextReport, done == 0 || now - lastReport >= 10 else { return }
        nextReport = done + max(1, total / 100)
        lastReport = now
        if !progressHandler(ViewRegistrationProgress(done: min(done, max(0, total - 1)), total: total)) {
            stop(because: YDBError(.cancelled, "the registration of view '\(viewName)' was cancelled by its progress callback"))
            try checkStop()
        }
    }

    func countSlice() { catchUpSlices += 1 }

    /// Records the result, makes the last progress report (on success) and
    /// calls the completion handler, once.
    func finish(_ result: Result<ViewRegistrationOutcome, YDBError>) {
        var result = result
        lock.withLock {
            // Stopped, then failed because of the stop (its database closed
            // under it): the stop is what happened.
            if case .failure = result, let stopReason { result = .failure(stopReason) }
            outcome = result
        }
        if case .success = result { _ = progressHandler?(ViewRegistrationProgress(done: total, total: total)) }
        completion?(result)
        progressHandler = nil
        completion = nil
        let waiting = lock.withLock {
            completionReturned = true
            defer { continuations.removeAll() }
            return continuations
        }
        finished.signal()
        for continuation in waiting { continuation.resume(with: result.mapError { $0 }) }
    }
}

/// The asynchronous registrations of one database still running, by name,
/// and the row changes commits record for those past their first step.
///
/// Lock order: a commit records while holding the database's state lock,
/// so nothing here takes that lock.
final class PendingRegistrations: CommitFollower, @unchecked Sendable {   // guarded by `lock`
    private let lock = Mutex()
    private var running: [ObjectIdentifier: ViewRegistrationTask] = [:]
    /// The latest registration of each name.
    private var byName: [Name: ViewRegistrationTask] = [:]
    private var recording: [ViewRegistrationTask] = []
    /// Storage ids of views installed but not stored yet (see `storeRows`).
    private var storing: Set<Int64> = []
    private var closed = false
    /// The registrations running when the database closed (`stop`).
    private var stopped: [ViewRegistrationTask] = []

    init() {}

    /// The registrations of a closed database: none, and none may start.
    static var ofClosedDatabase: PendingRegistrations {
        let registrations = PendingRegistrations()
        registrations.stop()
        return registrations
    }

    /// Adds a registration; a pending one of the same name is cancelled.
    func add(_ task: ViewRegistrationTask) throws {
        let superseded: ViewRegistrationTask? = try lock.withLock {
            if closed { throw YDBError(.closed, "database is closed") }
            running[ObjectIdentifier(task)] = task
            defer { byName[Name(task.viewName)] = task }
            return byName[Name(task.viewName)]
        }
        superseded?.stop(because: Self.superseded(task.viewName, by: "a later registration"))
    }

    /// A registration or unregistration of `name` cancels its pending one.
    func supersede(_ name: String, by what: String) {
        lock.withLock { byName[Name(name)] }?.stop(because: Self.superseded(name, by: what))
    }

    private static func superseded(_ name: String, by what: String) -> YDBError {
        YDBError(.cancelled, "the registration of view '\(name)' was cancelled by \(what) of the same name")
    }

    /// The registration finished: forgotten, and no longer recorded for.
    func remove(_ task: ViewRegistrationTask) {
        lock.withLock {
            running[ObjectIdentifier(task)] = nil
            if byName[Name(task.viewName)] === task { byName[Name(task.viewName)] = nil }
            recording.removeAll { $0 === task }
            task.recorded.removeAll()
        }
    }

    /// The database closes: every registration still running is told to
    /// stop; no new one may start.
    func stop() {
        let tasks = lock.withLock {
            closed = true
            stopped = Array(running.values)
            return stopped
        }
        for task in tasks {
            task.stop(because: YDBError(.closed, "the registration of view '\(task.viewName)' was cancelled because its database was closed"))
        }
    }

    /// Each registration stops at its next step and closes its own
    /// connection. Not waited for from its own thread (a callback of it
    /// closing the database).
    func waitUntilStopped() {
        let tasks = lock.withLock { stopped }
        for task in tasks where !task.runsOnCurrentThread { task.waitUntilDone(withDatabase: true) }
    }

    func beginStoring(_ id: Int64) { lock.withLock { _ = storing.insert(id) } }
    func endStoring(_ id: Int64) { lock.withLock { _ = storing.remove(id) } }
    /// Whether the view stored under `id` is installed but not stored yet
    /// (the debug invariant check compares the others with their storage).
    func isStoring(_ id: Int64) -> Bool { lock.withLock { storing.contains(id) } }

    // MARK: Recording row changes

    /// From now on every commit records its row changes for `task`. Called
    /// under the write lock, so every read-write transaction that commits
    /// after it also began after it (and kept its rows by id).
    func startRecording(_ task: ViewRegistrationTask) {
        lock.withLock { recording.append(task) }
    }

    /// Whether a read-write transaction beginning now must keep its rows by id.
    var isRecording: Bool { lock.withLock { !recording.isEmpty } }

    /// Called by a commit, with the database's state lock held.
    func record(_ rows: [Int64: RowChangeKind], snapshot: UInt64) {
        lock.withLock {
            for task in recording { task.recorded.append((snapshot, rows)) }
        }
    }

    /// How many row changes were recorded for `task` after snapshot `after`.
    func changeCount(of task: ViewRegistrationTask, after: UInt64) -> Int {
        lock.withLock { task.recorded.reduce(0) { $0 + ($1.snapshot > after ? $1.rows.count : 0) } }
    }

    /// The changes recorded for `task` by the commits after `after` up to
    /// `through` (merged: one entry per row, every way it changed); forgets
    /// every change up to `through`. `finally`: the last take, recording stops.
    func takeChanges(of task: ViewRegistrationTask, after: UInt64, through: UInt64,
                     finally: Bool = false) -> [Int64: RowChangeKind] {
        let taken: [[Int64: RowChangeKind]] = lock.withLock {
            let count = task.recorded.prefix { $0.snapshot <= through }.count
            defer {
                task.recorded.removeFirst(count)
                if finally { recording.removeAll { $0 === task } }
            }
            return task.recorded.prefix(count).filter { $0.snapshot > after }.map(\.rows)
        }
        // Merged outside the lock: commits record under it.
        var merged: [Int64: RowChangeKind] = [:]
        for rows in taken { merged.merge(rows) { $0.union($1) } }
        return merged
    }
}

extension Database {
    /// Registers `view` under `name` in the background, like
    /// YapDatabase's `asyncRegisterExtension`, and returns at once.
    ///
    /// A thread of the registration's own populates the view from read
    /// snapshots (a chunk of rows each), without holding the write lock:
    /// other connections keep reading and committing meanwhile, and their
    /// commits' changed rows are recorded. One short read-write transaction
    /// at the end applies those changes to the new view (running its
    /// callbacks for those rows, as a commit would) and installs it; a
    /// persistent view is then stored a chunk per short write transaction.
    /// Until the install commit readers do not see the view (or see its
    /// previous definition); its notification carries the view's log, as
    /// `registerView`'s does.
    ///
    /// What needs no population (a persistent view already registered or
    /// stored with the same tag) is installed at once, on that thread too.
    ///
    /// - `progress` is called on the registration's thread at most every 1%
    ///   and 10 ms, first with 0 done, last with `done == total` once the
    ///   view is installed and stored.
    /// - `completion` is called exactly once on the registration's thread,
    ///   after the install commit (and its observers) or with the error:
    ///   a failing callback (`.callbackFailed`), `.cancelled` (`cancel()`,
    ///   or a later `registerView`, `registerViewAsync` or `unregisterView`
    ///   of the same name), `.closed` (the database closed meanwhile).
    ///   Nothing is installed then.
    ///
    /// Throws (and calls nothing) only when it cannot start: an invalid
    /// name, a closed database.
    @discardableResult
    public func registerViewAsync(
        _ view: View, name: String,
        progress: (@Sendable (ViewRegistrationProgress) -> Void)? = nil,
        completion: (@Sendable (Result<ViewRegistrationOutcome, YDBError>) -> Void)? = nil
    ) throws -> ViewRegistrationTask {
        var continuing: (@Sendable (ViewRegistrationProgress) -> Bool)?
        if let progress { continuing = { report in progress(report); return true } }
        return try registerViewAsync(view, name: name, continuing: continuing, completion: completion)
    }

    /// `registerViewAsync` whose progress handler returns false to cancel
    /// (the C layer's form).
    package func registerViewAsync(
        _ view: View, name: String,
        continuing progress: (@Sendable (ViewRegistrationProgress) -> Bool)?,
        completion: (@Sendable (Result<ViewRegistrationOutcome, YDBError>) -> Void)?,
        logsDifference: Bool = false
    ) throws -> ViewRegistrationTask {
        let task = ViewRegistrationTask(view: view, name: name, writeGate: writeGate, progress: progress,
                                        completion: completion)
        task.logsDifference = logsDifference
        do {
            try validateName(name, "view name")
            try checkOpen()
            try registrations.add(task)
            guard startThread({ self.runRegistration(task) }) else {
                registrations.remove(task)
                task.leftTheDatabase()   // a close() that saw it must not wait for it
                throw YDBError(.error, "cannot start a thread for the registration of view '\(name)'")
            }
            return task
        } catch {
            view.releaseHook?.release()
            throw error
        }
    }
}
