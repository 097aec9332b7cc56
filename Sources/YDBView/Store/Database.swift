#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Everything a reader needs to see the database as of one snapshot, besides
/// SQLite's own snapshot: the registered extensions (views) and their contents.
struct PublishedState {
    var snapshot: UInt64
    var extensions: ExtensionRegistry
}

/// A key/value database on SQLite (WAL mode) with registered views.
///
/// Thread-safe. Open connections to read and write; each connection sees one
/// snapshot per transaction, and read-write transactions are serialised.
///
/// ```swift
/// let database = try Database(path: nil)          // private temporary database
/// let connection = try database.newConnection()
/// try connection.readWrite { try $0.setObject(Array("hi".utf8), forKey: "k", inCollection: "c", metadata: nil) }
/// ```
///
/// `Sendable`: every mutable field is guarded by `stateLock` (published state,
/// notifications, observers, connections), the write gate or the
/// checkpointer's own lock; the rest is immutable after `init`.
public final class Database: @unchecked Sendable {
    /// The database file. For a temporary database, a file in a private
    /// directory that is deleted on `close()`.
    public let path: String
    private let temporaryDirectory: String?
    /// From `YDBVIEW_MAX_VALUE_BYTES`, read once at open: lowers SQLite's
    /// length limit on every handle of this database (a testing and
    /// hardening knob; SQLite's own limit is about 1 GB).
    let maxValueBytes: Int32?
    /// One Database per database file in exclusive mode (the second open
    /// fails with `.busy`); in shared mode, none in exclusive mode.
    let fileLock: DatabaseFileLock
    /// How the file was opened.
    public let options: DatabaseOptions
    /// Shared mode: several processes write the file, and each brings its
    /// views forward by the others' commits (`Database+OtherProcesses.swift`).
    var isMultiProcess: Bool { options.multiProcess }
    /// Shared mode: one thread at a time replays other processes'
    /// commits, on `replayConnection`; `replayingThread` is that thread
    /// (a callback it runs that begins a read elsewhere must not wait for it).
    let replayLock = Mutex()
    nonisolated(unsafe) var replayingThread: pthread_t?
    var replayConnection: Connection?
    /// Shared mode: the connection other SQLite clients' writes are folded
    /// into the log on (`foldExternalChanges`), guarded by `foldLock`.
    let foldLock = Mutex()
    var foldConnection: Connection?
    /// Shared mode: wakes when another process commits (nil until started,
    /// and in exclusive mode).
    var otherProcessWatcher: OtherProcessWatcher?
    /// Shared mode: replays since the write-ahead log was last measured
    /// (`measureTheLogNowAndThen`); guarded by `stateLock`.
    var replaysSinceLogMeasured = 0
    /// Shared mode: extensions dropped while replaying, and why
    /// (`replayFailure(ofView:)`); guarded by `stateLock`.
    var replayFailures: [Name: String] = [:]
    /// Shared mode: the commit log keeps this many entries at most
    /// (`commitLogLimit`); guarded by `stateLock`.
    var commitLogKept: UInt64 = 10_000

