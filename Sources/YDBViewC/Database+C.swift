// ydb_database_*: opening, closing, snapshots and commit observers.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

public typealias CObserver = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?) -> Void
public typealias CDestructor = @convention(c) (UnsafeMutableRawPointer?) -> Void

final class DatabaseBox {
    let database: Database
    /// Kept for `ydb_database_path`: borrowed by C until the handle is closed.
    let path: UnsafeMutablePointer<CChar>
    private let lock = Lock()
    private var observers: [UInt64: (engineToken: Int, slot: ObserverSlot)] = [:]
    private var lastObserverToken: UInt64 = 0
    /// Connections opened through this handle, so closing the database can
    /// finish the transactions still open on them.
    private var connections: [ObjectIdentifier: WeakConnection] = [:]
    /// The C callbacks each registered view uses now, by view name: replacing
    /// or removing one releases it (its destructor runs) deterministically,
    /// whatever the engine still references. Keyed by the name's UTF-8
    /// bytes, as the engine keys views: a `String` key would merge two
    /// canonically-equivalent view names.
    private var viewSlots: [[UInt8]: ViewSlot] = [:]

    init(_ database: Database) {
        self.database = database
        path = strdup(database.path)
    }

    deinit { free(path) }

    func addObserver(_ observer: ObserverContext) -> UInt64 {
        let slot = ObserverSlot(observer)
        let engineToken = database.addCommitObserver { notification in
            slot.call(with: notification)
        }
        return lock.withLock {
            lastObserverToken += 1
            observers[lastObserverToken] = (engineToken, slot)
            return lastObserverToken
        }
    }

    func removeObserver(_ token: UInt64) -> Bool {
        guard let entry = lock.withLock({ observers.removeValue(forKey: token) }) else { return false }
        database.removeCommitObserver(entry.engineToken)
        entry.slot.clear()
        return true
    }

    func connectionOpened(_ connection: ConnectionBox) {
        lock.withLock {
            connections = connections.filter { $0.value.box != nil }
            connections[ObjectIdentifier(connection)] = WeakConnection(box: connection)
        }
    }

    /// Ends every transaction still open on this database's connections
    /// (rolling back read-write ones), so none outlives the database.
    /// True while a read-write transaction begun on `thread` is open on one
    /// of this database's connections.
    func hasWriter(on thread: UInt) -> Bool {
        let open = lock.withLock { connections.values.compactMap(\.box) }
        return open.contains { $0.hasWriter(on: thread) }
    }

    /// Makes `slot` the callbacks of view `name`, releasing the previous ones.
    func installView(_ slot: ViewSlot, name: String) {
        let previous = lock.withLock { () -> ViewSlot? in
            defer { viewSlots[Array(name.utf8)] = slot }
            return viewSlots[Array(name.utf8)]
        }
        if previous !== slot { previous?.clear() }
    }

    func removeView(name: String) {
        lock.withLock { viewSlots.removeValue(forKey: Array(name.utf8)) }?.clear()
    }

    func removeAllViews() {
        let slots = lock.withLock { () -> [ViewSlot] in
            defer { viewSlots.removeAll() }
            return Array(viewSlots.values)
        }
        for slot in slots { slot.clear() }
    }

    func removeAllObservers() {
        let tokens = lock.withLock { Array(observers.keys) }
        for token in tokens { _ = removeObserver(token) }
    }
}

struct WeakConnection {
    weak var box: ConnectionBox?
}

/// The C callback, its ctx and destructor. The destructor runs when the last
/// reference goes: after removal and after any call still running.
final class ObserverContext {
    let callback: CObserver
    let ctx: UnsafeMutableRawPointer?
    let destroy: CDestructor?

    init(callback: CObserver, ctx: UnsafeMutableRawPointer?, destroy: CDestructor?) {
        self.callback = callback
        self.ctx = ctx
        self.destroy = destroy
    }

    deinit { destroy?(ctx) }
}

