/// What view maintenance sees of the write it runs in: the rows, read only
/// (`RowReader`), and the handle its own tables are written through (only
/// by `ViewStorage`). The store's read-write transaction hands one to each
/// view it tells about a row change; views never see the transaction.
struct ViewWriteContext {
    let rows: RowReader
    let storage: SQLiteHandle
}
