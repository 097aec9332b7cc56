/// User code a connection runs in the middle of one of its own calls.
enum UserCode {
    /// Grouping, sorting and sort-key callbacks, run while a write (or a
    /// registration) updates the views: the views are half-updated.
    case viewCallback
    /// The body of an enumeration (rows, keys, view rows) or a find.
    case enumeration
}

/// What user code may do with the connection that is running it — the one
/// rule for every surface (Swift, C, Python); the header and the README
/// ("Callbacks and re-entrancy") state it for users.
///
/// - Inside a **view callback** nothing may use the connection running it
///   (or its transaction): the views are half-updated and the write is
///   under way. Reading other connections is fine; a write on any
///   connection of the database is refused by the write gate (this thread
///   holds the write).
/// - Inside an **enumeration** the transaction may be read and, when it is
///   a read-write one, written (a row written during an enumeration of its
///   collection may or may not be visited); it may not be ended.
/// - Ending (`end`, `rollback`, `commit`, closing the connection) from
///   inside either is refused: C and Python get `YDB_MISUSE`; Swift's
///   non-throwing `end()`, `rollback()` and `close()` take effect when the
///   call running the callback returns.
/// - **Commit observers** are not inside anything: they run after the
///   commit, with no engine lock held, and may read and write on any
///   connection, the committing one included.
enum ReentryRule {
    enum Action {
        case read
        case write
        /// Ending the transaction or closing the connection (named).
        case end(String)
    }

    /// Why `action` is refused inside `running`, or nil when it is allowed.
    static func refusal(of action: Action, inside running: UserCode) -> YDBError? {
        switch (running, action) {
        case (.viewCallback, .read), (.viewCallback, .write):
            return YDBError(.misuse, "the connection is busy: it cannot be used from inside one of its view callbacks (grouping, sorting, sort key)")
        case (.viewCallback, .end(let what)), (.enumeration, .end(let what)):
            return YDBError(.misuse, "cannot \(what) from inside one of its own callbacks")
        case (.enumeration, .read), (.enumeration, .write):
            return nil
        }
    }
}
