// Reading mappings: sections, counts, groups and the index translations
// between view indexes and table positions.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

// MARK: - Getters

/// The view group and index shown at (section, row), if any.
func shown(_ mappings: Mappings, _ section: UInt, _ row: UInt) -> (group: String, index: Int)? {
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