    /// One writer at a time; the thread holding it cannot wait for it again.
    let writeGate = WriteGate()
    /// Guards everything below, and makes "begin a read" atomic with "commit".
    let stateLock = Mutex()
    var published: PublishedState
    var notifications: [CommitNotification] = []
    private var observers: [Int: @Sendable (CommitNotification) -> Void] = [:]
    private var nextObserverToken = 1
    /// Run once when the database closes, before its connections close
    /// (`whenClosing`): async iterations end instead of waiting forever.
    private var closingHandlers = ClosingHandlers()
    /// Per open connection, the snapshot it last saw: notifications newer than
    /// the oldest of these are kept so a long-lived read can catch up.
    var connections: [ObjectIdentifier: TrackedConnection] = [:]
    /// How many of them have a wakeup descriptor: commits skip looking
    /// for them while there are none.
    var wakeups = 0
    private var commitsBehindLimit: UInt64 = 1000
    /// What `defaultWriteTimeout` holds, in milliseconds (nil: no limit).
    private var writeTimeoutDefault: Int? = 5000
    /// Commits whose observers have not been called yet, oldest first, and
    /// whether some thread is calling them now (see `deliverNotifications`).
    var undelivered: [Delivery] = []
    /// The observers are named by token and looked up as each is called,
    /// so one removed meanwhile is not called.
    typealias Delivery = (notification: CommitNotification, observers: [Int])
    private var delivering = false
    var closed = false
    /// Copies the write-ahead log back into the file off the commit path.
    let checkpointer: Checkpointer
    /// Whether some stored extension that is not registered may still be
    /// marked fresh: the first commit that changes rows then marks it stale.
    /// Read and written only by the write transaction (under `writeGate`).
    var storedExtensionsMayMissCommits = false
    /// The largest row id ever used: a new row gets the next one. Read and
    /// written only by the write transaction (under `writeGate`), like the
    /// two below; stored by a commit whose deletions leave the table's own
    /// largest id below it (`Schema.writeLargestRowid`).
    var largestRowid: Int64 = 0
    /// The largest row id `ydb_meta` holds.
    var storedLargestRowid: Int64 = 0
    /// The ceiling on snapshot numbers stored in `ydb_meta`
    /// (`Schema.reserveSnapshots`).
    var snapshotsReservedThrough: UInt64 = 0
    /// The connections registration work runs on, each used by one call at
    /// a time: `idleConnections` are free, `internalConnections` are all of
    /// them (closed with the database). Calls on several threads at once
    /// each take one and wait their turn at the write lock, as any writers.
    private var internalConnections: [Connection] = []
    private var idleConnections: [Connection] = []
    /// Work that follows every commit's row changes (`CommitFollower`), one
    /// of each kind, made on first use; guarded by `stateLock`.
    private var followers: [ObjectIdentifier: any CommitFollower] = [:]

    /// Opens (creating if needed) the database at `path`; nil opens a private
    /// temporary database that is deleted on `close()`.
    public convenience init(path: String?) throws {
        try self.init(path: path, options: DatabaseOptions())
    }

    /// Opens (creating if needed) the database at `path` as `options` say
    /// (`DatabaseOptions.multiProcess`: shared mode). A temporary database
    /// (nil) is private to this object in either mode.
    public init(path: String?, options: DatabaseOptions) throws {
        self.options = options
        if let path {
            try validateName(path, "database path")
            // SQLite reads "" as "a new private temporary database per handle",
            // which cannot be shared between connections.
            if path.isEmpty || path == ":memory:" {
                throw YDBError(.invalidArgument, "database path must name a file (use nil for a temporary database)")
            }
            self.path = path
            temporaryDirectory = nil
        } else {
            let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
            let template = (directory.hasSuffix("/") ? directory : directory + "/") + "ydbview-XXXXXX"
            var bytes = Array(template.utf8CString)
            guard let made = mkdtemp(&bytes) else {
                throw YDBError(.error, "cannot create a temporary directory")
            }
            temporaryDirectory = String(cString: made)
            self.path = temporaryDirectory! + "/database.sqlite"
        }
        let gate = writeGate
        checkpointer = Checkpointer(path: self.path) { body in
            // A short wait: a transaction left open must not stall the
            // checkpointer (or `close()`, which waits for it).
            guard gate.enter(waitingAtMost: 50) else { return }
            body()
            gate.leave()
        }
        maxValueBytes = getenv("YDBVIEW_MAX_VALUE_BYTES")
            .flatMap { Int32(String(cString: $0)) }.flatMap { $0 > 0 ? $0 : nil }
        fileLock = try DatabaseFileLock(path: self.path, shared: options.multiProcess)
        do {
            // Shared mode: this process's slot is claimed before the log
            // is read, so that no writer trims what it is about to need.
            let watcher = options.multiProcess ? try OtherProcessWatcher(databasePath: self.path) : nil
            otherProcessWatcher = watcher
            let handle = try SQLiteHandle(path: self.path, maxValueBytes: maxValueBytes)
            defer { handle.close() }
            try handle.execute("PRAGMA journal_mode = WAL")   // stored in the file: every handle gets it
            let stored = try Schema.prepare(handle, shared: options.multiProcess)
            watcher?.recordSeen(stored.snapshot)
            published = PublishedState(snapshot: stored.snapshot, extensions: ExtensionRegistry())
            snapshotsReservedThrough = stored.snapshot
            largestRowid = stored.largestRowid
            storedLargestRowid = stored.storedLargestRowid
            storedExtensionsMayMissCommits = try Schema.anyStoredExtensionFresh(handle)
        } catch {
            fileLock.databaseDidClose()   // init failed: deinit will not run
            throw error
        }
        checkpointer.writeDeferred = { [weak self] in self?.writeDeferred() }
        if options.multiProcess {
            do {
                try startWatchingOtherProcesses()
            } catch {
                close()
                throw error
            }
        }
    }

