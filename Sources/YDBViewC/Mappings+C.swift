// ydb_mappings_*: mappings objects, their configuration and getters, and
// the view helpers that read rows by table position.

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

/// `ydb_range_options`, field for field (natural alignment, as in C).
struct CRangeOptions {
    var kind: Int32
    var length: Int64
    var offset: Int64
    var pin: Int32
    var maxLength: Int64
    var minLength: Int64
    var grow: Int32
}

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
private func withMappings<T>(_ handle: OpaquePointer?, _ body: (MappingsBox, Mappings) throws -> T) throws -> T {
    let box = try mappingsBox(handle)
    return try box.with { try body(box, $0) }
}

/// A C size_t index as Int, or YDB_NOTFOUND (nothing can be that far).
private func position(_ value: UInt, _ what: String) throws -> Int {
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

// MARK: - Configuration

private func configure(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                       _ body: (Mappings, String) throws -> Void) -> Int32 {
    run {
        let groupName = try string(group, "group")
        try withMappings(handle) { try body($1, groupName) }
    }
}

/// A flag about one group: 1 or 0.
private func groupFlag(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                       _ outFlag: UnsafeMutablePointer<Int32>?, _ body: (Mappings, String) -> Bool) -> Int32 {
    answer(outFlag, "out_flag") {
        let groupName = try string(group, "group")
        return try withMappings(handle) { body($1, groupName) } ? 1 : 0
    }
}

@_cdecl("ydb_mappings_set_dynamic_section")
public func ydb_mappings_set_dynamic_section(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                                             _ isDynamic: Int32) -> Int32 {
    configure(handle, group) { $0.setIsDynamicSection(isDynamic != 0, forGroup: $1) }
}

@_cdecl("ydb_mappings_is_dynamic_section")
public func ydb_mappings_is_dynamic_section(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                                            _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    groupFlag(handle, group, outFlag) { $0.isDynamicSection(forGroup: $1) }
}

@_cdecl("ydb_mappings_set_dynamic_section_for_all_groups")
public func ydb_mappings_set_dynamic_section_for_all_groups(_ handle: OpaquePointer?, _ isDynamic: Int32) -> Int32 {
    run { try withMappings(handle) { $1.setIsDynamicSectionForAllGroups(isDynamic != 0) } }
}

@_cdecl("ydb_mappings_is_dynamic_section_for_all_groups")
public func ydb_mappings_is_dynamic_section_for_all_groups(_ handle: OpaquePointer?,
                                                           _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") { try withMappings(handle) { $1.isDynamicSectionForAllGroups } ? 1 : 0 }
}

@_cdecl("ydb_mappings_set_allows_unregistered_view")
public func ydb_mappings_set_allows_unregistered_view(_ handle: OpaquePointer?, _ allows: Int32) -> Int32 {
    run { try withMappings(handle) { $1.allowsUnregisteredView = allows != 0 } }
}

@_cdecl("ydb_mappings_allows_unregistered_view")
public func ydb_mappings_allows_unregistered_view(_ handle: OpaquePointer?,
                                                  _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") { try withMappings(handle) { $1.allowsUnregisteredView } ? 1 : 0 }
}

private func pin(_ value: Int32) throws -> RangePin {
    switch value {
    case 0: return .beginning
    case 1: return .end
    default: throw YDBError(.invalidArgument, "pin \(value) is not a YDB_PIN_* value")
    }
}

private func grow(_ value: Int32) throws -> RangeGrowOptions {
    switch value {
    case 0: return .pinSide
    case 1: return .nonPinSide
    case 2: return .bothSides
    default: throw YDBError(.invalidArgument, "grow \(value) is not a YDB_GROW_* value")
    }
}

private func int(_ value: Int64, _ what: String) throws -> Int {
    guard let result = Int(exactly: value) else { throw YDBError(.invalidArgument, "\(what) is out of range") }
    return result
}

@_cdecl("ydb_mappings_set_range_fixed")
public func ydb_mappings_set_range_fixed(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                                         _ length: Int64, _ offset: Int64, _ pinValue: Int32) -> Int32 {
    configure(handle, group) { mappings, groupName in
        let options = try RangeOptions.fixed(length: try int(length, "length"), offset: try int(offset, "offset"),
                                             from: try pin(pinValue))
        mappings.setRangeOptions(options, forGroup: groupName)
    }
}

@_cdecl("ydb_mappings_set_range_flexible")
public func ydb_mappings_set_range_flexible(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                                            _ length: Int64, _ offset: Int64, _ pinValue: Int32,
                                            _ maxLength: Int64, _ minLength: Int64, _ growValue: Int32) -> Int32 {
    configure(handle, group) { mappings, groupName in
        if maxLength < 0 { throw YDBError(.invalidArgument, "max_length must not be negative (0: no limit)") }
        let options = try RangeOptions.flexible(
            length: try int(length, "length"), offset: try int(offset, "offset"), from: try pin(pinValue),
            maxLength: maxLength == 0 ? .max : try int(maxLength, "max_length"),
            minLength: try int(minLength, "min_length"), grow: try grow(growValue))
        mappings.setRangeOptions(options, forGroup: groupName)
    }
}

/// The engine's options for a `ydb_range_options` (see ydb_mappings_set_range_options).
private func rangeOptions(_ c: CRangeOptions) throws -> RangeOptions {
    let offset = try int(c.offset, "offset")
    let from = try pin(c.pin)
    switch c.kind {
    case 1:
        if c.minLength != 0 { throw YDBError(.invalidArgument, "a fixed range has min_length 0 (got \(c.minLength))") }
        if c.grow != 0 { throw YDBError(.invalidArgument, "a fixed range has grow YDB_GROW_PIN_SIDE (got \(c.grow))") }
        if c.maxLength < 0 { throw YDBError(.invalidArgument, "max_length must not be negative (got \(c.maxLength))") }
        if c.maxLength == 0 { return try RangeOptions.fixed(length: try int(c.length, "length"), offset: offset, from: from) }
        // max_length is the length as set; length may be the current (clipped) one read back.
        guard c.length >= 0, c.length <= c.maxLength else {
            throw YDBError(.invalidArgument, "a fixed range's length \(c.length) is not between 0 and its max_length "
                           + "\(c.maxLength) (its length as set: set both, or use ydb_range_options_set_length)")
        }
        return try RangeOptions.fixed(length: try int(c.maxLength, "max_length"), offset: offset, from: from)
    case 2:
        if c.maxLength < 0 { throw YDBError(.invalidArgument, "max_length must not be negative (0: no limit)") }
        let length = try int(c.length, "length")
        if length < 0 { throw YDBError(.negativeLength(length)) }
        // Made with length 1, then given its own: a flexible range may be set with length 0.
        return try RangeOptions.flexible(
            length: 1, offset: offset, from: from,
            maxLength: c.maxLength == 0 ? .max : try int(c.maxLength, "max_length"),
            minLength: try int(c.minLength, "min_length"), grow: try grow(c.grow)
        ).copy(withNewLength: length)
    default:
        throw YDBError(.invalidArgument, "kind \(c.kind) is not a YDB_RANGE_* value")
    }
}

/// A `ydb_range_options` for the engine's options.
private func cRangeOptions(_ options: RangeOptions) -> CRangeOptions {
    let growValue: Int32
    switch options.growOptions {
    case .pinSide: growValue = 0
    case .nonPinSide: growValue = 1
    case .bothSides: growValue = 2
    }
    return CRangeOptions(kind: options.isFixed ? 1 : 2, length: Int64(options.length),
                         offset: Int64(options.offset), pin: options.pin == .beginning ? 0 : 1,
                         maxLength: options.maxLength == .max ? 0 : Int64(options.maxLength),
                         minLength: Int64(options.minLength), grow: growValue)
}

@_cdecl("ydb_mappings_set_range_options")
public func ydb_mappings_set_range_options(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                                           _ options: UnsafeRawPointer?) -> Int32 {
    configure(handle, group) { mappings, groupName in
        guard let options else { throw YDBError(.invalidArgument, "options is NULL") }
        mappings.setRangeOptions(try rangeOptions(options.loadUnaligned(as: CRangeOptions.self)), forGroup: groupName)
    }
}

@_cdecl("ydb_range_options_set_length")
public func ydb_range_options_set_length(_ options: UnsafeMutableRawPointer?, _ length: Int64) -> Int32 {
    run {
        guard let options else { throw YDBError(.invalidArgument, "options is NULL") }
        var c = options.loadUnaligned(as: CRangeOptions.self)
        switch c.kind {
        case 1: if length < 1 { throw YDBError(.lengthNotPositive(Int(length))) }
        case 2: if length < 0 { throw YDBError(.negativeLength(Int(length))) }
        default: throw YDBError(.invalidArgument, "kind \(c.kind) is not a YDB_RANGE_* value")
        }
        c.length = length
        if c.kind == 1 { c.maxLength = length }
        options.storeBytes(of: c, as: CRangeOptions.self)
    }
}

@_cdecl("ydb_mappings_range_options")
public func ydb_mappings_range_options(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                                       _ outOptions: UnsafeMutableRawPointer?) -> Int32 {
    let empty = CRangeOptions(kind: 0, length: 0, offset: 0, pin: 0, maxLength: 0, minLength: 0, grow: 0)
    return answer(bytesAt: outOptions, "out_options", cleared: empty) {
        let groupName = try string(group, "group")
        let options = try found(withMappings(handle) { $1.rangeOptions(forGroup: groupName) },
                                "group '\(groupName)' has no range options")
        return cRangeOptions(options)
    }
}

@_cdecl("ydb_mappings_remove_range_options")
public func ydb_mappings_remove_range_options(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?) -> Int32 {
    configure(handle, group) { $0.removeRangeOptions(forGroup: $1) }
}

@_cdecl("ydb_mappings_set_reversed")
public func ydb_mappings_set_reversed(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                                      _ isReversed: Int32) -> Int32 {
    configure(handle, group) { $0.setIsReversed(isReversed != 0, forGroup: $1) }
}

@_cdecl("ydb_mappings_is_reversed")
public func ydb_mappings_is_reversed(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                                     _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    groupFlag(handle, group, outFlag) { $0.isReversed(forGroup: $1) }
}

@_cdecl("ydb_mappings_set_cell_drawing_dependency_offsets")
public func ydb_mappings_set_cell_drawing_dependency_offsets(_ handle: OpaquePointer?,
                                                             _ group: UnsafePointer<CChar>?,
                                                             _ offsets: UnsafePointer<Int32>?,
                                                             _ offsetCount: UInt) -> Int32 {
    configure(handle, group) { mappings, groupName in
        let total = try count(offsetCount, "count")
        var values = Set<Int>()
        if total > 0 {
            guard let offsets else { throw YDBError(.invalidArgument, "offsets is NULL but count is \(offsetCount)") }
            values = Set((0..<total).map { Int(offsets[$0]) })
        }
        mappings.setCellDrawingDependencyOffsets(values, forGroup: groupName)
    }
}

@_cdecl("ydb_mappings_cell_drawing_dependency_offsets")
public func ydb_mappings_cell_drawing_dependency_offsets(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                                                         _ outOffsets: UnsafeMutablePointer<Int32>?,
                                                         _ capacity: UInt,
                                                         _ outCount: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outCount, "out_count") {
        if capacity > 0 && outOffsets == nil {
            throw YDBError(.misuse, "out_offsets is NULL but capacity is \(capacity)")
        }
        let groupName = try string(group, "group")
        let offsets = try withMappings(handle) { $1.cellDrawingDependencyOffsets(forGroup: groupName) }.sorted()
        for (slot, offset) in offsets.enumerated() where UInt(slot) < capacity {
            outOffsets![slot] = Int32(clamping: offset)
        }
        return UInt(offsets.count)
    }
}

