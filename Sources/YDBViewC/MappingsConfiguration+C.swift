// Configuring mappings: dynamic sections, unregistered views, reverse,
// cell drawing dependencies and auto-consolidation (ranges: MappingsRanges+C.swift).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

// MARK: - Configuration

func configure(_ handle: OpaquePointer?, _ group: UnsafePointer<CChar>?,
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