    deinit { close() }

    /// Closes the database and every connection of it: open transactions end
    /// (read-write ones roll back) and report `.closed` ("its database was
    /// closed") when used again; a temporary database's files are deleted.
    /// First it writes what extensions deferred (the changes persistent
    /// views still keep in memory, `UnstoredRows`): a process that ends
    /// without closing leaves those views stale. Idempotent.
    public func close() {
        writeDeferred(closing: true)
        // What the database held is released after the lock: an observer or
        // a view callback may hold the last reference to a connection, whose
        // deinit closes it and takes `stateLock` again.
        var released: [Any] = []
        var definitions: [ReleaseHook] = []
        var open: [Connection] = []
        var registrationConnections: [Connection] = []
        var following: [any CommitFollower] = []
        var closing: [@Sendable () -> Void] = []
        let wasOpen: Bool = stateLock.withLock {
            guard !closed else { return false }
            closed = true
            closing = closingHandlers.take()
            open = connections.values.compactMap(\.connection)
            released = [notifications, observers, published.extensions, undelivered]
            definitions = published.extensions.names.compactMap { published.extensions[$0]?.releaseHook }
            following = Array(followers.values)
            notifications.removeAll()
            observers.removeAll()
            published.extensions = ExtensionRegistry()
            undelivered.removeAll()
            registrationConnections = internalConnections
            internalConnections.removeAll()
            idleConnections.removeAll()
            return true
        }
        guard wasOpen else { return }
        stopWatchingOtherProcesses()
        for handler in closing { handler() }
        released.removeAll()
        for follower in following { follower.stop() }
        let reason = YDBError(.closed, "the transaction ended because its database was closed")
        for connection in open { connection.close(because: reason) }
        open.removeAll()
        // Background work (asynchronous registrations) stops at its next
        // step. Not waited for by a thread holding the write lock: the work
        // may be waiting for it.
        if !writeGate.isHeldByCurrentThread {
            for follower in following { follower.waitUntilStopped() }
        }
        checkpointer.stop()
        for connection in registrationConnections { connection.close(because: reason) }
        registrationConnections.removeAll()
        // Last: a write still running on another thread may be calling them
        // until its connection closed above.
        for definition in definitions { definition.release() }
        // Released once the connections still open have closed their handles.
        fileLock.databaseDidClose()
        if let temporaryDirectory {
            for suffix in ["", "-wal", "-shm", "-journal", "-ydbview"] {
                unlink(path + suffix)
            }
            rmdir(temporaryDirectory)
        }
    }

    /// Writes what extensions deferred (`DeferredWrites`: the rows views'
    /// storage tables still miss), so that they load as stored when next
    /// registered: at close, and on the checkpointer's thread once commits
    /// pause. In shared mode, `closing` also writes the images extensions
    /// ask for (`RegisteredExtension.sharedImage`: persistent views, whole,
    /// as of the latest snapshot). Best effort, as a checkpoint is: skipped
    /// when a write stays open or the write fails (those views then
    /// repopulate at their next registration, as after a crash).
    private func writeDeferred(closing: Bool = false) {
        guard !isClosed, !writeGate.isHeldByCurrentThread, writeGate.enter(waitingAtMost: 100) else { return }
        defer { writeGate.leave() }
        var owing: [any DeferredWrites] = []
        stateLock.withLock {
            guard !closed else { return }
            let extensions = published.extensions, snapshot = published.snapshot
            extensions.forEachName { name in
                if let deferred = extensions[name]?.deferredWrites, deferred.owesWrites { owing.append(deferred) }
                if closing && isMultiProcess, let image = extensions[name]?.sharedImage(at: snapshot) {
                    owing.append(image)
                }
            }
        }
        guard !owing.isEmpty, let handle = try? SQLiteHandle(path: path, maxValueBytes: maxValueBytes) else { return }
        defer { handle.close() }
        do {
            try handle.execute("BEGIN IMMEDIATE")
            for deferred in owing { try deferred.write(handle) }
            try handle.execute("COMMIT")
        } catch {
            try? handle.execute("ROLLBACK")
            return
        }
        for deferred in owing { deferred.written() }
    }