/// What the engine's closure holds: clearing it stops further calls at once,
/// whatever the engine does with the closure itself.
final class ObserverSlot: @unchecked Sendable {
    private let lock = Lock()
    private var observer: ObserverContext?

    init(_ observer: ObserverContext) { self.observer = observer }

    func clear() {
        let released = lock.withLock { () -> ObserverContext? in
            defer { observer = nil }
            return observer
        }
        _ = released  // the destructor may run here, outside the lock
    }

    func call(with notification: CommitNotification) {
        guard let observer = lock.withLock({ observer }) else { return }
        let box = NotificationBox(notification, owned: false)
        let handle = registry.register(box)
        let thread = currentLastError(create: true)
        thread?.observerDepth += 1
        defer {
            thread?.observerDepth -= 1
            registry.unregister(handle)
        }
        observer.callback(observer.ctx, handle)
    }
}

@_cdecl("ydb_database_open")
public func ydb_database_open(_ path: UnsafePointer<CChar>?,
                              _ outDatabase: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    run {
        let out = try required(outDatabase, "out_db")
        out.pointee = nil
        let filePath = try path.map { try string($0, "path") }
        if filePath == "" {
            throw YDBError(.invalidArgument, "path is empty (pass NULL for a temporary database)")
        }
        let database = try Database(path: filePath)
        out.pointee = registry.register(DatabaseBox(database))
    }
}

@_cdecl("ydb_database_close")
public func ydb_database_close(_ handle: OpaquePointer?) -> Int32 {
    run {
        guard handle != nil else { return }
        let box = try lookup(handle, DatabaseBox.self, "database")
        registry.unregister(handle)
        box.removeAllObservers()
        box.database.close()   // ends every open transaction, which then reports YDB_CLOSED
        box.removeAllViews()
    }
}

@_cdecl("ydb_database_path")
public func ydb_database_path(_ handle: OpaquePointer?,
                              _ outPath: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    run {
        let out = try required(outPath, "out_path")
        out.pointee = nil
        out.pointee = UnsafePointer(try lookup(handle, DatabaseBox.self, "database").path)
    }
}

@_cdecl("ydb_database_snapshot")
public func ydb_database_snapshot(_ handle: OpaquePointer?,
                                  _ outSnapshot: UnsafeMutablePointer<UInt64>?) -> Int32 {
    run {
        let out = try required(outSnapshot, "out_snapshot")
        out.pointee = 0
        out.pointee = try lookup(handle, DatabaseBox.self, "database").database.snapshot
    }
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
    run {
        let out = try required(outCommits, "out_commits")
        out.pointee = 0
        out.pointee = try lookup(handle, DatabaseBox.self, "database").database.maxCommitsBehind
    }
}

@_cdecl("ydb_database_add_commit_observer")
public func ydb_database_add_commit_observer(_ handle: OpaquePointer?,
                                             _ callback: CObserver?,
                                             _ ctx: UnsafeMutableRawPointer?,
                                             _ destroy: CDestructor?,
                                             _ outToken: UnsafeMutablePointer<UInt64>?) -> Int32 {
    let status = run {
        let out = try required(outToken, "out_token")
        out.pointee = 0
        let box = try lookup(handle, DatabaseBox.self, "database")
        guard let callback else { throw YDBError(.invalidArgument, "observer is NULL") }
        let observer = ObserverContext(callback: callback, ctx: ctx, destroy: destroy)
        out.pointee = box.addObserver(observer)
    }
    // On success the destructor now belongs to the ObserverContext; on failure
    // no ObserverContext was made, so it runs here, exactly once.
    if status != 0 { destroy?(ctx) }
    return status
}

@_cdecl("ydb_database_remove_commit_observer")
public func ydb_database_remove_commit_observer(_ handle: OpaquePointer?, _ token: UInt64) -> Int32 {
    run {
        let box = try lookup(handle, DatabaseBox.self, "database")
        guard box.removeObserver(token) else {
            throw YDBError(.notFound, "no commit observer with token \(token)")
        }
    }
}
