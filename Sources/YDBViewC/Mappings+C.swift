// ydb_mappings_*: mappings objects -- made, freed, updated -- and what
// every mappings export shares (the box, its lookup). Their configuration,
// ranges, getters and the rows by table position have files of their own.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

/// Both take (ctx, txn, ...): txn is a read-only handle of the transaction
/// the groups are found with, or NULL where there is none.
public typealias CGroupFilterCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?,
                                                        UnsafePointer<CChar>?) -> Int32
public typealias CGroupSortCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?,
                                                      UnsafePointer<CChar>?) -> Int32

// MARK: - Dynamic groups' callbacks

final class GroupSourceCallbacks {
    let filter: CGroupFilterCallback
    let sort: CGroupSortCallback
    let ctx: UnsafeMutableRawPointer?
    let destroy: CDestructor?

    init(filter: CGroupFilterCallback, sort: CGroupSortCallback, ctx: UnsafeMutableRawPointer?,
         destroy: CDestructor?) {
        self.filter = filter
        self.sort = sort
        self.ctx = ctx
        self.destroy = destroy
    }

    deinit { destroy?(ctx) }
}

/// What the engine's closures hold; cleared by ydb_mappings_free so the
/// destructor runs then (after any call still running).
typealias GroupSourceSlot = CallbackSlot<GroupSourceCallbacks>

extension CallbackSlot where Callbacks == GroupSourceCallbacks {
    func accepts(_ transaction: ReadTransaction?, _ group: String) -> Bool {
        guard let callbacks = current else { return false }
        return withCallbackTxn(transaction) { txn in
            group.withCString { name in callbacks.filter(callbacks.ctx, txn, name) }
        } != 0
    }

    func less(_ transaction: ReadTransaction?, _ lhs: String, _ rhs: String) -> Bool {
        guard let callbacks = current else { return bytesPrecede(lhs, rhs) }  // UTF-8 byte order, as SQLite's BINARY
        return withCallbackTxn(transaction) { txn in
            lhs.withCString { first in
                rhs.withCString { second in callbacks.sort(callbacks.ctx, txn, first, second) }
            }
        } < 0
    }
}

// MARK: - The box

/// A mappings object as C sees it. Mappings are single-thread objects, but
/// every call holds this box's lock so two threads cannot corrupt it; a
/// call from inside its own filter/sort callback (same thread, lock held)
/// is refused instead of re-entering the engine.
final class MappingsBox: @unchecked Sendable {
    let mappings: Mappings
    let groupSource: GroupSourceSlot?
    let viewName: UnsafeMutablePointer<CChar>
    /// Recursive, so a call from inside the mappings' own callback (this
    /// thread, lock held) reaches the `busy` check instead of deadlocking.
    private let mutex = Lock(recursive: true)
    private var busy = false
    /// Group names handed to C: borrowed until ydb_mappings_free. Keyed by
    /// UTF-8 bytes: a `String` key would hand back the other spelling of a
    /// canonically-equivalent name.
    private var interned: [[UInt8]: UnsafeMutablePointer<CChar>] = [:]

    init(_ mappings: Mappings, groupSource: GroupSourceSlot?) {
        self.mappings = mappings
        self.groupSource = groupSource
        viewName = strdup(mappings.viewName)
    }

    deinit {
        for pointer in interned.values { free(pointer) }
        free(viewName)
    }

    func with<T>(_ body: (Mappings) throws -> T) throws -> T {
        try mutex.withLock {
            // Only this thread can get here while busy (see `mutex`).
            if busy { throw YDBError(.misuse, "mappings used from inside their own filter or sort callback") }
            busy = true
            defer { busy = false }
            return try body(mappings)
        }
    }

    /// A C copy of `name` that lives as long as the mappings (call inside `with`).
    func intern(_ name: String) -> UnsafePointer<CChar> {
        let bytes = Array(name.utf8)
        if let existing = interned[bytes] { return UnsafePointer(existing) }
        let copy = strdup(name)!
        interned[bytes] = copy
        return UnsafePointer(copy)
    }
}

func mappingsBox(_ handle: OpaquePointer?) throws -> MappingsBox {
    try lookup(handle, MappingsBox.self, "mappings")
}

/// Runs `body` on the locked mappings behind `handle`.
func withMappings<T>(_ handle: OpaquePointer?, _ body: (MappingsBox, Mappings) throws -> T) throws -> T {
    let box = try mappingsBox(handle)
    return try box.with { try body(box, $0) }
}

/// A C size_t index as Int, or YDB_NOTFOUND (nothing can be that far).
func position(_ value: UInt, _ what: String) throws -> Int {
    try found(index(value), "no \(what) \(value)")
}

