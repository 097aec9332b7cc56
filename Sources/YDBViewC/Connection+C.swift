// ydb_connection_*: connections and long-lived read transactions.
//
// A connection handle is the engine's Connection itself: closing one ends
// its open transaction, and calls from inside its own callbacks follow the
// engine's re-entrancy rule.

import YDBView

func usableConnection(_ handle: OpaquePointer?) throws -> Connection {
    try lookup(handle, Connection.self, "connection")
}

@_cdecl("ydb_connection_open")
public func ydb_connection_open(_ databaseHandle: OpaquePointer?,
                                _ outConnection: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    answer(outConnection, "out_conn") {
        registry.register(try lookup(databaseHandle, DatabaseBox.self, "database").database.newConnection())
    }
}

@_cdecl("ydb_connection_close")
public func ydb_connection_close(_ handle: OpaquePointer?) -> Int32 {
    run {
        guard handle != nil else { return }
        try usableConnection(handle).closeRefusingCallbacks()
        registry.unregister(handle)
    }
}

@_cdecl("ydb_connection_snapshot")
public func ydb_connection_snapshot(_ handle: OpaquePointer?,
                                    _ outSnapshot: UnsafeMutablePointer<UInt64>?) -> Int32 {
    answer(outSnapshot, "out_snapshot") { try usableConnection(handle).snapshot }
}

@_cdecl("ydb_connection_set_row_cache_limit")
public func ydb_connection_set_row_cache_limit(_ handle: OpaquePointer?, _ limit: Int) -> Int32 {
    run {
        guard limit >= 0 else { throw YDBError(.invalidArgument, "limit \(UInt(bitPattern: limit)) is larger than a row cache can be") }
        try usableConnection(handle).rowCacheLimit = limit
    }
}

@_cdecl("ydb_connection_row_cache_limit")
public func ydb_connection_row_cache_limit(_ handle: OpaquePointer?, _ outLimit: UnsafeMutablePointer<Int>?) -> Int32 {
    answer(outLimit, "out_limit") { try usableConnection(handle).rowCacheLimit }
}

@_cdecl("ydb_connection_begin_long_lived_read")
public func ydb_connection_begin_long_lived_read(_ handle: OpaquePointer?,
                                                 _ outSkipped: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    run {
        outSkipped?.pointee = nil
        let skipped = try usableConnection(handle).beginLongLivedReadTransaction()
        if let outSkipped {
            outSkipped.pointee = NotificationListBox.register(skipped)
        }
    }
}

@_cdecl("ydb_connection_end_long_lived_read")
public func ydb_connection_end_long_lived_read(_ handle: OpaquePointer?) -> Int32 {
    run { try usableConnection(handle).endLongLivedReadTransaction() }
}

@_cdecl("ydb_connection_is_in_long_lived_read")
public func ydb_connection_is_in_long_lived_read(_ handle: OpaquePointer?,
                                                 _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") { try usableConnection(handle).isInLongLivedReadTransaction ? 1 : 0 }
}

@_cdecl("ydb_connection_wakeup_fd")
public func ydb_connection_wakeup_fd(_ handle: OpaquePointer?, _ outFD: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFD, "out_fd") { try usableConnection(handle).wakeupDescriptor() }
}

/// A C timeout in milliseconds (negative: no limit) as the engine's.
func timeout(fromMilliseconds milliseconds: Int64) -> Duration? {
    milliseconds < 0 ? nil : .milliseconds(milliseconds)
}

/// The engine's timeout in C milliseconds: -1 for no limit, saturated.
func milliseconds(of timeout: Duration?) -> Int64 {
    timeout.map { Int64(saturatingMilliseconds($0)) } ?? -1
}

@_cdecl("ydb_connection_set_write_timeout")
public func ydb_connection_set_write_timeout(_ handle: OpaquePointer?, _ timeoutMilliseconds: Int64) -> Int32 {
    run { try usableConnection(handle).writeTimeout = timeout(fromMilliseconds: timeoutMilliseconds) }
}

@_cdecl("ydb_connection_write_timeout")
public func ydb_connection_write_timeout(_ handle: OpaquePointer?,
                                         _ outMilliseconds: UnsafeMutablePointer<Int64>?) -> Int32 {
    answer(outMilliseconds, "out_timeout_ms") { milliseconds(of: try usableConnection(handle).writeTimeout) }
}
