/// A position in the table a mappings drives: a section and a row in it.
public struct TableIndexPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var section: Int
    public var row: Int

    public init(section: Int, row: Int) {
        self.section = section
        self.row = row
    }

    public static func < (lhs: TableIndexPath, rhs: TableIndexPath) -> Bool {
        (lhs.section, lhs.row) < (rhs.section, rhs.row)
    }

    public var description: String { "[\(section), \(row)]" }
}

/// What a table section stands for: one group, or the consolidated section.
/// Two layouts' sections with equal ids are "the same section" for a changeset.
enum SectionID: Hashable {
    case group(String)
    case consolidated(String)

    // By bytes, like every name (see `Name`).
    static func == (lhs: SectionID, rhs: SectionID) -> Bool {
        switch (lhs, rhs) {
        case let (.group(a), .group(b)), let (.consolidated(a), .consolidated(b)): return bytesEqual(a, b)
        default: return false
        }
    }

    func hash(into hasher: inout Hasher) {
        switch self {
        case .group(let name): hasher.combine(0); hashBytes(name, into: &hasher)
        case .consolidated(let name): hasher.combine(1); hashBytes(name, into: &hasher)
        }
    }
}

/// Everything the getters and the changeset code need to turn view positions into
/// table positions, computed once per update from the group counts and the
/// configuration (O(groups)); every lookup on it is O(1) or O(log groups).
struct MappingsLayout {
    /// The mappings' groups at this update, in section order.
    let allGroups: [String]
    /// Full row count of each group in `allGroups`.
    let counts: NameMap<Int>
    /// The window shown of each group in `allGroups`, in view order.
    let windows: NameMap<GroupWindow>
    /// Groups of `allGroups` shown in reverse.
    let reversed: NameSet
    /// Groups shown (each as its own section unless consolidated), in order.
    let visibleGroups: [String]
    /// The consolidated section's name while consolidated, else nil.
    let consolidatedName: String?
    /// Index of each visible group in `visibleGroups`.
    let visibleIndex: NameMap<Int>
    /// `rowOffsets[i]` = rows shown by `visibleGroups[0..<i]` (the consolidated section's prefix sums).
    let rowOffsets: [Int]

    init(allGroups: [String], counts: NameMap<Int>, windows: NameMap<GroupWindow>,
         reversed: NameSet, isDynamic: (String) -> Bool,
         consolidationThreshold: Int, consolidatedGroupName: String?) {
        self.allGroups = allGroups
        self.counts = counts
        self.windows = windows
        self.reversed = reversed
        let visible = allGroups.filter { !isDynamic($0) || (windows[$0]?.length ?? 0) > 0 }
        visibleGroups = visible
        visibleIndex = NameMap(uniqueKeysWithValues: visible.enumerated().map { ($1, $0) })
        var offsets = [0]
        offsets.reserveCapacity(visible.count + 1)
        for group in visible { offsets.append(offsets.last! + (windows[group]?.length ?? 0)) }
        rowOffsets = offsets
        if consolidationThreshold > 0, let name = consolidatedGroupName,
           !allGroups.containsName(name), offsets.last! < consolidationThreshold {
            consolidatedName = name
        } else {
            consolidatedName = nil
        }
    }

    var isConsolidated: Bool { consolidatedName != nil }

    /// Rows shown in all visible groups together.
    var totalShown: Int { rowOffsets.last! }

    /// The sections, top to bottom.
    var sections: [SectionID] {
        if let name = consolidatedName { return [.consolidated(name)] }
        return visibleGroups.map { .group($0) }
    }

    var numberOfSections: Int { isConsolidated ? 1 : visibleGroups.count }

    /// The name shown for a section (the consolidated name or the group).
    func groupName(ofSection section: Int) -> String? {
        if let name = consolidatedName { return section == 0 ? name : nil }
        return visibleGroups.indices.contains(section) ? visibleGroups[section] : nil
    }

    func numberOfRows(inSection section: Int) -> Int? {
        if isConsolidated { return section == 0 ? totalShown : nil }
        guard visibleGroups.indices.contains(section) else { return nil }
        return windows[visibleGroups[section]]?.length ?? 0
    }

    /// Which section shows the rows of `group`, if any.
    func sectionID(ofGroup group: String) -> SectionID? {
        guard visibleIndex[group] != nil else { return nil }
        if let name = consolidatedName { return .consolidated(name) }
        return .group(group)
    }

    /// Row within the group's own window for a view index, or nil outside it.
    func windowRow(forIndex index: Int, inGroup group: String) -> Int? {
        guard let window = windows[group], window.contains(index) else { return nil }
        return reversed.contains(group) ? window.upper - 1 - index : index - window.lower
    }

    /// View index for a row within the group's own window, or nil outside it.
    func index(forWindowRow row: Int, inGroup group: String) -> Int? {
        guard let window = windows[group], row >= 0, row < window.length else { return nil }
        return reversed.contains(group) ? window.upper - 1 - row : window.lower + row
    }

    /// The table position of the row at `index` in `group`, or nil when not shown.
    func indexPath(forIndex index: Int, inGroup group: String) -> TableIndexPath? {
        guard let visible = visibleIndex[group],
              let row = windowRow(forIndex: index, inGroup: group) else { return nil }
        if isConsolidated { return TableIndexPath(section: 0, row: rowOffsets[visible] + row) }
        return TableIndexPath(section: visible, row: row)
    }

    /// The group and view index shown at a table position, or nil when nothing is there.
    func location(of path: TableIndexPath) -> (group: String, index: Int)? {
        guard path.row >= 0 else { return nil }
        if isConsolidated {
            guard path.section == 0, path.row < totalShown else { return nil }
            // Last visible group whose prefix offset is <= row and which shows rows.
            var low = 0, high = visibleGroups.count - 1
            while low < high {
                let mid = (low + high + 1) / 2
                if rowOffsets[mid] <= path.row { low = mid } else { high = mid - 1 }
            }
            let group = visibleGroups[low]
            guard let index = index(forWindowRow: path.row - rowOffsets[low], inGroup: group) else { return nil }
            return (group, index)
        }
        guard visibleGroups.indices.contains(path.section) else { return nil }
        let group = visibleGroups[path.section]
        guard let index = index(forWindowRow: path.row, inGroup: group) else { return nil }
        return (group, index)
    }
}
