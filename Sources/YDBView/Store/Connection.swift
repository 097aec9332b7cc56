#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One SQLite handle onto a `Database`, running one transaction at a time.
///
/// Calls on a connection (and on its transactions) are serialised by the
/// connection; use one connection per thread for parallelism.
///
/// ```swift
/// let value = try connection.read { try $0.object(forKey: "k", inCollection: "c") }
/// let skipped = try connection.beginLongLivedReadTransaction()   // freeze, or catch up
/// ```
///
/// `Sendable`: every call on it and its transactions is serialised by its
/// recursive `lock`, so any thread may use it (one at a time).
public final class Connection: @unchecked Sendable {
    public let database: Database
    let handle: SQLiteHandle
    /// Serialises every call made through this connection or its transactions.
    let lock = Mutex(recursive: true)
    /// False only for the database's internal connection, which must not
    /// hold back the pruning of commit notifications.
    let tracksNotifications: Bool

    private(set) var activeTransaction: ReadTransaction?
    /// A thread is waiting for the write lock to begin a read-write
    /// transaction on this connection. It waits without holding `lock`,
    /// so that other threads get `.misuse` at once instead of waiting for
    /// this connection behind it (which could wait for each other forever).
    private var beginningWrite = false
    /// How long `beginReadWriteTransaction` waits for the write lock, in
    /// milliseconds (nil: as long as it takes). Guarded by `lock`.
    private var writeTimeoutMilliseconds: Int?
    /// The rows this connection's read transactions read through views
    /// lately (the internal connection keeps none).
    let rowCache: RowCache
    /// Whether this connection's last `setObject` inserted a row (rather
    /// than replacing one): the next one tries that first.
    var lastSetInserted = false
    /// While in a long-lived read transaction: the frozen state.
    private var longLivedState: PublishedState?
    private var lastSnapshot: UInt64
    private var closed = false
    /// The long-lived read fell too far behind and its SQLite read was
    /// released (`releaseLaggingRead`): reads fail until it catches up.
    private var released = false
    /// User code this connection is running now, innermost last, with the
    /// thread it runs on (see `ReentryRule`).
    private var userCode: [(thread: pthread_t, kind: UserCode)] = []
    /// `end()`, `rollback()` or `close()` asked for from inside user code:
    /// done once the call running that code returns.
    private var deferredEnds: [() -> Void] = []
    /// Run once when the connection closes (`whenClosing`).
    private var closingHandlers = ClosingHandlers()

    init(database: Database, tracksNotifications: Bool = true) throws {
        self.database = database
        self.tracksNotifications = tracksNotifications
        handle = try SQLiteHandle(path: database.path, maxValueBytes: database.maxValueBytes)
        database.fileLock.handleOpened()
        handle.onWALCommit(database.checkpointer)
        lastSnapshot = database.snapshot
        writeTimeoutMilliseconds = database.defaultWriteTimeoutMilliseconds
        rowCache = RowCache(limit: tracksNotifications ? RowCache.defaultLimit : 0, snapshot: lastSnapshot)
        if tracksNotifications { database.connectionOpened(self, snapshot: lastSnapshot) }
    }

    deinit { close() }

    /// Ends any transaction (rolling back a read-write one) and releases the
    /// SQLite handle. Idempotent. A transaction ended this way reports
    /// `.closed` ("its connection was closed") when used again.
    ///
    /// Called from inside one of this connection's own callbacks, it takes
    /// effect when the call running that callback returns (see `ReentryRule`).
    public func close() {
        close(because: YDBError(.closed, "the transaction ended because its connection was closed"))
    }

    /// `close()`, refusing with `.misuse` from inside this connection's own
    /// callbacks instead of deferring (for callers that can report it).
    package func closeRefusingCallbacks() throws {
        try checkReentry(.end("close its connection"))
        close()
    }

    func close(because reason: YDBError) {
        if deferInsideUserCode({ self.close(because: reason) }) { return }
        // The open transaction ends outside the lock, so that what its end
        // releases (view definitions: C destructors) runs outside it too.
        let open = lock.withLock { closed ? nil : activeTransaction }
        if let open { end(open, because: reason) }
        let closing: [@Sendable () -> Void] = lock.withLock {
            closed ? [] : closingHandlers.take()
        }
        for handler in closing { handler() }
        lock.withLock {
            guard !closed else { return }
            // Begun by another thread meanwhile: ended here, under the lock.
            if let transaction = activeTransaction { end(transaction, because: reason) }
            if longLivedState != nil { endLongLivedReadTransaction() }
            closed = true
            handle.close()
            database.fileLock.handleClosed()
            if tracksNotifications { database.connectionClosed(self) }
        }
    }

