// Mappings' range windows: ydb_mappings_set_range_fixed / _flexible,
// ydb_range_options in and out, and ydb_range_options_set_length.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

/// `ydb_range_options`, field for field (natural alignment, as in C).
struct CRangeOptions {
    var structSize: UInt = UInt(MemoryLayout<CRangeOptions>.stride)
    var kind: Int32
    var length: Int64
    var offset: Int64
    var pin: Int32
    var maxLength: Int64
    var minLength: Int64
    var grow: Int32

    /// The first version is this one: every member is needed.
    static let sized = SizedStruct<CRangeOptions>(name: "ydb_range_options", initMacro: "YDB_RANGE_OPTIONS_INIT",
                                                  minimumSize: MemoryLayout<CRangeOptions>.stride)
    static let empty = CRangeOptions(kind: 0, length: 0, offset: 0, pin: 0, maxLength: 0, minLength: 0, grow: 0)
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
        let c = try CRangeOptions.sized.load(options, defaults: .empty)
        mappings.setRangeOptions(try rangeOptions(c), forGroup: groupName)
    }
}

@_cdecl("ydb_range_options_set_length")
public func ydb_range_options_set_length(_ options: UnsafeMutableRawPointer?, _ length: Int64) -> Int32 {
    run {
        guard let options else { throw YDBError(.invalidArgument, "options is NULL") }
        var c = try CRangeOptions.sized.load(options, defaults: .empty)
        switch c.kind {
        case 1: if length < 1 { throw YDBError(.lengthNotPositive(Int(length))) }
        case 2: if length < 0 { throw YDBError(.negativeLength(Int(length))) }
        default: throw YDBError(.invalidArgument, "kind \(c.kind) is not a YDB_RANGE_* value")
        }
        c.length = length
        if c.kind == 1 { c.maxLength = length }
        try CRangeOptions.sized.store(c, at: options)
    }
}

@_cdecl("ydb_mappings_range_options")
public func ydb_mappings_range_options(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
                                       _ outOptions: UnsafeMutableRawPointer?) -> Int32 {
    run {
        // Cleared (as far as the caller's struct_size goes) before anything
        // else can fail, as every output is.
        let out = try required(outOptions, "out_options")
        try CRangeOptions.sized.store(.empty, at: out)
        let groupName = try string(group, "group")
        let options = try found(withMappings(handle) { $1.rangeOptions(forGroup: groupName) },
                                "group '\(groupName)' has no range options")
        try CRangeOptions.sized.store(cRangeOptions(options), at: out)
    }
}

@_cdecl("ydb_mappings_remove_range_options")
public func ydb_mappings_remove_range_options(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?) -> Int32 {
    configure(handle, group) { $0.removeRangeOptions(forGroup: $1) }
}
