// The C side of a view's one-row callbacks: their types, their ctx and
// destructor, rows and transactions lent to them, and the calls the
// engine makes through them (grouping, sorting, sort keys).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

// Every view callback takes (ctx, txn, ...): txn is a read-only handle of
// the running transaction, registered for the call (`withCallbackTxn`).
public typealias CGroupingCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeRawPointer?,
                                                     OpaquePointer?) -> Int32
public typealias CSortingCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?,
                                                    UnsafeRawPointer?, UnsafeRawPointer?,
                                                    UnsafeMutablePointer<Int32>?) -> Int32
public typealias CSortKeyCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?,
                                                    UnsafeRawPointer?, OpaquePointer?) -> Int32
public typealias CGroupingBatchCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UInt,
                                                          UnsafePointer<UInt>?, UnsafeRawPointer?,
                                                          OpaquePointer?) -> Int32
public typealias CSortKeyBatchCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UInt,
                                                         UnsafePointer<UInt>?, UnsafePointer<UnsafePointer<CChar>?>?,
                                                         UnsafeRawPointer?, OpaquePointer?) -> Int32
public typealias CFindCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeRawPointer?,
                                                 UnsafeMutablePointer<Int32>?) -> Int32
public typealias CViewKeyCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?,
                                                    UnsafePointer<CChar>?, UInt) -> Int32
public typealias CViewRowCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?,
                                                    UnsafePointer<CChar>?, UInt,
                                                    UnsafeRawPointer?, UInt, UnsafeRawPointer?, UInt) -> Int32

/// `ydb_view_row` (all fields pointer-sized, so Swift lays it out as C does).
struct CViewRow {
    var collection: UnsafePointer<CChar>?
    var key: UnsafePointer<CChar>?
    var object: UnsafeRawPointer?
    var objectSize: UInt
    var metadata: UnsafeRawPointer?
    var metadataSize: UInt
}

// MARK: - Callbacks and their lifetime

/// A view's C callbacks with their ctx; the destructor runs when the last
/// reference goes (after `ViewSlot.clear()` and any call still running).
final class ViewCallbacks {
    let grouping: CGroupingCallback?
    let sorting: CSortingCallback?
    let sortKey: CSortKeyCallback?
    let groupingBatch: CGroupingBatchCallback?
    let sortKeyBatch: CSortKeyBatchCallback?
    let ctx: UnsafeMutableRawPointer?
    let destroy: CDestructor?

    init(grouping: CGroupingCallback?, sorting: CSortingCallback?, sortKey: CSortKeyCallback?,
         groupingBatch: CGroupingBatchCallback? = nil, sortKeyBatch: CSortKeyBatchCallback? = nil,
         ctx: UnsafeMutableRawPointer?, destroy: CDestructor?) {
        self.grouping = grouping
        self.sorting = sorting
        self.sortKey = sortKey
        self.groupingBatch = groupingBatch
        self.sortKeyBatch = sortKeyBatch
        self.ctx = ctx
        self.destroy = destroy
    }

    deinit { destroy?(ctx) }
}

/// What the engine's closures hold: clearing it releases the callbacks at
/// once (deterministically), whatever the engine still references.
typealias ViewSlot = CallbackSlot<ViewCallbacks>

extension CallbackSlot where Callbacks == ViewCallbacks {
    func current(_ view: String) throws -> ViewCallbacks {
        guard let callbacks = current else {
            throw YDBError(.callbackFailed, "view '\(view)': its callbacks were released")
        }
        return callbacks
    }
}

/// Where a grouping callback writes its answer (`ydb_group_result`), kept
/// in its thread's state (`ThreadCallState.groupResult`) as a sort key is: a
/// population groups every row, and an object per call cost more than
/// the call. The handle is a per-call token checked against the call
/// running on this thread: a registry entry per call (a global lock and a
/// dictionary, twice) would cost more again.
struct GroupResult {
    /// 0 while no grouping callback runs on the thread.
    var token: UInt = 0
    var group: String?
    var failure: String?