    private func end(_ transaction: ReadTransaction, because reason: YDBError) {
        transaction.endReason = reason
        if let write = transaction as? ReadWriteTransaction { write.rollback() } else { transaction.end() }
    }

    /// The snapshot of the current (or last) transaction or long-lived read.
    public var snapshot: UInt64 { lock.withLock { lastSnapshot } }

    /// How many rows read through views this connection keeps for its next
    /// read transactions (default 250; 0 turns the cache off). A list on
    /// screen reads the same rows after every commit: kept rows are not
    /// read from SQLite again until a commit changes them. Reads of more
    /// rows than this at once bypass the cache (a long scan neither slows
    /// down nor pushes out what is on screen), and rows over 16 KiB are
    /// never kept. See docs/behaviour.md.
    public var rowCacheLimit: Int {
        get { lock.withLock { rowCache.limit } }
        set { lock.withLock { rowCache.limit = tracksNotifications ? max(0, newValue) : 0 } }
    }

    public var isInLongLivedReadTransaction: Bool { lock.withLock { longLivedState != nil } }

    /// How long `beginReadWriteTransaction` waits for another read-write
    /// transaction (on any connection of the database) to end before it
    /// throws `.busy` ("database is locked"), naming the wait. nil waits as
    /// long as it takes; zero does not wait. Starts as the database's
    /// `defaultWriteTimeout` (5 seconds unless changed). A transaction
    /// forgotten open then fails other writers with a clear error instead
    /// of blocking them forever, as SQLite's busy timeout does.
    public var writeTimeout: Duration? {
        get { lock.withLock { writeTimeoutMilliseconds.map { .milliseconds($0) } } }
        set { lock.withLock { writeTimeoutMilliseconds = newValue.map(saturatingMilliseconds) } }
    }

    private func checkUsable() throws {
        if closed { throw YDBError(.closed, "connection is closed") }
        try database.checkOpen()
        if let active = activeTransaction {
            let kind = active is ReadWriteTransaction ? "read-write" : "read"
            throw YDBError(.misuse, "a \(kind) transaction is already active on this connection")
        }
        if beginningWrite {
            throw YDBError(.misuse, "another thread is beginning a read-write transaction on this connection (waiting for the write lock); use a connection per thread")
        }
    }

    // MARK: Transactions

    /// Begins a read transaction. End it with `end()`.
    public func beginReadTransaction() throws -> ReadTransaction {
        try lock.withLock {
            try checkUsable()
            let state: PublishedState
            if released {
                throw YDBError(.reloadRequired, "this connection's long-lived read fell more than \(database.maxCommitsBehind) commits behind and was released; call beginLongLivedReadTransaction() to move to the latest snapshot, then reload")
            }
            if let frozen = longLivedState {
                state = frozen
            } else {
                let skipped: [CommitNotification]?
                (state, skipped) = try database.beginSnapshot(on: handle, for: self, collectSkipped: rowCache.count > 0)
                rowCache.move(to: state.snapshot, through: skipped)
            }
            lastSnapshot = state.snapshot
            let transaction = ReadTransaction(connection: self, state: state)
            activeTransaction = transaction
            return transaction
        }
    }

    /// Begins a read-write transaction, waiting for any other writer to finish.
    /// End it with `commit()` or `rollback()`.
    ///
    /// The thread that began the open read-write transaction (on any
    /// connection of this database) cannot begin another until that one
    /// ends, whichever thread ends it: it would wait for itself forever, so
    /// this throws `.misuse` instead. Other threads wait as usual.
    public func beginReadWriteTransaction() throws -> ReadWriteTransaction {
        try beginReadWriteTransaction(waitingAtMost: lock.withLock { writeTimeoutMilliseconds })
    }

