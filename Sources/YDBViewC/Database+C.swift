// ydb_database_*: opening, closing, snapshots and commit observers.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

public typealias CObserver = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?) -> Void
public typealias CDestructor = @convention(c) (UnsafeMutableRawPointer?) -> Void

/// The engine's Database, with the C copy of its path that
/// `ydb_database_path` lends out until the handle closes. Observers, views
/// and connections are the engine's to track and release.
final class DatabaseBox {
    let database: Database
    let path: UnsafeMutablePointer<CChar>

    init(_ database: Database) {
        self.database = database
        path = strdup(database.path)
    }

    deinit { free(path) }
}

/// A C observer: its callback and ctx, and the destructor that runs when
/// the engine lets go of the observer (removed, or its database closed,
/// and no call still running).
final class CObserverContext: @unchecked Sendable {   // immutable
    let callback: CObserver
    let ctx: UnsafeMutableRawPointer?
    let destroy: CDestructor?

    init(callback: CObserver, ctx: UnsafeMutableRawPointer?, destroy: CDestructor?) {
        self.callback = callback
        self.ctx = ctx
        self.destroy = destroy
    }

    deinit { destroy?(ctx) }

    func call(with notification: CommitNotification) {
        let handle = registry.register(NotificationBox(notification, owned: false))
        defer { registry.unregister(handle) }
        callback(ctx, handle)
    }
}

@_cdecl("ydb_database_open")
public func ydb_database_open(_ path: UnsafePointer<CChar>?,
                              _ outDatabase: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    answer(outDatabase, "out_db") {
        let filePath = try path.map { try string($0, "path") }
        if filePath == "" {
            throw YDBError(.invalidArgument, "path is empty (pass NULL for a temporary database)")
        }
        return registry.register(DatabaseBox(try Database(path: filePath)))
    }
}

/// `ydb_database_options`, as the header declares it.
struct CDatabaseOptions {
    var structSize: UInt = UInt(MemoryLayout<CDatabaseOptions>.stride)
    var flags: UInt32 = 0

    /// The first version is this one.
    static let sized = SizedStruct<CDatabaseOptions>(name: "ydb_database_options",
                                                     initMacro: "YDB_DATABASE_OPTIONS_INIT",
                                                     minimumSize: MemoryLayout<CDatabaseOptions>.stride)
    static let multiProcess: UInt32 = 0x1
    static let knownFlags: UInt32 = multiProcess
}

@_cdecl("ydb_database_open_with_options")
public func ydb_database_open_with_options(_ path: UnsafePointer<CChar>?, _ options: UnsafeRawPointer?,
                                           _ outDatabase: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    answer(outDatabase, "out_db") {
        var chosen = DatabaseOptions()
        if let options {
            let given = try CDatabaseOptions.sized.load(options, defaults: CDatabaseOptions())
            let unknown = given.flags & ~CDatabaseOptions.knownFlags
            guard unknown == 0 else {
                throw YDBError(.invalidArgument, "ydb_database_options.flags has unknown bits 0x\(String(unknown, radix: 16))")
            }
            chosen.multiProcess = given.flags & CDatabaseOptions.multiProcess != 0
        }
        let filePath = try path.map { try string($0, "path") }
        if filePath == "" {
            throw YDBError(.invalidArgument, "path is empty (pass NULL for a temporary database)")
        }
        return registry.register(DatabaseBox(try Database(path: filePath, options: chosen)))
    }
}

@_cdecl("ydb_database_set_commit_log_limit")
public func ydb_database_set_commit_log_limit(_ handle: OpaquePointer?, _ commits: UInt64) -> Int32 {
    run {
        guard commits > 0 else { throw YDBError(.invalidArgument, "commit_log_limit must be at least 1") }
        try lookup(handle, DatabaseBox.self, "database").database.commitLogLimit = commits
    }
}

@_cdecl("ydb_database_commit_log_limit")
public func ydb_database_commit_log_limit(_ handle: OpaquePointer?,
                                          _ outCommits: UnsafeMutablePointer<UInt64>?) -> Int32 {
    answer(outCommits, "out_commits") { try lookup(handle, DatabaseBox.self, "database").database.commitLogLimit }
}