    /// Runs `body` with a fresh result as the thread's current one (the
    /// outer one put back after); returns the result and body's status.
    static func run(on thread: ThreadCallState, _ body: (OpaquePointer?) -> Int32) -> (GroupResult, Int32) {
        let outer = thread.groupResult
        thread.groupResult = GroupResult(token: thread.nextCallToken(groupResultTag))
        let status = body(OpaquePointer(bitPattern: thread.groupResult.token))
        let result = thread.groupResult
        thread.groupResult = outer
        return (result, status)
    }

    /// The state of the thread whose running grouping call `handle` names.
    static func activeThread(_ handle: OpaquePointer?) throws -> ThreadCallState {
        guard let handle else { throw YDBError(.misuse, "group result handle is NULL") }
        guard let thread = currentCallState(create: false), thread.groupResult.token != 0,
              thread.groupResult.token == UInt(bitPattern: handle) else {
            throw YDBError(.misuse, "group result handle is not the one of a grouping callback running on this thread")
        }
        return thread
    }
}

/// The group a grouping callback names: the thread's last one again when
/// the bytes are the same (a population names every row's group, most of
/// them the one before), else checked and made anew.
func groupName(_ pointer: UnsafePointer<CChar>?, on thread: ThreadCallState) throws -> String {
    guard let pointer else { throw YDBError(.invalidArgument, "group is NULL") }
    if let last = thread.lastGroupName, last.withCString({ strcmp($0, pointer) == 0 }) { return last }
    let name = try string(pointer, "group")
    thread.lastGroupName = name
    return name
}

/// The high bits of every group result token: never a registry token, a
/// sort-key token (0x5…), a callback transaction token (0x6…) or a small
/// integer.
let groupResultTag: UInt = 0x7000_0000_0000_0000

/// Empty blobs must reach C as non-NULL pointers (NULL means "not read").
// Never written or freed: shared freely.
nonisolated(unsafe) private let emptyBytes: UnsafeMutableRawPointer = .allocate(byteCount: 1, alignment: 1)

func withBytes<T>(_ data: [UInt8]?, _ body: (UnsafeRawPointer?, UInt) throws -> T) rethrows -> T {
    guard let data else { return try body(nil, 0) }
    if data.isEmpty { return try body(UnsafeRawPointer(emptyBytes), 0) }
    return try data.withUnsafeBytes { try body($0.baseAddress, UInt($0.count)) }
}

/// Lends `row` to C as a `ydb_view_row` for the duration of `body`.
func withCViewRow<T>(_ row: ViewRow, _ body: (UnsafeRawPointer) throws -> T) rethrows -> T {
    try row.collection.withCString { collection in
        try row.key.withCString { key in
            try withBytes(row.object) { object, objectSize in
                try withBytes(row.metadata) { metadata, metadataSize in
                    var cRow = CViewRow(collection: collection, key: key, object: object, objectSize: objectSize,
                                        metadata: metadata, metadataSize: metadataSize)
                    return try withUnsafePointer(to: &cRow) { try body(UnsafeRawPointer($0)) }
                }
            }
        }
    }
}

/// Calls a view's C comparator on two rows in C form, lending
/// `transaction` as its `ydb_txn *`: a commit's comparisons
/// (`callSorting`) and a population's (`CPreparedRows`) alike.
private func callComparator(_ view: String, _ callbacks: ViewCallbacks, _ sorting: CSortingCallback,
                            _ transaction: ReadTransaction, _ group: UnsafePointer<CChar>,
                            _ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) throws -> ViewOrder {
    try withCallbackTxn(transaction) { txn in try callComparator(view, callbacks, sorting, txn, group, lhs, rhs) }
}

/// `callComparator` with the transaction already lent as `txn`.
private func callComparator(_ view: String, _ callbacks: ViewCallbacks, _ sorting: CSortingCallback,
                            _ txn: OpaquePointer?, _ group: UnsafePointer<CChar>,
                            _ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) throws -> ViewOrder {
    var result: Int32 = 0
    let status = sorting(callbacks.ctx, txn, group, lhs, rhs, &result)
    if status != 0 {
        throw YDBError(.callbackFailed, "view '\(view)': sorting callback failed (returned \(status))")
    }
    return order(result)
}

