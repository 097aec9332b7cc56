/// Getters: what the table shows as of the last update (or changeset).
///
/// Before the first update every getter answers "nothing": 0 sections, empty,
/// nil for every lookup. "Group" arguments name view groups; while consolidated,
/// the consolidated name also works where noted.
extension Mappings {
    /// The snapshot of the last `update(with:snapshot:)` or `changes(for:)`; nil = never updated.
    public var snapshotOfLastUpdate: UInt64? { lastSnapshot }

    /// Sections shown: 1 while consolidated, else the visible groups.
    public var numberOfSections: Int { layout?.numberOfSections ?? 0 }

    /// Rows shown in `section`, or nil when there is no such section.
    public func numberOfItems(inSection section: Int) -> Int? {
        layout?.numberOfRows(inSection: section)
    }

    /// Rows `group` shows (its window's length; 0 for a dynamic group that is hidden),
    /// or all rows shown for the consolidated name while consolidated; nil for a
    /// group the mappings do not have.
    public func numberOfItems(inGroup group: String) -> Int? {
        guard let layout else { return nil }
        if let name = layout.consolidatedName, bytesEqual(group, name) { return layout.totalShown }
        return layout.windows[group]?.length
    }

    /// The groups shown as sections, in order: `[consolidatedGroupName]` while consolidated.
    public var visibleGroups: [String] {
        guard let layout else { return [] }
        if let name = layout.consolidatedName { return [name] }
        return layout.visibleGroups
    }

    /// True when no section shows any row (and before the first update).
    public var isEmpty: Bool { (layout?.totalShown ?? 0) == 0 }

    /// The group shown in `section` (the consolidated name while consolidated), or nil.
    public func group(forSection section: Int) -> String? {
        layout?.groupName(ofSection: section)
    }

    /// The section showing `group`, or nil when it is hidden or unknown. While
    /// consolidated, every visible group (and the consolidated name) is in section 0.
    public func section(forGroup group: String) -> Int? {
        guard let layout else { return nil }
        if let name = layout.consolidatedName {
            return bytesEqual(group, name) || layout.visibleIndex[group] != nil ? 0 : nil
        }
        return layout.visibleIndex[group]
    }

    /// The view group and index shown at (`row`, `section`), or nil when nothing is shown there.
    public func groupAndIndex(forRow row: Int, inSection section: Int) -> (group: String, index: Int)? {
        layout?.location(of: TableIndexPath(section: section, row: row))
    }

    /// The view index shown at (`row`, `section`), or nil.
    public func index(forRow row: Int, inSection section: Int) -> Int? {
        groupAndIndex(forRow: row, inSection: section)?.index
    }

    /// The view index shown at `row` of `group`'s own window (range, reverse
    /// applied), or nil outside it — the inverse of `windowRow(forIndex:inGroup:)`.
    /// With the consolidated name, `row` is a row of the consolidated section.
    public func index(forRow row: Int, inGroup group: String) -> Int? {
        guard let layout else { return nil }
        if let name = layout.consolidatedName, bytesEqual(group, name) {
            return layout.location(of: TableIndexPath(section: 0, row: row))?.index
        }
        return layout.index(forWindowRow: row, inGroup: group)
    }

    /// Where the row at view `index` of `group` is shown, or nil when it is not
    /// (hidden group, outside the range, out of bounds).
    public func rowAndSection(forIndex index: Int, inGroup group: String) -> TableIndexPath? {
        layout?.indexPath(forIndex: index, inGroup: group)
    }

    /// The table row showing view `index` of `group`, or nil when it is not shown
    /// (hidden group, outside the range, out of bounds): YapDatabase's
    /// `rowForIndex:inGroup:`, shorthand for `getRow:section:forIndex:inGroup:`, so
    /// always `rowAndSection(forIndex:inGroup:)?.row`. While consolidated, that is
    /// the row in the consolidated section. The consolidated name is not a view
    /// group: nil.
    public func row(forIndex index: Int, inGroup group: String) -> Int? {
        rowAndSection(forIndex: index, inGroup: group)?.row
    }

    /// The row of `group`'s own window (range and reverse applied, counted from the
    /// window's first shown row) showing view `index`, or nil outside the window —
    /// the inverse of `index(forRow:inGroup:)`. Equals `row(forIndex:inGroup:)`
    /// unless consolidated, where the table row adds the rows shown by the visible
    /// groups before `group`.
    public func windowRow(forIndex index: Int, inGroup group: String) -> Int? {
        layout?.windowRow(forIndex: index, inGroup: group)
    }

    /// True while the visible groups are shown as one consolidated section.
    public var isUsingConsolidatedGroup: Bool { layout?.isConsolidated ?? false }

    /// Rows shown by all visible groups together (after ranges).
    public var numberOfItemsInAllGroups: Int { layout?.totalShown ?? 0 }

    /// Where `group`'s window stands in the whole group, in display order; for a
    /// group without range, the whole group. Nil for a group the mappings do not have.
    ///
    /// `offsetFromBeginning + length + offsetFromEnd` equals the group's row
    /// count, except for a range whose offset lies past the end of the group (a
    /// range set further out than the group reaches, or a flexible range whose
    /// rows all went): as in YapDatabase, it reports that offset on its pin's
    /// side, 0 on the other and length 0.
    public func rangePosition(forGroup group: String) -> RangePosition? {
        guard let layout, let window = layout.windows[group], let count = layout.counts[group] else {
            return nil
        }
        var before = window.lower, after = count - window.upper
        if let options = ranges[group] {
            let offset = options.isFixed ? options.offset : (flexibleStates[group]?.offset ?? options.offset)
            if offset > count {
                (before, after) = options.pin == .beginning ? (offset, 0) : (0, offset)
            }
        }
        let reversed = layout.reversed.contains(group)
        return RangePosition(offsetFromBeginning: reversed ? after : before,
                             offsetFromEnd: reversed ? before : after,
                             length: window.length)
    }

    /// The table position nearest to `row` of `group` — to keep a selection after the
    /// selected row vanished: the same row (or the group's last row) if the group
    /// still shows rows; else the last row of the nearest earlier group showing rows;
    /// else the first row of the nearest later one; nil when nothing is shown or the
    /// group is not one of the mappings'.
    public func nearestIndexPath(forRow row: Int, inGroup group: String) -> TableIndexPath? {
        guard let layout, let position = layout.allGroups.firstIndexOfName(group) else { return nil }
        func path(group: String, windowRow: Int) -> TableIndexPath? {
            guard let visible = layout.visibleIndex[group] else { return nil }
            if layout.isConsolidated {
                return TableIndexPath(section: 0, row: layout.rowOffsets[visible] + windowRow)
            }
            return TableIndexPath(section: visible, row: windowRow)
        }
        func shown(_ group: String) -> Int {
            layout.visibleIndex[group] == nil ? 0 : (layout.windows[group]?.length ?? 0)
        }
        if shown(group) > 0 { return path(group: group, windowRow: min(max(row, 0), shown(group) - 1)) }
        for earlier in layout.allGroups[..<position].reversed() where shown(earlier) > 0 {
            return path(group: earlier, windowRow: shown(earlier) - 1)
        }
        for later in layout.allGroups[(position + 1)...] where shown(later) > 0 {
            return path(group: later, windowRow: 0)
        }
        return nil
    }
}