@_cdecl("ydb_mappings_set_auto_consolidate_groups")
public func ydb_mappings_set_auto_consolidate_groups(_ handle: OpaquePointer?, _ threshold: UInt,
                                                     _ name: UnsafePointer<CChar>?) -> Int32 {
    run {
        let consolidatedName = try string(name, "name")
        try withMappings(handle) {
            $1.setAutoConsolidateGroups(threshold: Int(exactly: threshold) ?? .max, name: consolidatedName)
        }
    }
}

@_cdecl("ydb_mappings_auto_consolidate_groups_threshold")
public func ydb_mappings_auto_consolidate_groups_threshold(_ handle: OpaquePointer?,
                                                           _ outThreshold: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outThreshold, "out_threshold") {
        try UInt(clamping: withMappings(handle) { $1.autoConsolidateGroupsThreshold })
    }
}

@_cdecl("ydb_mappings_consolidated_group_name")
public func ydb_mappings_consolidated_group_name(_ handle: OpaquePointer?,
                                                 _ outName: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    answer(outName, "out_name") {
        try withMappings(handle) { box, mappings in
            box.intern(try found(mappings.consolidatedGroupName, "no consolidated group name was set"))
        }
    }
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

// MARK: - Getters

/// The view group and index shown at (section, row), if any.
private func shown(_ mappings: Mappings, _ section: UInt, _ row: UInt) -> (group: String, index: Int)? {
    guard let rowIndex = index(row), let sectionIndex = index(section) else { return nil }
    return mappings.groupAndIndex(forRow: rowIndex, inSection: sectionIndex)
}

@_cdecl("ydb_mappings_number_of_sections")
public func ydb_mappings_number_of_sections(_ handle: OpaquePointer?, _ outCount: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outCount, "out_count") { try UInt(clamping: withMappings(handle) { $1.numberOfSections }) }
}