// MARK: - Creating and freeing

@_cdecl("ydb_mappings_new")
public func ydb_mappings_new(_ view: UnsafePointer<CChar>?, _ groups: UnsafePointer<UnsafePointer<CChar>?>?,
                             _ groupCount: UInt, _ outMappings: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    answer(outMappings, "out_mappings") {
        let viewName = try string(view, "view name")
        let total = try count(groupCount, "count")
        var names: [String] = []
        if total > 0 {
            guard let groups else { throw YDBError(.invalidArgument, "groups is NULL but count is \(groupCount)") }
            names = try (0..<total).map { try string(groups[$0], "groups[\($0)]") }
        }
        return registry.register(MappingsBox(Mappings(groups: names, view: viewName), groupSource: nil))
    }
}

@_cdecl("ydb_mappings_new_dynamic")
public func ydb_mappings_new_dynamic(_ view: UnsafePointer<CChar>?, _ filter: CGroupFilterCallback?,
                                     _ sort: CGroupSortCallback?, _ ctx: UnsafeMutableRawPointer?,
                                     _ destroy: CDestructor?,
                                     _ outMappings: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    var created = false
    let status = answer(outMappings, "out_mappings") {
        let viewName = try string(view, "view name")
        guard let filter else { throw YDBError(.invalidArgument, "filter callback is NULL") }
        guard let sort else { throw YDBError(.invalidArgument, "sort callback is NULL") }
        let slot = GroupSourceSlot(GroupSourceCallbacks(filter: filter, sort: sort, ctx: ctx, destroy: destroy))
        created = true
        let mappings = Mappings(filterReading: { slot.accepts($0, $1) }, sortedBy: { slot.less($0, $1, $2) },
                                view: viewName)
        return registry.register(MappingsBox(mappings, groupSource: slot))
    }
    // Once the callbacks object exists, it owns the destructor.
    if !created { destroy?(ctx) }
    return status
}

@_cdecl("ydb_mappings_free")
public func ydb_mappings_free(_ handle: OpaquePointer?) {
    guard handle != nil else { return }
    guard let box = registry.unregister(handle, as: MappingsBox.self) else {
        fail(YDBErrorCode.misuse.rawValue, "mappings handle is not valid (freed or never made)")
        return
    }
    box.groupSource?.clear()
}

@_cdecl("ydb_mappings_view")
public func ydb_mappings_view(_ handle: OpaquePointer?,
                              _ outView: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    answer(outView, "out_view") { UnsafePointer(try mappingsBox(handle).viewName) }
}

@_cdecl("ydb_mappings_has_dynamic_groups")
public func ydb_mappings_has_dynamic_groups(_ handle: OpaquePointer?,
                                            _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") { try withMappings(handle) { $1.hasDynamicGroups } ? 1 : 0 }
}

private func enumerateNames(_ handle: OpaquePointer?, _ callback: CNameCallback?, _ ctx: UnsafeMutableRawPointer?,
                            _ names: (Mappings) -> [String]) -> Int32 {
    run {
        guard let callback else { throw YDBError(.invalidArgument, "callback is NULL") }
        // Copied under the lock, called without it: the callback may use the mappings.
        let list = try withMappings(handle) { _, mappings in names(mappings) }
        for name in list {
            if name.withCString({ callback(ctx, $0) }) != 0 { break }
        }
    }
}

@_cdecl("ydb_mappings_enumerate_all_groups")
public func ydb_mappings_enumerate_all_groups(_ handle: OpaquePointer?, _ callback: CNameCallback?,
                                              _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    enumerateNames(handle, callback, ctx) { $0.allGroups }
}

@_cdecl("ydb_mappings_enumerate_visible_groups")
public func ydb_mappings_enumerate_visible_groups(_ handle: OpaquePointer?, _ callback: CNameCallback?,
                                                  _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    enumerateNames(handle, callback, ctx) { $0.visibleGroups }
}

// MARK: - Update

@_cdecl("ydb_mappings_update")
public func ydb_mappings_update(_ handle: OpaquePointer?, _ txnHandle: OpaquePointer?) -> Int32 {
    run {
        let box = try mappingsBox(handle)
        let transaction = try usableTxn(txnHandle)
        try box.with { try $0.update(with: transaction) }
    }
}

@_cdecl("ydb_mappings_snapshot_of_last_update")
public func ydb_mappings_snapshot_of_last_update(_ handle: OpaquePointer?,
                                                 _ outSnapshot: UnsafeMutablePointer<UInt64>?) -> Int32 {
    answer(outSnapshot, "out_snapshot") {
        try found(withMappings(handle) { $1.snapshotOfLastUpdate }, "the mappings were never updated")
    }
}
