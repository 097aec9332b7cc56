/// What an extension sees of the write it runs in: the rows, read only
/// (`RowReader`), and the handle its own tables are written through. The
/// store's read-write transaction hands one to each extension it tells
/// about a row change. Extensions never use the transaction itself: they
/// only lend the callbacks that read it a read-only handle of it
/// (`CallbackTransaction`).
struct ExtensionWriteContext {
    let rows: RowReader
    let storage: SQLiteHandle
    private let source: TransactionSource

    private enum TransactionSource {
        case fixed(ReadTransaction)
        case current(() throws -> ReadTransaction)
    }

    init(rows: RowReader, storage: SQLiteHandle, transaction: ReadTransaction) {
        self.rows = rows
        self.storage = storage
        source = .fixed(transaction)
    }

    /// For a background population, which reads its rows a chunk per read
    /// transaction: callbacks get the one open at the moment they run (one
    /// is opened for them when the scan is over and the sort goes on).
    init(rows: RowReader, storage: SQLiteHandle, currentTransaction: @escaping () throws -> ReadTransaction) {
        self.rows = rows
        self.storage = storage
        source = .current(currentTransaction)
    }

    /// The running transaction, for `CallbackTransaction.lend` only.
    var transaction: ReadTransaction {
        get throws {
            switch source {
            case .fixed(let transaction): return transaction
            case .current(let open): return try open()
            }
        }
    }
}
