/// The read-only handle a callback receives of the transaction running it
/// (grouping, sorting, sort key, find, the mappings' group filter and
/// sort), typed `ReadTransaction`.
///
/// - Reads go through the running transaction's connection, so they see
///   that transaction's own writes so far (a row set earlier in the same
///   read-write transaction, or during a registration or
///   `setViewDefinition`, the rows as that transaction left them).
/// - What the running transaction allows is allowed (`ReentryRule`): inside
///   a view callback, rows but not views.
/// - It never writes or ends anything (`ReentryRule.handleRefusal`): the
///   C and Python layers report `.misuse`; Swift's non-throwing `end()`
///   does nothing.
/// - It is valid only until the call it was passed to returns; later uses
///   throw `.misuse` (`ReentryRule.expiredHandle`).
///
/// Reading another row does not make a view depend on it: a later change
/// to that row re-runs no callback (docs/behaviour.md, "Views").
///
/// `@unchecked Sendable`: `expired` is read and written under the
/// connection's lock, like every transaction's state.
final class CallbackTransaction: ReadTransaction, @unchecked Sendable {
    private let running: ReadTransaction
    private var expired = false

    private init(running: ReadTransaction) {
        self.running = running
        super.init(connection: running.connection, state: running.state)
    }

    /// Runs `body` with a handle over `running`, valid until `body` returns.
    static func lend<T>(_ running: ReadTransaction, _ body: (ReadTransaction) throws -> T) rethrows -> T {
        let handle = CallbackTransaction(running: running)
        defer { handle.connection.lock.withLock { handle.expired = true } }
        return try body(handle)
    }

    private func checkLive() throws {
        try connection.lock.withLock { if expired { throw ReentryRule.expiredHandle } }
    }

    override func access<T>(_ action: ReentryRule.Action = .readRows, _ body: () throws -> T) throws -> T {
        try connection.lock.withLock {
            if expired { throw ReentryRule.expiredHandle }
            return try running.access(action, body)
        }
    }

    /// The running transaction's views (a read-write one's working copies).
    override func viewInstance(named name: String) -> ViewInstance? { running.viewInstance(named: name) }

    /// Does nothing: the handle cannot end the transaction running the callback.
    override func end() {}

    override package func endRefusingCallbacks() throws {
        try checkLive()
        throw ReentryRule.handleRefusal("end the transaction")
    }

    override package func writer() throws -> ReadWriteTransaction {
        try checkLive()
        throw ReentryRule.handleRefusal("write")
    }
}
