import Foundation

/// Everything a reader needs to see the database as of one snapshot, besides
/// SQLite's own snapshot: the registered views and their contents.
struct PublishedState {
    var snapshot: UInt64
    var views: [String: ViewInstance]
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
public final class Database {
    /// The database file. For a temporary database, a file in a private
    /// directory that is deleted on `close()`.
    public let path: String
    private let temporaryDirectory: String?
    /// From `YDBVIEW_MAX_VALUE_BYTES`, read once at open: lowers SQLite's
    /// length limit on every handle of this database (a testing and
    /// hardening knob; SQLite's own limit is about 1 GB).
    let maxValueBytes: Int32?
    /// One Database per database file; the second open fails with `.busy`.
    let fileLock: DatabaseFileLock

    /// One writer at a time; the thread holding it cannot wait for it again.
    let writeGate = WriteGate()
    /// Guards everything below, and makes "begin a read" atomic with "commit".
    private let stateLock = NSLock()
    private var published: PublishedState
    private var notifications: [CommitNotification] = []
    private var observers: [Int: (CommitNotification) -> Void] = [:]
    private var nextObserverToken = 1
    /// Per open connection, the snapshot it last saw: notifications newer than
    /// the oldest of these are kept so a long-lived read can catch up.
    private var connectionSnapshots: [ObjectIdentifier: UInt64] = [:]
    private var closed = false
    /// Runs view registration and other internal read-write work.
    private var internalConnection: Connection?

    /// Opens (creating if needed) the database at `path`; nil opens a private
    /// temporary database that is deleted on `close()`.
    public init(path: String?) throws {
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
            let template = NSTemporaryDirectory() + "ydbview-XXXXXX"
            var bytes = Array(template.utf8CString)
            guard let made = mkdtemp(&bytes) else {
                throw YDBError(.error, "cannot create a temporary directory")
            }
            temporaryDirectory = String(cString: made)
            self.path = temporaryDirectory! + "/database.sqlite"
        }
        maxValueBytes = getenv("YDBVIEW_MAX_VALUE_BYTES")
            .flatMap { Int32(String(cString: $0)) }.flatMap { $0 > 0 ? $0 : nil }
        fileLock = try DatabaseFileLock(path: self.path)
        do {
            let handle = try SQLiteHandle(path: self.path, maxValueBytes: maxValueBytes)
            defer { handle.close() }
            try handle.execute("PRAGMA journal_mode = WAL")   // stored in the file: every handle gets it
            published = PublishedState(snapshot: try Schema.prepare(handle), views: [:])
        } catch {
            fileLock.databaseDidClose()   // init failed: deinit will not run
            throw error
        }
    }

    deinit { close() }

