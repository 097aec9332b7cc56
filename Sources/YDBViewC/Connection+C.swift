// ydb_connection_*: connections and long-lived read transactions.

import YDBView

final class ConnectionBox: @unchecked Sendable {
    let connection: Connection
    private let lock = Lock()
    /// Threads currently inside a callback run by this connection (an
    /// enumeration or a commit's observers), with nesting depth. A call into
    /// the connection from such a thread would re-enter the engine while it
    /// is busy, so it is refused with YDB_MISUSE instead of deadlocking.
    private var callbackThreads: [UInt: Int] = [:]
    /// Transactions begun here and not yet finished, so closing the
    /// connection can finish them first.
    private var openTransactions: [ObjectIdentifier: ReadTransaction] = [:]
    /// The thread that began each open read-write transaction.
    private var writerThreads: [ObjectIdentifier: UInt] = [:]
    /// The database handle this connection was opened from (for views).
    weak var database: DatabaseBox?

    init(_ connection: Connection) { self.connection = connection }

    /// True while a read-write transaction begun on `thread` is open here.
    func hasWriter(on thread: UInt) -> Bool {
        lock.withLock { writerThreads.values.contains(thread) }
    }

    func checkNotInCallback() throws {
        let thread = currentThread()
        if lock.withLock({ callbackThreads[thread] != nil }) {
            throw YDBError(.misuse, "the connection is busy: called from inside its own callback")
        }
    }

    /// Runs `body`, during which calls back into this connection from this
    /// thread are refused.
    func whileRunningCallbacks<T>(_ body: () throws -> T) throws -> T {
        let thread = currentThread()
        lock.withLock { callbackThreads[thread, default: 0] += 1 }
        defer {
            lock.withLock {
                let depth = callbackThreads[thread, default: 1] - 1
                callbackThreads[thread] = depth == 0 ? nil : depth
            }
        }
        return try body()
    }

    func opened(_ transaction: ReadTransaction) {
        lock.withLock {
            openTransactions[ObjectIdentifier(transaction)] = transaction
            if transaction is ReadWriteTransaction { writerThreads[ObjectIdentifier(transaction)] = currentThread() }
        }
    }

    func finished(_ transaction: ReadTransaction) {
        lock.withLock {
            openTransactions[ObjectIdentifier(transaction)] = nil
            writerThreads[ObjectIdentifier(transaction)] = nil
        }
    }

    func finishAll() {
        let transactions = lock.withLock { () -> [ReadTransaction] in
            defer {
                openTransactions.removeAll()
                writerThreads.removeAll()
            }
            return Array(openTransactions.values)
        }
        for transaction in transactions {
            if let write = transaction as? ReadWriteTransaction { write.rollback() } else { transaction.end() }
        }
    }
}

/// Looks a connection up and refuses re-entry from its own callbacks.
func usableConnection(_ handle: OpaquePointer?) throws -> ConnectionBox {
    let box = try lookup(handle, ConnectionBox.self, "connection")
    try box.checkNotInCallback()
    return box
}

@_cdecl("ydb_connection_open")
public func ydb_connection_open(_ databaseHandle: OpaquePointer?,
                                _ outConnection: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    run {
        let out = try required(outConnection, "out_conn")
        out.pointee = nil
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        let connection = ConnectionBox(try database.database.newConnection())
        connection.database = database
        database.connectionOpened(connection)
        out.pointee = registry.register(connection)
    }
}

@_cdecl("ydb_connection_close")
public func ydb_connection_close(_ handle: OpaquePointer?) -> Int32 {
    run {
        guard handle != nil else { return }
        let box = try usableConnection(handle)
        registry.unregister(handle)
        box.finishAll()
        if box.connection.isInLongLivedReadTransaction { box.connection.endLongLivedReadTransaction() }
        box.connection.close()
    }
}

@_cdecl("ydb_connection_snapshot")
public func ydb_connection_snapshot(_ handle: OpaquePointer?,
                                    _ outSnapshot: UnsafeMutablePointer<UInt64>?) -> Int32 {
    run {
        let out = try required(outSnapshot, "out_snapshot")
        out.pointee = 0
        out.pointee = try usableConnection(handle).connection.snapshot
    }
}

@_cdecl("ydb_connection_begin_long_lived_read")
public func ydb_connection_begin_long_lived_read(_ handle: OpaquePointer?,
                                                 _ outSkipped: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    run {
        outSkipped?.pointee = nil
        let box = try usableConnection(handle)
        let skipped = try box.connection.beginLongLivedReadTransaction()
        if let outSkipped {
            outSkipped.pointee = NotificationListBox.register(skipped)
        }
    }
}

@_cdecl("ydb_connection_end_long_lived_read")
public func ydb_connection_end_long_lived_read(_ handle: OpaquePointer?) -> Int32 {
    run { try usableConnection(handle).connection.endLongLivedReadTransaction() }
}

@_cdecl("ydb_connection_is_in_long_lived_read")
public func ydb_connection_is_in_long_lived_read(_ handle: OpaquePointer?,
                                                 _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    run {
        let out = try required(outFlag, "out_flag")
        out.pointee = 0
        out.pointee = try usableConnection(handle).connection.isInLongLivedReadTransaction ? 1 : 0
    }
}
