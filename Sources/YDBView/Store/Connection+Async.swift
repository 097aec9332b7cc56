/// Swift concurrency on a connection: the commits other connections make
/// as an `AsyncSequence`, and reads and writes that run on a thread of
/// their own instead of blocking the cooperative pool.
///
/// ```swift
/// for try await skipped in connection.commits() {
///     if skipped.hasChange(forKey: "b1", inCollection: "books") { reload() }
/// }
/// let title = try await connection.asyncRead { try $0.object(forKey: "b1", inCollection: "books") }
/// ```
extension Connection {
    /// Each time other connections committed: the notifications of the
    /// commits this connection skipped, oldest first. Taking one moves the
    /// connection forward (`beginLongLivedReadTransaction()`), and it stays
    /// in that long-lived read. Commits made while the consumer is busy
    /// come together in the next element; none is dropped. The iteration
    /// ends when the task is cancelled or the connection or its database
    /// closes, and throws `.reloadRequired` when the connection fell more
    /// than `Database.maxCommitsBehind` commits behind.
    public func commits() -> CommitSequence { CommitSequence(connection: self) }

    /// Runs `body` in a read transaction on a thread of its own.
    public func asyncRead<T: Sendable>(_ body: @escaping @Sendable (ReadTransaction) throws -> T) async throws -> T {
        try await onOwnThread { try self.read(body) }
    }

    /// Runs `body` in a read-write transaction on a thread of its own (it
    /// may wait for the write lock, and views run their callbacks):
    /// committed when `body` returns, rolled back when it throws.
    public func asyncReadWrite<T: Sendable>(_ body: @escaping @Sendable (ReadWriteTransaction) throws -> T)
        async throws -> T {
        try await onOwnThread { try self.readWrite(body) }
    }

    private func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            let started = startThread { continuation.resume(with: Result { try work() }) }
            if !started {
                continuation.resume(throwing: YDBError(.error, "cannot start a thread for the transaction"))
            }
        }
    }
}

/// The commits other connections make, as seen by one connection
/// (`Connection.commits()`).
public struct CommitSequence: AsyncSequence, Sendable {
    public typealias Element = [CommitNotification]
    let connection: Connection

    public func makeAsyncIterator() -> Iterator { Iterator(connection) }

    /// Waits on a commit observer, with no thread of its own.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        private let connection: Connection
        private let waiter: CommitWaiter

        init(_ connection: Connection) {
            self.connection = connection
            waiter = CommitWaiter(connection)
        }

        public func next() async throws -> [CommitNotification]? {
            let database = connection.database
            while !Task.isCancelled {
                // Behind already (a commit came before the wait began, or
                // since the last element): no wait.
                if connection.snapshot == database.snapshot {
                    guard await waiter.wait() else { return nil }
                }
                do {
                    let skipped = try connection.beginLongLivedReadTransaction()
                    if !skipped.isEmpty { return skipped }
                } catch let error as YDBError where error.code == .closed {
                    return nil
                }
            }
            return nil
        }
    }
}

/// Wakes the task waiting for the next commit; ends the wait on close or
/// cancellation. A commit that comes while nobody waits is remembered.
final class CommitWaiter: @unchecked Sendable {   // guarded by `lock`
    private let lock = Mutex()
    private var waiting: CheckedContinuation<Bool, Never>?
    private var commitCame = false
    private var ended = false
    private let database: Database
    private let connection: Connection
    private var observer = 0, databaseClosing = 0, connectionClosing = 0

    init(_ connection: Connection) {
        self.connection = connection
        database = connection.database
        observer = database.addCommitObserver { [weak self] _ in self?.commitDidCome() }
        databaseClosing = database.whenClosing { [weak self] in self?.end() }
        connectionClosing = connection.whenClosing { [weak self] in self?.end() }
    }

    deinit {
        database.removeCommitObserver(observer)
        database.removeClosingHandler(databaseClosing)
        connection.removeClosingHandler(connectionClosing)
    }

    private func commitDidCome() {
        let resumed: CheckedContinuation<Bool, Never>? = lock.withLock {
            guard let waiting else {
                commitCame = true
                return nil
            }
            self.waiting = nil
            return waiting
        }
        resumed?.resume(returning: true)
    }

    private func end() {
        let resumed: CheckedContinuation<Bool, Never>? = lock.withLock {
            ended = true
            defer { waiting = nil }
            return waiting
        }
        resumed?.resume(returning: false)
    }

    /// True once a commit came; false when the wait was ended.
    func wait() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let answer: Bool? = lock.withLock {
                    if ended || Task.isCancelled { return false }
                    if commitCame {
                        commitCame = false
                        return true
                    }
                    waiting = continuation
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            end()
        }
    }
}