/// Rows in C form (`ydb_view_row`) whose strings and bytes are copied into
/// blocks that never move and live as long as this object: a population's
/// rows (`CPreparedRows`) and a batch callback's (`withCBatch`).
final class CViewRowCopies {
    private var blocks: [UnsafeMutableRawPointer] = []
    private var free: UnsafeMutableRawPointer?
    private var freeBytes = 0
    /// The last collection copied: rows come collection by collection, and
    /// share one copy per run. Compared as bytes (two spellings of "é" are
    /// two collections).
    private var collection: (name: String, copy: UnsafePointer<CChar>)?
    private static let blockSize = 64 << 10

    deinit { for block in blocks { block.deallocate() } }   // CViewRow holds no references

    /// Room for `count` bytes at a multiple of `alignment`. A value larger
    /// than a block gets a block of its own.
    private func room(_ count: Int, alignment: Int) -> UnsafeMutableRawPointer {
        if let free {
            let padding = (alignment - Int(bitPattern: free) % alignment) % alignment
            if padding + count <= freeBytes {
                self.free = free + padding + count
                freeBytes -= padding + count
                return free + padding
            }
        }
        if count > Self.blockSize / 4 {
            let block = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
            blocks.append(block)
            return block
        }
        let block = UnsafeMutableRawPointer.allocate(byteCount: Self.blockSize, alignment: 16)
        blocks.append(block)
        free = block + count
        freeBytes = Self.blockSize - count
        return block
    }

    /// `string` as a C string.
    func copy(_ string: String) -> UnsafePointer<CChar> {
        var contiguous = string
        return contiguous.withUTF8 { bytes in
            let start = room(bytes.count + 1, alignment: 1)
            if let base = bytes.baseAddress { start.copyMemory(from: base, byteCount: bytes.count) }
            start.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
            return UnsafePointer(start.assumingMemoryBound(to: CChar.self))
        }
    }

    /// Objects and metadata start at a multiple of 8, as malloc'd data would
    /// for the types a callback may read in place.
    private func copy(_ data: [UInt8]?) -> (UnsafeRawPointer?, UInt) {
        guard let data else { return (nil, 0) }
        if data.isEmpty { return (UnsafeRawPointer(emptyBytes), 0) }
        let start = room(data.count, alignment: 8)
        data.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return (UnsafeRawPointer(start), UInt(data.count))
    }

    /// `row` in C form, pointing at copies of its parts.
    func row(_ row: ViewRow) -> CViewRow {
        let collection: UnsafePointer<CChar>
        if let last = self.collection, last.name.utf8.elementsEqual(row.collection.utf8) {
            collection = last.copy
        } else {
            collection = copy(row.collection)
            self.collection = (row.collection, collection)
        }
        let (object, objectSize) = copy(row.object), (metadata, metadataSize) = copy(row.metadata)
        return CViewRow(collection: collection, key: copy(row.key), object: object, objectSize: objectSize,
                        metadata: metadata, metadataSize: metadataSize)
    }
}

/// A group's rows as `ydb_view_row`s, for a population's sort through a C
/// comparator: each row converted once, as the scan hands it over (a sort
/// compares each row about log2(n) times), and held only here. A row's
/// strings and bytes are copied into blocks that never move, so its
/// `ydb_view_row` can point at them from the start; the engine keeps no
/// copy of the rows (memory while populating).
final class CPreparedRows: PreparedRows {
    private let view: String
    private let slot: ViewSlot
    private var rows: [CViewRow] = []
    private let copies = CViewRowCopies()

    init(view: String, slot: ViewSlot) {
        self.view = view
        self.slot = slot
    }

    func append(_ row: ViewRow) { rows.append(copies.row(row)) }