@_cdecl("ydb_mappings_number_of_items_in_section")
public func ydb_mappings_number_of_items_in_section(_ handle: OpaquePointer?, _ section: UInt,
                                                    _ outCount: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outCount, "out_count") {
        let items = try withMappings(handle) { $1.numberOfItems(inSection: try position(section, "section")) }
        return try UInt(clamping: found(items, "no section \(section)"))
    }
}

@_cdecl("ydb_mappings_number_of_items_in_group")
public func ydb_mappings_number_of_items_in_group(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                                                  _ outCount: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outCount, "out_count") {
        let groupName = try string(group, "group")
        return try UInt(found(withMappings(handle) { $1.numberOfItems(inGroup: groupName) },
                              "the mappings have no group '\(groupName)'"))
    }
}

@_cdecl("ydb_mappings_number_of_items_in_all_groups")
public func ydb_mappings_number_of_items_in_all_groups(_ handle: OpaquePointer?,
                                                       _ outCount: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outCount, "out_count") { try UInt(clamping: withMappings(handle) { $1.numberOfItemsInAllGroups }) }
}

@_cdecl("ydb_mappings_is_empty")
public func ydb_mappings_is_empty(_ handle: OpaquePointer?, _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") { try withMappings(handle) { $1.isEmpty } ? 1 : 0 }
}

