/// What view maintenance sees of the write it runs in: the rows, read only
/// (`RowReader`), and the handle its own tables are written through (only
/// by `ViewStorage`). The store's read-write transaction hands one to each
/// view it tells about a row change. Views never use the transaction
/// itself: they only lend the callbacks that read it a read-only handle of
/// it (`CallbackTransaction`).
struct ViewWriteContext {
    let rows: RowReader
    let storage: SQLiteHandle
    /// The running transaction, for `CallbackTransaction.lend` only.
    let transaction: ReadTransaction
}