    public var isClosed: Bool { stateLock.withLock { closed } }

    /// The extensions registered as of the latest commit (empty once
    /// closed): read without a transaction, so never refused by one under way.
    var latestExtensions: ExtensionRegistry { stateLock.withLock { published.extensions } }

    /// The database's follower of type `kind`, made on first use (nil once
    /// closed).
    func follower<Follower: CommitFollower>(_ kind: Follower.Type) -> Follower? {
        stateLock.withLock {
            guard !closed else { return nil }
            if let existing = followers[ObjectIdentifier(kind)] { return existing as? Follower }
            let made = Follower()
            followers[ObjectIdentifier(kind)] = made
            return made
        }
    }

    /// Whether some follower wants this write's row changes by row id.
    var followersRecord: Bool {
        stateLock.withLock { followers.values.contains { $0.isRecording } }
    }

    /// The latest committed snapshot number. Numbers grow by one with each
    /// commit that changes something and never repeat, but a reopened
    /// database may continue from a larger one (`Schema.reserveSnapshots`).
    public var snapshot: UInt64 { stateLock.withLock { published.snapshot } }

    /// A new connection (its own SQLite handle).
    public func newConnection() throws -> Connection {
        try checkOpen()
        return try Connection(database: self)
    }

    /// How many commits a connection may fall behind before the database
    /// stops keeping its notifications and releases its long-lived read
    /// (which would otherwise keep the write-ahead log from being reused).
    /// Its next `beginLongLivedReadTransaction` throws `.reloadRequired`.
    /// Default 1,000; at least 1 (0 is taken as 1); `UInt64.max`: never.
    public var maxCommitsBehind: UInt64 {
        get { stateLock.withLock { commitsBehindLimit } }
        set { stateLock.withLock { commitsBehindLimit = max(1, newValue) } }
    }

    /// The write timeout new connections start with (`Connection.writeTimeout`),
    /// and that registering and unregistering views wait for the write lock:
    /// 5 seconds unless changed (SQLite's and Python sqlite3's busy timeout
    /// in spirit: a transaction forgotten open makes other writers fail with
    /// `.busy`, "database is locked", instead of waiting forever). nil:
    /// wait as long as it takes. Connections already open keep theirs.
    public var defaultWriteTimeout: Duration? {
        get { defaultWriteTimeoutMilliseconds.map { .milliseconds($0) } }
        set { stateLock.withLock { writeTimeoutDefault = newValue.map(saturatingMilliseconds) } }
    }

    var defaultWriteTimeoutMilliseconds: Int? { stateLock.withLock { writeTimeoutDefault } }

    /// Calls `body` after every commit that changed something, once the
    /// commit is visible and no engine lock is held. Observers see commits in
    /// snapshot order: when two threads commit at once, or an observer
    /// commits itself, the thread already calling observers calls them for
    /// the later commits too (so `body` may run on another committing thread,
    /// after that thread's `commit()` returned). Returns a token for
    /// `removeCommitObserver`.
    @discardableResult
    public func addCommitObserver(_ body: @escaping @Sendable (CommitNotification) -> Void) -> Int {
        stateLock.withLock {
            let token = nextObserverToken
            nextObserverToken += 1
            observers[token] = body
            return token
        }
    }

    /// Removes an observer: once this returns it is not called again (a
    /// call already running on another thread may finish), and the closure
    /// is released outside every engine lock. False for an unknown token.
    @discardableResult
    public func removeCommitObserver(_ token: Int) -> Bool {
        let removed = stateLock.withLock { observers.removeValue(forKey: token) }
        return removed != nil
    }