    /// `beginReadWriteTransaction`, waiting at most `milliseconds` for the
    /// write lock (nil: as long as it takes). The connection is reserved
    /// while it waits, but its lock is not held (see `beginningWrite`).
    func beginReadWriteTransaction(waitingAtMost milliseconds: Int?) throws -> ReadWriteTransaction {
        try lock.withLock {
            try checkUsable()
            if longLivedState != nil {
                throw YDBError(.misuse, "cannot write on a connection in a long-lived read transaction")
            }
            beginningWrite = true
        }
        do {
            try database.writeGate.enter(for: self, waitingAtMost: milliseconds)
        } catch {
            lock.withLock { beginningWrite = false }
            throw error
        }
        return try lock.withLock {
            beginningWrite = false
            do {
                // Closed (or its database) while it waited.
                if closed { throw YDBError(.closed, "connection is closed") }
                let (state, skipped) = try database.beginSnapshot(on: handle, for: self, immediate: true,
                                                                  collectSkipped: rowCache.count > 0)
                rowCache.move(to: state.snapshot, through: skipped)
                lastSnapshot = state.snapshot
                let transaction = ReadWriteTransaction(connection: self, state: state)
                activeTransaction = transaction
                return transaction
            } catch {
                database.writeGate.leave()
                throw error
            }
        }
    }