    func sort(_ group: String,
              _ sort: (_ compare: (ReadTransaction, Int, Int) throws -> ViewOrder) throws -> Void) throws {
        let callbacks = try slot.current(view)   // held for the whole sort
        guard let sorting = callbacks.sorting else { return try sort { _, _, _ in .same } }
        let view = self.view
        try group.withCString { groupName in
            try rows.withUnsafeBufferPointer { cRows in
                try sort { transaction, a, b in
                    precondition(cRows.indices.contains(a) && cRows.indices.contains(b), "row position out of range")
                    return try callComparator(view, callbacks, sorting, transaction, groupName,
                                              cRows.baseAddress! + a, cRows.baseAddress! + b)
                }
            }
        }
    }
}

func order(_ value: Int32) -> ViewOrder {
    value < 0 ? .ascending : value == 0 ? .same : .descending
}

/// Lends C the engine's read-only handle `transaction` (a callback's) as a
/// `ydb_txn *` for the duration of `body`. The handle is a per-call token
/// checked against the call running on this thread (`usableTxn`), like a sort
/// key's: no registry entry per call — sorting calls run O(n log n) times — and
/// a handle kept past its call, or used on another thread, is YDB_MISUSE.
func withCallbackTxn<T>(_ transaction: ReadTransaction?, _ body: (OpaquePointer?) throws -> T) rethrows -> T {
    guard let transaction else { return try body(nil) }
    return try lendingCallbackTxns { thread in try body(lendCallbackTxn(transaction, on: thread)) }
}

/// Runs `body` with the calling thread's state, which `lendCallbackTxn`
/// lends transactions through, and then restores the transaction lent
/// before (`body` may run inside another callback's call).
private func lendingCallbackTxns<T>(_ body: (ThreadCallState) throws -> T) rethrows -> T {
    let thread = currentCallState(create: true)!
    let outer = thread.callbackTxn
    defer { thread.callbackTxn = outer }
    return try body(thread)
}

/// A fresh token for `transaction`, the call running on `thread` from now
/// on (the caller restores what it replaced): the one call's `ydb_txn *`.
private func lendCallbackTxn(_ transaction: ReadTransaction, on thread: ThreadCallState) -> OpaquePointer? {
    let token = thread.nextCallToken(callbackTxnTag)
    thread.callbackTxn = (token, transaction)
    return OpaquePointer(bitPattern: token)
}

/// The high bits of every callback transaction token: never a registry
/// token, a sort-key token (0x5…) or a small integer.
let callbackTxnTag: UInt = 0x6000_0000_0000_0000

func callGrouping(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction,
                          _ row: ViewRow) throws -> String? {
    let callbacks = try slot.current(view)
    guard let grouping = callbacks.grouping else { return nil }
    return try lendingCallbackTxns { thread in
        try groupRow(view, callbacks.ctx, grouping, lendCallbackTxn(transaction, on: thread), row, on: thread)
    }
}

/// A population's rows grouped by the one-row callback, a chunk at a time
/// (`ViewGrouping.populationBatch`): the callbacks and the thread's state
/// are looked up once a chunk, where `callGrouping` looks them up once a
/// row: the work around the user's callbacks is a large part of a
/// sort-key population. Each call still gets a `ydb_txn *` of its own.
func groupEach(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction,
                       _ rows: [BatchedRow]) throws -> [String?] {
    let callbacks = try slot.current(view)
    guard let grouping = callbacks.grouping else { return rows.map { _ in nil } }
    return try lendingCallbackTxns { thread in
        try rows.map { batched in
            try groupRow(view, callbacks.ctx, grouping, lendCallbackTxn(transaction, on: thread), batched.row,
                         on: thread)
        }
    }
}

/// One call of a grouping callback, the transaction lent as `txn`.
private func groupRow(_ view: String, _ ctx: UnsafeMutableRawPointer?, _ grouping: CGroupingCallback,
                      _ txn: OpaquePointer?, _ row: ViewRow, on thread: ThreadCallState) throws -> String? {
    let (result, status) = GroupResult.run(on: thread) { handle in
        withCViewRow(row) { cRow in grouping(ctx, txn, cRow, handle) }
    }
    if let failure = result.failure {
        throw YDBError(.callbackFailed, "view '\(view)': grouping callback gave an invalid group: \(failure)")
    }
    if status != 0 {
        throw YDBError(.callbackFailed, "view '\(view)': grouping callback failed (returned \(status))")
    }
    return result.group
}