@_cdecl("ydb_database_is_multi_process")
public func ydb_database_is_multi_process(_ handle: OpaquePointer?,
                                          _ outMultiProcess: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outMultiProcess, "out_multi_process") {
        try lookup(handle, DatabaseBox.self, "database").database.options.multiProcess ? 1 : 0
    }
}

@_cdecl("ydb_database_close")
public func ydb_database_close(_ handle: OpaquePointer?) -> Int32 {
    run {
        guard handle != nil else { return }
        let box = try lookup(handle, DatabaseBox.self, "database")
        registry.unregister(handle)
        // Ends every open transaction (which then reports YDB_CLOSED) and
        // releases every observer's and view's callbacks.
        box.database.close()
    }
}

@_cdecl("ydb_database_path")
public func ydb_database_path(_ handle: OpaquePointer?,
                              _ outPath: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    answer(outPath, "out_path") { UnsafePointer(try lookup(handle, DatabaseBox.self, "database").path) }
}

@_cdecl("ydb_database_snapshot")
public func ydb_database_snapshot(_ handle: OpaquePointer?,
                                  _ outSnapshot: UnsafeMutablePointer<UInt64>?) -> Int32 {
    answer(outSnapshot, "out_snapshot") { try lookup(handle, DatabaseBox.self, "database").database.snapshot }
}

@_cdecl("ydb_database_set_max_commits_behind")
public func ydb_database_set_max_commits_behind(_ handle: OpaquePointer?, _ commits: UInt64) -> Int32 {
    run {
        guard commits > 0 else { throw YDBError(.invalidArgument, "max_commits_behind must be at least 1") }
        try lookup(handle, DatabaseBox.self, "database").database.maxCommitsBehind = commits
    }
}

@_cdecl("ydb_database_max_commits_behind")
public func ydb_database_max_commits_behind(_ handle: OpaquePointer?,
                                            _ outCommits: UnsafeMutablePointer<UInt64>?) -> Int32 {
    answer(outCommits, "out_commits") { try lookup(handle, DatabaseBox.self, "database").database.maxCommitsBehind }
}

@_cdecl("ydb_database_set_default_write_timeout")
public func ydb_database_set_default_write_timeout(_ handle: OpaquePointer?, _ timeoutMilliseconds: Int64) -> Int32 {
    run {
        try lookup(handle, DatabaseBox.self, "database").database.defaultWriteTimeout =
            timeout(fromMilliseconds: timeoutMilliseconds)
    }
}

@_cdecl("ydb_database_default_write_timeout")
public func ydb_database_default_write_timeout(_ handle: OpaquePointer?,
                                               _ outMilliseconds: UnsafeMutablePointer<Int64>?) -> Int32 {
    answer(outMilliseconds, "out_timeout_ms") {
        milliseconds(of: try lookup(handle, DatabaseBox.self, "database").database.defaultWriteTimeout)
    }
}

@_cdecl("ydb_database_add_commit_observer")
public func ydb_database_add_commit_observer(_ handle: OpaquePointer?,
                                             _ callback: CObserver?,
                                             _ ctx: UnsafeMutableRawPointer?,
                                             _ destroy: CDestructor?,
                                             _ outToken: UnsafeMutablePointer<UInt64>?) -> Int32 {
    let status = answer(outToken, "out_token") {
        let box = try lookup(handle, DatabaseBox.self, "database")
        guard let callback else { throw YDBError(.invalidArgument, "observer is NULL") }
        let observer = CObserverContext(callback: callback, ctx: ctx, destroy: destroy)
        return UInt64(box.database.addCommitObserver { observer.call(with: $0) })
    }
    // On success the destructor now belongs to the CObserverContext; on
    // failure no CObserverContext was made, so it runs here, exactly once.
    if status != 0 { destroy?(ctx) }
    return status
}

@_cdecl("ydb_database_remove_commit_observer")
public func ydb_database_remove_commit_observer(_ handle: OpaquePointer?, _ token: UInt64) -> Int32 {
    run {
        let box = try lookup(handle, DatabaseBox.self, "database")
        guard let engineToken = Int(exactly: token), box.database.removeCommitObserver(engineToken) else {
            throw YDBError(.notFound, "no commit observer with token \(token)")
        }
    }
}