    /// Closes the database: connections stop working, a temporary database's
    /// files are deleted. Idempotent.
    public func close() {
        let connection: Connection? = stateLock.withLock {
            guard !closed else { return nil }
            closed = true
            notifications.removeAll()
            observers.removeAll()
            published.views.removeAll()
            defer { internalConnection = nil }
            return internalConnection
        }
        connection?.close()
        // Released once the connections still open have closed their handles.
        fileLock.databaseDidClose()
        if let temporaryDirectory {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                unlink(path + suffix)
            }
            rmdir(temporaryDirectory)
        }
    }

    public var isClosed: Bool { stateLock.withLock { closed } }

    /// The latest committed snapshot.
    public var snapshot: UInt64 { stateLock.withLock { published.snapshot } }

    /// A new connection (its own SQLite handle).
    public func newConnection() throws -> Connection {
        try checkOpen()
        return try Connection(database: self)
    }

    /// Calls `body` after every commit that changed something, on the
    /// committing thread, after the commit is visible. Returns a token for
    /// `removeCommitObserver`.
    @discardableResult
    public func addCommitObserver(_ body: @escaping (CommitNotification) -> Void) -> Int {
        stateLock.withLock {
            let token = nextObserverToken
            nextObserverToken += 1
            observers[token] = body
            return token
        }
    }

    public func removeCommitObserver(_ token: Int) {
        _ = stateLock.withLock { observers.removeValue(forKey: token) }
    }

    func checkOpen() throws {
        if isClosed { throw YDBError(.closed, "database is closed") }
    }

    // MARK: Connection bookkeeping

    func connectionOpened(_ connection: Connection, snapshot: UInt64) {
        stateLock.withLock { connectionSnapshots[ObjectIdentifier(connection)] = snapshot }
    }

    func connectionClosed(_ connection: Connection) {
        stateLock.withLock {
            connectionSnapshots.removeValue(forKey: ObjectIdentifier(connection))
            pruneNotifications()
        }
    }

    /// Begins SQLite's read snapshot and captures the matching published
    /// state in one step, so no commit can fall between the two.
    /// With `collectSkipped` (a long-lived read), also returns the
    /// notifications of the commits this connection had not seen.
    func beginSnapshot(on handle: SQLiteHandle, for connection: Connection, immediate: Bool = false,
                       collectSkipped: Bool = false) throws -> (PublishedState, [CommitNotification]) {
        try stateLock.withLock {
            guard !closed else { throw YDBError(.closed, "database is closed") }
            try handle.execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
            do {
                let stored = try Schema.readSnapshot(handle)
                guard stored == published.snapshot else {
                    throw YDBError(.error, "the database file was changed by another process (snapshot \(stored), expected \(published.snapshot))")
                }
            } catch {
                try? handle.execute("ROLLBACK")
                throw error
            }
            guard connection.tracksNotifications else { return (published, []) }
            let id = ObjectIdentifier(connection)
            let seen = connectionSnapshots[id] ?? published.snapshot
            let skipped = collectSkipped ? Array(notifications[firstNotification(after: seen)...]) : []
            connectionSnapshots[id] = published.snapshot
            pruneNotifications()
            return (published, skipped)
        }
    }

    /// Commits a read-write transaction's SQLite work and publishes its state
    /// and notification atomically with respect to readers.
    /// Returns the observers to call; the caller calls them once it has
    /// released its locks, so an observer may itself read or write.
    func commit(on handle: SQLiteHandle, by connection: Connection, state: PublishedState,
                notification: CommitNotification?) throws -> [(CommitNotification) -> Void] {
        try stateLock.withLock {
            guard !closed else { throw YDBError(.closed, "database is closed") }
            try handle.execute("COMMIT")
            published = state
            // The writer has seen its own commit: it is not "skipped" for it.
            if connection.tracksNotifications {
                connectionSnapshots[ObjectIdentifier(connection)] = state.snapshot
            }
            guard let notification else { return [] }
            notifications.append(notification)
            pruneNotifications()
            return observers.keys.sorted().map { observers[$0]! }
        }
    }

    private func pruneNotifications() {
        let oldest = connectionSnapshots.values.min() ?? published.snapshot
        notifications.removeFirst(firstNotification(after: oldest))
    }

    /// Index of the first kept notification newer than `snapshot`: they are
    /// kept in snapshot order, so this is a binary search.
    private func firstNotification(after snapshot: UInt64) -> Int {
        var low = 0, high = notifications.count
        while low < high {
            let mid = (low + high) / 2
            if notifications[mid].snapshot <= snapshot { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The connection used for registering views.
    func withInternalConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        let existing: Connection? = try stateLock.withLock {
            guard !closed else { throw YDBError(.closed, "database is closed") }
            return internalConnection
        }
        if let existing { return try body(existing) }
        // Created outside the lock: opening a connection reads the snapshot.
        let made = try Connection(database: self, tracksNotifications: false)
        let connection: Connection = stateLock.withLock {
            if let raced = internalConnection { return raced }
            internalConnection = made
            return made
        }
        return try body(connection)
    }
}
