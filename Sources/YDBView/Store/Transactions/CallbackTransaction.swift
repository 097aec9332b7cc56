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
/// `@unchecked Sendable`: `calls` is read and written under the
/// connection's lock, like every transaction's state.
final class CallbackTransaction: ReadTransaction, @unchecked Sendable {
    /// Not retained: the running transaction keeps its handle
    /// (`lentHandle`), not the other way round. Not weak either: an object
    /// that is weakly referenced pays on every retain and release (its
    /// counts move to a side table), and a population retains the running
    /// transaction for every callback call. It is alive whenever
    /// `calls > 0` (a `lend` holding it is running), and every use checks
    /// that first, under the connection's lock.
    private unowned(unsafe) let running: ReadTransaction
    /// Calls running with this handle now (nested calls share it); 0 = expired.
    private var calls = 0

    private init(running: ReadTransaction) {
        self.running = running
        // `state` serves only `snapshot`, which never changes; extensions are
        // read through `running` (`registeredExtension`), whose working
        // copies move on.
        super.init(connection: running.connection, state: running.state)
    }

    /// Runs `body` with a handle over `running`, valid until `body` returns.
    /// One handle per running transaction, lent again for each call: sorting
    /// callbacks run O(n log n) times during a population.
    static func lend<T>(_ running: ReadTransaction, _ body: (ReadTransaction) throws -> T) rethrows -> T {
        let handle = borrow(running)
        defer { handle.giveBack() }
        return try body(handle)
    }

    /// `lend`'s two halves: every `borrow` is followed by one `giveBack`.
    private static func borrow(_ running: ReadTransaction) -> CallbackTransaction {
        running.connection.lock.withLock { () -> CallbackTransaction in
            let handle = running.lentHandle ?? CallbackTransaction(running: running)
            running.lentHandle = handle
            handle.calls += 1
            return handle
        }
    }

    private func giveBack() {
        connection.lock.withLock { calls -= 1 }
    }

    private func checkLive() throws {
        try connection.lock.withLock { if calls == 0 { throw ReentryRule.expiredHandle } }
    }

    override func access<T>(_ action: ReentryRule.Action = .readRows, _ body: () throws -> T) throws -> T {
        try connection.lock.withLock {
            guard calls > 0 else { throw ReentryRule.expiredHandle }
            return try running.access(action, body)
        }
    }

    /// The running transaction's extensions (a read-write one's working copies).
    override func registeredExtension(named name: String) -> (any RegisteredExtension)? {
        connection.lock.withLock { calls > 0 ? running.registeredExtension(named: name) : nil }
    }

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