    /// Runs `body` in a read transaction.
    public func read<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        let transaction = try beginReadTransaction()
        defer { transaction.end() }
        return try body(transaction)
    }

    /// Runs `body` in a read-write transaction: commits when it returns,
    /// rolls everything back when it throws.
    public func readWrite<T>(_ body: (ReadWriteTransaction) throws -> T) throws -> T {
        let transaction = try beginReadWriteTransaction()
        let result: T
        do {
            result = try body(transaction)
        } catch {
            transaction.rollback()
            throw error
        }
        try transaction.commit()
        return result
    }

    /// Called by a transaction when it ends; releases what it held.
    func transactionEnded(_ transaction: ReadTransaction, endSQLite: Bool) {
        lock.withLock {
            guard activeTransaction === transaction else { return }
            activeTransaction = nil
            if endSQLite && longLivedState == nil { endSQLiteRead() }
        }
    }

    func writeTransactionEnded(_ transaction: ReadWriteTransaction, snapshot: UInt64) {
        lock.withLock {
            guard activeTransaction === transaction else { return }
            activeTransaction = nil
            lastSnapshot = snapshot
            database.writeGate.leave()
        }
    }

    // MARK: Long-lived read transactions

    /// Freezes the connection on the latest snapshot, or — when it is already
    /// frozen — moves it atomically to the latest snapshot. Returns the commit
    /// notifications of every commit the connection had not seen, oldest first.
    ///
    /// Throws `.reloadRequired` when the connection fell more than
    /// `Database.maxCommitsBehind` commits behind: the notifications in
    /// between were dropped. The connection is then frozen on the latest
    /// snapshot all the same; reload whatever depends on it (mappings: call
    /// `update(with:)` again).
    @discardableResult
    public func beginLongLivedReadTransaction() throws -> [CommitNotification] {
        try lock.withLock {
            if closed { throw YDBError(.closed, "connection is closed") }
            try database.checkOpen()
            if activeTransaction != nil || beginningWrite {
                throw YDBError(.misuse, "cannot begin a long-lived read transaction while a transaction is active")
            }
            if longLivedState != nil && !released { endSQLiteRead() }
            longLivedState = nil
            released = false
            // Between two reads this connection pins no part of the log: if it
            // is long, copy it back now so the new read starts on the file alone
            // and the next commit can restart the log (see `WALPolicy`).
            if database.checkpointer.isLogLong { database.checkpointer.checkpoint(on: handle) }
            let (state, skipped) = try database.beginSnapshot(on: handle, for: self, collectSkipped: true)
            rowCache.move(to: state.snapshot, through: skipped)
            longLivedState = state
            lastSnapshot = state.snapshot
            guard let skipped else {
                throw YDBError(.reloadRequired, "this connection fell more than \(database.maxCommitsBehind) commits behind: the notifications in between were dropped; it is now at snapshot \(state.snapshot): reload")
            }
            return skipped
        }
    }

    /// A file descriptor that is readable while commits exist that this
    /// connection has not caught up with, for an event loop to wait on
    /// (`poll`, epoll, GLib's `g_unix_fd_add`, Qt's `QSocketNotifier`,
    /// asyncio's `add_reader`) with no thread of its own. Beginning any
    /// transaction on the latest snapshot (a long-lived read moving
    /// forward, a read, a write) makes it unreadable again; this
    /// connection's own commits never make it readable. Owned by the
    /// connection: do not read, write or close it; it stays valid until
    /// the connection closes (remove it from the event loop first).
    ///
    /// ```swift
    /// var waiter = pollfd(fd: try connection.wakeupDescriptor(), events: Int16(POLLIN), revents: 0)
    /// while poll(&waiter, 1, -1) > 0 {
    ///     let notifications = try connection.beginLongLivedReadTransaction()
    ///     let changeset = try mappings.changes(for: notifications)
    /// }
    /// ```
    public func wakeupDescriptor() throws -> Int32 {
        try lock.withLock {
            if closed { throw YDBError(.closed, "connection is closed") }
        }
        return try database.wakeupDescriptor(for: self)
    }

    /// Runs `handler` once, when the connection closes (at once when it is
    /// closed); returns a token for `removeClosingHandler`.
    func whenClosing(_ handler: @escaping @Sendable () -> Void) -> Int {
        let token: Int? = lock.withLock { closed ? nil : closingHandlers.add(handler) }
        guard let token else {
            handler()
            return 0
        }
        return token
    }

    func removeClosingHandler(_ token: Int) {
        lock.withLock { closingHandlers.remove(token) }
    }

    public var isClosed: Bool { lock.withLock { closed } }

    /// Unfreezes the connection. No-op when it is not frozen. A read
    /// transaction still open keeps its snapshot until it ends.
    public func endLongLivedReadTransaction() {
        lock.withLock {
            guard longLivedState != nil else { return }
            longLivedState = nil
            // Otherwise `transactionEnded` ends SQLite's read with the transaction.
            if activeTransaction == nil && !released { endSQLiteRead() }
            released = false
        }
    }

    /// Called after a commit when the database marked this connection as too
    /// far behind: ends the SQLite read its long-lived read holds, so the log
    /// can be checkpointed and reused. Skipped while a transaction is open on
    /// the connection (or another thread holds its lock); tried again after
    /// the next commit.
    func releaseLaggingRead() {
        guard lock.tryLock() else { return }
        defer { lock.unlock() }
        guard !closed, longLivedState != nil, !released, activeTransaction == nil else { return }
        endSQLiteRead()
        released = true
    }

    // MARK: User code (the re-entrancy rule)

    /// Runs user code (`kind`) called by this connection on this thread.
    /// Ends asked for meanwhile (`deferInsideUserCode`) run when the
    /// outermost user code of this thread returns, outside the lock.
    func runningUserCode<T>(_ kind: UserCode, _ body: () throws -> T) rethrows -> T {
        let thread = pthread_self()
        lock.withLock { userCode.append((thread, kind)) }
        defer {
            let ready: [() -> Void] = lock.withLock {
                userCode.removeLast()
                guard !userCode.contains(where: { pthread_equal($0.thread, thread) != 0 }) else { return [] }
                defer { deferredEnds.removeAll() }
                return deferredEnds
            }
            for end in ready { end() }
        }
        return try body()
    }

    /// Why the user code this connection runs on the calling thread refuses
    /// `action`, innermost first: nested user code is held to every rule
    /// around it (an enumeration run from a view callback may not write).
    private func refusalOnThisThread(_ action: ReentryRule.Action) -> YDBError? {
        let thread = pthread_self()
        return lock.withLock {
            guard !userCode.isEmpty else { return nil }
            for frame in userCode.reversed() where pthread_equal(frame.thread, thread) != 0 {
                if let refusal = ReentryRule.refusal(of: action, inside: frame.kind) { return refusal }
            }
            return nil
        }
    }

    /// Throws `.misuse` when `action` breaks the re-entrancy rule here.
    func checkReentry(_ action: ReentryRule.Action) throws {
        if let refusal = refusalOnThisThread(action) { throw refusal }
    }

    /// When the calling thread runs user code of this connection and the
    /// rule refuses ending there, queues `end` for later and returns true.
    func deferInsideUserCode(_ end: @escaping () -> Void) -> Bool {
        guard refusalOnThisThread(.end("end")) != nil else { return false }
        lock.withLock { deferredEnds.append(end) }
        return true
    }

    /// Ends SQLite's read transaction on this handle.
    private func endSQLiteRead() {
        handle.resetAll()
        try? handle.run("COMMIT")
    }
}