@_cdecl("ydb_mappings_is_using_consolidated_group")
public func ydb_mappings_is_using_consolidated_group(_ handle: OpaquePointer?,
                                                     _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") { try withMappings(handle) { $1.isUsingConsolidatedGroup } ? 1 : 0 }
}

@_cdecl("ydb_mappings_group_for_section")
public func ydb_mappings_group_for_section(_ handle: OpaquePointer?, _ section: UInt,
                                           _ outGroup: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    answer(outGroup, "out_group") {
        try withMappings(handle) { box, mappings in
            let group = mappings.group(forSection: try position(section, "section"))
            return box.intern(try found(group, "no section \(section)"))
        }
    }
}

@_cdecl("ydb_mappings_section_for_group")
public func ydb_mappings_section_for_group(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                                           _ outSection: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outSection, "out_section") {
        let groupName = try string(group, "group")
        return try UInt(found(withMappings(handle) { $1.section(forGroup: groupName) },
                              "group '\(groupName)' is not shown in a section"))
    }
}

@_cdecl("ydb_mappings_group_and_index_for_row")
public func ydb_mappings_group_and_index_for_row(_ handle: OpaquePointer?, _ row: UInt, _ section: UInt,
                                                 _ outGroup: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                                 _ outIndex: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(Out(outGroup, "out_group"), Out(outIndex, "out_index")) {
        try withMappings(handle) { box, mappings in
            let place = try found(shown(mappings, section, row),
                                  "nothing is shown at row \(row) of section \(section)")
            return (box.intern(place.group), UInt(place.index))
        }
    }
}