func callSorting(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction, _ group: String,
                         _ lhs: ViewRow, _ rhs: ViewRow) throws -> ViewOrder {
    let callbacks = try slot.current(view)
    guard let sorting = callbacks.sorting else { return .same }
    return try group.withCString { groupName in
        try withCViewRow(lhs) { first in
            try withCViewRow(rhs) { second in
                try callComparator(view, callbacks, sorting, transaction, groupName, first, second)
            }
        }
    }
}

/// `ViewSorting.FixedComparator` for a C comparator: the placed row and
/// its group in C form once a placement, the other row of each comparison
/// as it comes (converting both rows each time cost about a third of a
/// comparison). The thread's state that lends the transaction is looked up
/// once too, but each comparison still gets a handle of its own: one kept
/// from an earlier comparison is expired, as the header says.
func withFixedRow(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction, _ group: String,
                          _ row: ViewRow, _ body: ((ViewRow) throws -> ViewOrder) throws -> Void) throws {
    let callbacks = try slot.current(view)
    guard let sorting = callbacks.sorting else { return try body { _ in .same } }
    try lendingCallbackTxns { thread in
        try group.withCString { groupName in
            try withCViewRow(row) { fixed in
                try body { other in
                    let txn = lendCallbackTxn(transaction, on: thread)
                    return try withCViewRow(other) { second in
                        try callComparator(view, callbacks, sorting, txn, groupName, fixed, second)
                    }
                }
            }
        }
    }
}

func callSortKey(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction, _ group: String,
                         _ row: ViewRow) throws -> SortKey {
    let callbacks = try slot.current(view)
    guard let sortKey = callbacks.sortKey else { throw YDBError(.callbackFailed, "view '\(view)': no sort_key callback") }
    return try lendingCallbackTxns { thread in
        try keyOfRow(view, callbacks.ctx, sortKey, lendCallbackTxn(transaction, on: thread), group, row, on: thread)
    }
}

/// `groupEach` for the sort_key callback (`ViewSorting.populationKeyBatch`).
func keyEach(_ view: String, _ slot: ViewSlot, _ transaction: ReadTransaction,
                     _ rows: [BatchedRow]) throws -> [SortKey] {
    let callbacks = try slot.current(view)
    guard let sortKey = callbacks.sortKey else { throw YDBError(.callbackFailed, "view '\(view)': no sort_key callback") }
    return try lendingCallbackTxns { thread in
        try rows.map { batched in
            try keyOfRow(view, callbacks.ctx, sortKey, lendCallbackTxn(transaction, on: thread), batched.group,
                         batched.row, on: thread)
        }
    }
}

/// One call of a sort_key callback, the transaction lent as `txn`.
private func keyOfRow(_ view: String, _ ctx: UnsafeMutableRawPointer?, _ sortKey: CSortKeyCallback,
                      _ txn: OpaquePointer?, _ group: String, _ row: ViewRow, on thread: ThreadCallState) throws -> SortKey {
    let (key, failure, status) = SortKeyCall.run(on: thread) { handle in
        group.withCString { groupName in
            withCViewRow(row) { cRow in sortKey(ctx, txn, groupName, cRow, handle) }
        }
    }
    if let failure {
        throw YDBError(.callbackFailed, "view '\(view)': sort_key callback built an invalid key: \(failure)")
    }
    if status != 0 {
        throw YDBError(.callbackFailed, "view '\(view)': sort_key callback failed (returned \(status))")
    }
    return key
}

@_cdecl("ydb_group_result_set")
public func ydb_group_result_set(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?) -> Int32 {
    run {
        let thread = try GroupResult.activeThread(handle)
        do {
            thread.groupResult.group = try groupName(group, on: thread)
        } catch let error as YDBError {
            thread.groupResult.failure = error.message
            throw error
        }
    }
}
