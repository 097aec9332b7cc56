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
/// - Inside a **view callback** the rows may be read, through the
///   callback's transaction handle (they include the running transaction's
///   own writes so far); the views may not (they are half-updated), and
///   nothing may write or end the transaction: the write is under way.
///   Reading other connections is fine; a write on any connection of the
///   database is refused by the write gate (this thread holds the write).
/// - Inside an **enumeration** the transaction may be read and, when it is
///   a read-write one, written (a row written during an enumeration of its
///   collection may or may not be visited); it may not be ended.
/// - Ending (`end`, `rollback`, `commit`, closing the connection) from
///   inside either is refused: C and Python get `YDB_MISUSE`; Swift's
///   non-throwing `end()`, `rollback()` and `close()` take effect when the
///   call running the callback returns.
/// - User code nested in other user code (an enumeration run from a view
///   callback) is held to every rule around it, not only the innermost.
/// - **A callback's transaction handle** (what grouping, sorting, sort key,
///   find and the mappings' group filter and sort receive) is read-only
///   wherever it runs, and valid only during the call it was passed to
///   (`handleRefusal`, `expiredHandle`).
/// - **Commit observers** are not inside anything: they run after the
///   commit, with no engine lock held, and may read and write on any
///   connection, the committing one included.
enum ReentryRule {
    enum Action {
        /// Reading rows (objects, metadata, keys, counts, collections).
        case readRows
        /// Reading views (their groups, rows by position, find, mappings).
        case readViews
        case write
        /// Ending the transaction or closing the connection (named).
        case end(String)
    }

    /// Why `action` is refused inside `running`, or nil when it is allowed.
    static func refusal(of action: Action, inside running: UserCode) -> YDBError? {
        switch (running, action) {
        case (.viewCallback, .readRows), (.enumeration, .readRows), (.enumeration, .readViews),
             (.enumeration, .write):
            return nil
        case (.viewCallback, .readViews):
            return YDBError(.misuse, "views cannot be read from inside a view callback (grouping, sorting, sort key): they are half-updated; read rows through the callback's transaction instead")
        case (.viewCallback, .write):
            return YDBError(.misuse, "the callback's transaction is read-only: a view callback (grouping, sorting, sort key) cannot write")
        case (.viewCallback, .end(let what)), (.enumeration, .end(let what)):
            return YDBError(.misuse, "cannot \(what) from inside one of its own callbacks")
        }
    }

    /// Why a callback's transaction handle refuses to `what` (write, end
    /// the transaction): it only reads, as the running transaction allows.
    static func handleRefusal(_ what: String) -> YDBError {
        YDBError(.misuse, "the callback's transaction is read-only: it cannot \(what)")
    }

    /// What a callback's transaction handle says once its call returned.
    static let expiredHandle = YDBError(
        .misuse, "the transaction handed to a callback is valid only during that call")
}