@_cdecl("ydb_mappings_index_for_row_in_section")
public func ydb_mappings_index_for_row_in_section(_ handle: OpaquePointer?, _ row: UInt, _ section: UInt,
                                                  _ outIndex: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outIndex, "out_index") {
        try UInt(found(withMappings(handle) { shown($1, section, row)?.index },
                       "nothing is shown at row \(row) of section \(section)"))
    }
}

@_cdecl("ydb_mappings_index_for_row_in_group")
public func ydb_mappings_index_for_row_in_group(_ handle: OpaquePointer?, _ row: UInt, _ group: UnsafePointer<CChar>?,
                                                _ outIndex: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outIndex, "out_index") {
        let groupName = try string(group, "group")
        return try UInt(found(withMappings(handle) { _, mappings in
            index(row).flatMap { mappings.index(forRow: $0, inGroup: groupName) }
        }, "nothing is shown at row \(row) of the group"))
    }
}

@_cdecl("ydb_mappings_row_for_index")
public func ydb_mappings_row_for_index(_ handle: OpaquePointer?, _ position: UInt, _ group: UnsafePointer<CChar>?,
                                       _ outRow: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outRow, "out_row") {
        let groupName = try string(group, "group")
        return try UInt(found(withMappings(handle) { _, mappings in
            index(position).flatMap { mappings.row(forIndex: $0, inGroup: groupName) }
        }, "index \(position) of the group is not shown"))
    }
}

@_cdecl("ydb_mappings_window_row_for_index")
public func ydb_mappings_window_row_for_index(_ handle: OpaquePointer?, _ position: UInt,
                                              _ group: UnsafePointer<CChar>?,
                                              _ outRow: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(outRow, "out_row") {
        let groupName = try string(group, "group")
        return try UInt(found(withMappings(handle) { _, mappings in
            index(position).flatMap { mappings.windowRow(forIndex: $0, inGroup: groupName) }
        }, "index \(position) of the group is not in its window"))
    }
}

@_cdecl("ydb_mappings_row_and_section_for_index")
public func ydb_mappings_row_and_section_for_index(_ handle: OpaquePointer?, _ position: UInt,
                                                   _ group: UnsafePointer<CChar>?,
                                                   _ outSection: UnsafeMutablePointer<UInt>?,
                                                   _ outRow: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(section: outSection, row: outRow) {
        let groupName = try string(group, "group")
        return try found(withMappings(handle) { _, mappings in
            index(position).flatMap { mappings.rowAndSection(forIndex: $0, inGroup: groupName) }
        }, "index \(position) of the group is not shown")
    }
}

@_cdecl("ydb_mappings_nearest_index_path")
public func ydb_mappings_nearest_index_path(_ handle: OpaquePointer?, _ row: UInt, _ group: UnsafePointer<CChar>?,
                                            _ outSection: UnsafeMutablePointer<UInt>?,
                                            _ outRow: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(section: outSection, row: outRow) {
        let groupName = try string(group, "group")
        return try found(withMappings(handle) { _, mappings in
            mappings.nearestIndexPath(forRow: Int(exactly: row) ?? .max, inGroup: groupName)
        }, "no row is shown near that one")
    }
}

@_cdecl("ydb_mappings_range_position")
public func ydb_mappings_range_position(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                                        _ outFromBeginning: UnsafeMutablePointer<UInt>?,
                                        _ outFromEnd: UnsafeMutablePointer<UInt>?,
                                        _ outLength: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(Out(outFromBeginning, "out_offset_from_beginning"), Out(outFromEnd, "out_offset_from_end"),
           Out(outLength, "out_length")) {
        let groupName = try string(group, "group")
        let position = try found(withMappings(handle) { $1.rangePosition(forGroup: groupName) },
                                 "the mappings have no group '\(groupName)'")
        return (UInt(position.offsetFromBeginning), UInt(position.offsetFromEnd), UInt(position.length))
    }
}