    /// Runs `handler` once, when the database closes (at once when it is
    /// closed); returns a token for `removeClosingHandler`.
    func whenClosing(_ handler: @escaping @Sendable () -> Void) -> Int {
        let token: Int? = stateLock.withLock { closed ? nil : closingHandlers.add(handler) }
        guard let token else {
            handler()
            return 0
        }
        return token
    }

    func removeClosingHandler(_ token: Int) {
        stateLock.withLock { closingHandlers.remove(token) }
    }

    func checkOpen() throws {
        if isClosed { throw YDBError(.closed, "database is closed") }
    }

    // MARK: Connection bookkeeping

    func connectionOpened(_ connection: Connection, snapshot: UInt64) {
        stateLock.withLock {
            connections[ObjectIdentifier(connection)] = TrackedConnection(connection: connection, seen: snapshot)
        }
    }

    func connectionClosed(_ connection: Connection) {
        stateLock.withLock {
            if connections.removeValue(forKey: ObjectIdentifier(connection))?.wakeup != nil { wakeups -= 1 }
            pruneNotifications()
        }
    }

    /// Commits a read-write transaction's SQLite work and publishes its state
    /// and notification atomically with respect to readers, and queues the
    /// notification for the observers. The caller calls `afterCommit()` once
    /// it has released its locks, so an observer may itself read or write.
    /// `rowChanges` (the rows it changed, by row id) is recorded for the
    /// asynchronous registrations under way, atomically with publishing.
    func commit(on handle: SQLiteHandle, by connection: Connection, state: PublishedState,
                notification: CommitNotification?, rowChanges: [Int64: RowChangeKind]? = nil) throws {
        try stateLock.withLock {
            guard !closed else { throw YDBError(.closed, "database is closed") }
            try handle.run("COMMIT")
            // The writer has seen its own commit: it is not "skipped" for it.
            if connection.tracksNotifications {
                let id = ObjectIdentifier(connection)
                connections[id] = (connections[id] ?? TrackedConnection(connection: connection, seen: state.snapshot))
                    .caughtUp(to: state.snapshot)
            }
            publish(state, notification, rowChanges: rowChanges)
        }
    }

    /// Publishes other processes' commits, replayed (shared mode): their
    /// notifications in order, then `state`, as one step.
    func publishReplayed(state: PublishedState, notifications replayed: [CommitNotification],
                         rowChanges: [Int64: RowChangeKind]?) {
        stateLock.withLock {
            guard !closed else { return }
            for notification in replayed.dropLast() {
                notifications.append(notification)
                if !observers.isEmpty { undelivered.append((notification, observers.keys.sorted())) }
            }
            publish(state, replayed.last, rowChanges: rowChanges)
        }
    }

    /// Makes `state` the latest and queues its notification, for readers,
    /// wakeup descriptors, asynchronous registrations and observers. Under
    /// `stateLock`.
    private func publish(_ state: PublishedState, _ notification: CommitNotification?,
                         rowChanges: [Int64: RowChangeKind]?) {
            published = state
            otherProcessWatcher?.recordSeen(state.snapshot)
            if let rowChanges, !rowChanges.isEmpty {
                for follower in followers.values { follower.record(rowChanges, snapshot: state.snapshot) }
            }
            if wakeups > 0 {
                for tracked in connections.values where tracked.seen < state.snapshot { tracked.wakeup?.set() }
            }
            guard let notification else { return }
            notifications.append(notification)
            pruneNotifications()
            if !observers.isEmpty {
                undelivered.append((notification, observers.keys.sorted()))
            }
    }

    /// Run by a committing thread once it holds no lock: releases the
    /// long-lived reads of connections that fell too far behind, then calls
    /// the observers of every queued commit.
    func afterCommit() {
        if isMultiProcess { announceCommit() }
        releaseLaggardsAndDeliver()
    }