@_cdecl("ydb_mappings_has_changes")
public func ydb_mappings_has_changes(_ handle: OpaquePointer?, _ list: OpaquePointer?,
                                     _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFlag, "out_flag") {
        let notifications = try lookup(list, NotificationListBox.self, "notification list").notifications
        return try withMappings(handle) { $1.hasChanges(for: notifications) } ? 1 : 0
    }
}

// MARK: - Rows by table position

/// The view group and index shown at (section, row), or YDB_NOTFOUND.
private func location(_ box: MappingsBox, _ section: UInt, _ row: UInt) throws -> (group: String, index: Int) {
    try found(box.with { shown($0, section, row) }, "nothing is shown at section \(section), row \(row)")
}

/// The mappings' view in transaction `txnHandle`, or YDB_NOTFOUND.
private func mappedView(_ txnHandle: OpaquePointer?, _ box: MappingsBox) throws -> ViewTransaction {
    try usableTxn(txnHandle).view(box.mappings.viewName)
}

@_cdecl("ydb_view_key_at_index_path")
public func ydb_view_key_at_index_path(_ txnHandle: OpaquePointer?, _ handle: OpaquePointer?,
                                       _ section: UInt, _ row: UInt,
                                       _ outCollection: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                       _ outKey: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    answer(Out(outCollection, "out_collection"), Out(outKey, "out_key")) {
        let box = try mappingsBox(handle)
        let view = try mappedView(txnHandle, box)
        let place = try location(box, section, row)
        return try mallocStrings(found(view.rowKey(at: place.index, inGroup: place.group),
                                       "no row at index \(place.index) of group '\(place.group)'"))
    }
}

private func blobAtIndexPath(_ txnHandle: OpaquePointer?, _ handle: OpaquePointer?, _ section: UInt, _ row: UInt,
                             _ outData: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                             _ outSize: UnsafeMutablePointer<UInt>?, _ what: String,
                             _ pick: ((key: RowKey, object: [UInt8], metadata: [UInt8]?)) -> [UInt8]?) -> Int32 {
    answer(Out(outData, "out_\(what)"), Out(outSize, "out_size")) {
        let box = try mappingsBox(handle)
        let view = try mappedView(txnHandle, box)
        let place = try location(box, section, row)
        let blob = try found(view.row(at: place.index, inGroup: place.group).flatMap(pick),
                             "no \(what) at section \(section), row \(row)")
        return (try mallocCopy(blob), UInt(blob.count))
    }
}

@_cdecl("ydb_view_object_at_index_path")
public func ydb_view_object_at_index_path(_ txnHandle: OpaquePointer?, _ handle: OpaquePointer?,
                                          _ section: UInt, _ row: UInt,
                                          _ outObject: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                          _ outSize: UnsafeMutablePointer<UInt>?) -> Int32 {
    blobAtIndexPath(txnHandle, handle, section, row, outObject, outSize, "object") { $0.object }
}

@_cdecl("ydb_view_metadata_at_index_path")
public func ydb_view_metadata_at_index_path(_ txnHandle: OpaquePointer?, _ handle: OpaquePointer?,
                                            _ section: UInt, _ row: UInt,
                                            _ outMetadata: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                            _ outSize: UnsafeMutablePointer<UInt>?) -> Int32 {
    blobAtIndexPath(txnHandle, handle, section, row, outMetadata, outSize, "metadata") { $0.metadata }
}

@_cdecl("ydb_view_index_path_for_key")
public func ydb_view_index_path_for_key(_ txnHandle: OpaquePointer?, _ handle: OpaquePointer?,
                                        _ collection: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?,
                                        _ outSection: UnsafeMutablePointer<UInt>?,
                                        _ outRow: UnsafeMutablePointer<UInt>?) -> Int32 {
    answer(section: outSection, row: outRow) {
        let box = try mappingsBox(handle)
        let collectionName = try string(collection, "collection")
        let keyName = try string(key, "key")
        let view = try mappedView(txnHandle, box)
        let path = try view.position(forKey: keyName, inCollection: collectionName).flatMap { place in
            try box.with { $0.rowAndSection(forIndex: place.index, inGroup: place.group) }
        }
        return try found(path, "the row is not shown")
    }
}