    /// Releases the long-lived reads of connections that fell too far
    /// behind, then calls the observers of every queued commit.
    func releaseLaggardsAndDeliver() {
        let laggards: [Connection] = stateLock.withLock {
            connections.values.compactMap { $0.behind ? $0.connection : nil }
        }
        for connection in laggards { connection.releaseLaggingRead() }
        deliverNotifications()
    }

    /// Calls observers commit by commit, oldest first. Only one thread
    /// delivers at a time; a commit made meanwhile (by another thread, or by
    /// an observer) is queued and delivered by that thread's loop, so every
    /// observer sees the commits in snapshot order.
    func deliverNotifications() {
        let mine: Bool = stateLock.withLock {
            guard !delivering else { return false }
            delivering = true
            return true
        }
        guard mine else { return }
        while let delivery = stateLock.withLock({ () -> Delivery? in
            guard !undelivered.isEmpty else {
                delivering = false
                return nil
            }
            return undelivered.removeFirst()
        }) {
            for token in delivery.observers {
                // (Keep `@Sendable` in this spelling: a plain closure type
                // here fails at run time.)
                let observer: (@Sendable (CommitNotification) -> Void)? = stateLock.withLock { observers[token] }
                observer?(delivery.notification)
            }
        }
    }

    /// Drops the notifications no tracked connection still needs. A
    /// connection more than `maxCommitsBehind` commits behind is marked
    /// behind and no longer holds them back.
    func pruneNotifications() {
        var oldest = published.snapshot
        for (id, tracked) in connections {
            if tracked.connection == nil {
                if connections.removeValue(forKey: id)?.wakeup != nil { wakeups -= 1 }
            } else if !tracked.behind && published.snapshot - tracked.seen > commitsBehindLimit {
                // (A distance, not `seen + limit`: any limit up to UInt64.max is valid.)
                connections[id]?.behind = true
            } else if !tracked.behind {
                oldest = min(oldest, tracked.seen)
            }
        }
        notifications.removeFirst(firstNotification(after: oldest))
    }

    /// Index of the first kept notification newer than `snapshot`: they are
    /// kept in snapshot order, so this is a binary search.
    func firstNotification(after snapshot: UInt64) -> Int {
        var low = 0, high = notifications.count
        while low < high {
            let mid = (low + high) / 2
            if notifications[mid].snapshot <= snapshot { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Runs `body` on an internal connection of its own (registering and
    /// unregistering views), which waits for the write lock as long as
    /// `defaultWriteTimeout` says. A thread holding the write lock is
    /// refused (`.misuse`) before it takes one: it would wait for itself.
    func withInternalConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        if writeGate.isHeldByCurrentThread {
            throw YDBError(.misuse, "this thread holds a read-write transaction: registering or unregistering a view now would wait for itself (end the transaction first)")
        }
        let (idle, timeout): (Connection?, Int?) = try stateLock.withLock {
            guard !closed else { throw YDBError(.closed, "database is closed") }
            return (idleConnections.popLast(), writeTimeoutDefault)
        }
        // Made outside the lock: opening a connection reads the snapshot.
        let connection = try idle ?? Connection(database: self, tracksNotifications: false)
        if idle == nil {
            let kept = stateLock.withLock { () -> Bool in
                if !closed { internalConnections.append(connection) }
                return !closed
            }
            if !kept {
                connection.close()
                throw YDBError(.closed, "database is closed")
            }
        }
        defer {
            stateLock.withLock { if !closed { idleConnections.append(connection) } }
        }
        connection.writeTimeout = timeout.map { .milliseconds($0) }
        return try body(connection)
    }
}

/// What the database knows of one open connection.
struct TrackedConnection {
    weak var connection: Connection?
    /// The snapshot of the connection's last read or commit.
    var seen: UInt64
    /// More than `maxCommitsBehind` commits behind: its notifications are
    /// no longer kept, and its long-lived read is released.
    var behind = false
    /// Readable while `seen` is older than the latest commit (made on
    /// first use; closed with the connection).
    var wakeup: WakeupDescriptor?

    /// The connection began a transaction on `snapshot`, the latest.
    func caughtUp(to snapshot: UInt64) -> TrackedConnection {
        wakeup?.clear()
        return TrackedConnection(connection: connection, seen: snapshot, wakeup: wakeup)
    }
}
