@testable import YDBView

/// Compares every getter of `mappings` with the independent `model`; returns the
/// disagreements (empty when all agree).
func getterDisagreements(_ mappings: Mappings, model: MappingsModel, contents: FakeContents) -> [String] {
    var problems: [String] = []
    func check<T: Equatable>(_ actual: T, _ expected: T, _ what: @autoclosure () -> String) {
        if actual != expected { problems.append("\(what()): got \(actual), expected \(expected)") }
    }
    let table = model.table
    check(Table(mappings: mappings, contents: contents), table, "table")
    check(mappings.numberOfSections, table.sections.count, "numberOfSections")
    check(mappings.visibleGroups, table.groups, "visibleGroups")
    check(mappings.isUsingConsolidatedGroup, model.consolidatedName != nil, "isUsingConsolidatedGroup")
    let total = table.sections.reduce(0) { $0 + $1.count }
    check(mappings.numberOfItemsInAllGroups, total, "numberOfItemsInAllGroups")
    check(mappings.isEmpty, total == 0, "isEmpty")
    check(mappings.allGroups, model.groups, "allGroups")
    for section in -1...(table.sections.count) {
        let valid = table.sections.indices.contains(section)
        check(mappings.numberOfItems(inSection: section), valid ? table.sections[section].count : nil,
              "numberOfItems(inSection: \(section))")
        check(mappings.group(forSection: section), valid ? table.groups[section] : nil, "group(forSection: \(section))")
        let rows = valid ? table.sections[section].count : 0
        for row in -1...rows {
            let expected: (String, Int)? = valid && row >= 0 && row < rows
                ? contents.locate(rowid: table.sections[section][row]).map { ($0.group, $0.index) } : nil
            let actual = mappings.groupAndIndex(forRow: row, inSection: section)
            if actual?.group != expected?.0 || actual?.index != expected?.1 {
                problems.append("groupAndIndex(\(row), \(section)): got \(String(describing: actual)), expected \(String(describing: expected))")
            }
            check(mappings.index(forRow: row, inSection: section), expected?.1, "index(forRow: \(row), inSection: \(section))")
        }
    }
    for group in model.groups + ["zz"] {
        let isVisible = model.visible.contains(group)
        let expectedSection: Int? = model.consolidatedName != nil ? (isVisible ? 0 : nil) : model.visible.firstIndex(of: group)
        check(mappings.section(forGroup: group), expectedSection, "section(forGroup: \(group))")
        check(mappings.numberOfItems(inGroup: group), model.shown[group]?.count, "numberOfItems(inGroup: \(group))")
        let shown = model.shown[group] ?? []
        for row in -1...(shown.count) {
            check(mappings.index(forRow: row, inGroup: group), shown.indices.contains(row) ? shown[row] : nil,
                  "index(forRow: \(row), inGroup: \(group))")
        }
        for index in -1...(model.counts[group] ?? 0) {
            check(mappings.windowRow(forIndex: index, inGroup: group), shown.firstIndex(of: index),
                  "windowRow(forIndex: \(index), inGroup: \(group))")
            let expectedPath = isVisible ? contents.rowid(at: index, inGroup: group).flatMap { table.position(of: $0) } : nil
            check(mappings.rowAndSection(forIndex: index, inGroup: group), expectedPath,
                  "rowAndSection(forIndex: \(index), inGroup: \(group))")
            check(mappings.row(forIndex: index, inGroup: group), expectedPath?.row,
                  "row(forIndex: \(index), inGroup: \(group))")
        }
        if let past = model.pastTheEnd[group] {
            // A range placed past the end reports its offset on its pin's side.
            check(mappings.rangePosition(forGroup: group),
                  RangePosition(offsetFromBeginning: past.fromDisplayBeginning ? past.offset : 0,
                                offsetFromEnd: past.fromDisplayBeginning ? 0 : past.offset, length: 0),
                  "rangePosition(\(group))")
        } else if let count = model.counts[group] {
            let indexes = model.windowIndexes[group]!
            let lower = indexes.first ?? rangeLowerForEmpty(mappings, group: group, count: count)
            let before = lower, after = count - lower - indexes.count
            let reversed = model.reversed.contains(group)
            check(mappings.rangePosition(forGroup: group),
                  RangePosition(offsetFromBeginning: reversed ? after : before,
                                offsetFromEnd: reversed ? before : after, length: indexes.count),
                  "rangePosition(\(group))")
            // The range options read back carry the window's current length and (flexible) offset.
            if let options = mappings.rangeOptions(forGroup: group), let position = mappings.rangePosition(forGroup: group) {
                check(options.length, position.length, "rangeOptions(\(group)).length")
                if options.isFlexible {
                    check(options.offset, options.pin == .beginning ? position.offsetFromBeginning : position.offsetFromEnd,
                          "rangeOptions(\(group)).offset")
                }
            }
        } else {
            check(mappings.rangePosition(forGroup: group), nil, "rangePosition(\(group))")
        }
        for row in [0, 1, 3, 100] {
            check(mappings.nearestIndexPath(forRow: row, inGroup: group),
                  expectedNearest(model: model, row: row, group: group), "nearestIndexPath(\(row), \(group))")
        }
    }
    if let name = model.consolidatedName {
        check(mappings.numberOfItems(inGroup: name), total, "numberOfItems(consolidated)")
        for row in -1...total {
            let expected = table.row(at: TableIndexPath(section: 0, row: row)).flatMap { contents.locate(rowid: $0)?.index }
            check(mappings.index(forRow: row, inGroup: name), expected, "index(forRow: \(row), consolidated)")
        }
    }
    return problems
}

/// An empty window's position cannot be read from its (absent) indexes; take the
/// one the mappings report, checked only for consistency (before + after == count).
private func rangeLowerForEmpty(_ mappings: Mappings, group: String, count: Int) -> Int {
    guard let position = mappings.rangePosition(forGroup: group) else { return 0 }
    return mappings.isReversed(forGroup: group) ? position.offsetFromEnd : position.offsetFromBeginning
}

private func expectedNearest(model: MappingsModel, row: Int, group: String) -> TableIndexPath? {
    guard let position = model.groups.firstIndex(of: group) else { return nil }
    func count(_ g: String) -> Int { model.visible.contains(g) ? model.shown[g]!.count : 0 }
    func path(_ g: String, _ r: Int) -> TableIndexPath {
        if model.consolidatedName != nil {
            let offset = model.visible.prefix { $0 != g }.reduce(0) { $0 + count($1) }
            return TableIndexPath(section: 0, row: offset + r)
        }
        return TableIndexPath(section: model.visible.firstIndex(of: g)!, row: r)
    }
    if count(group) > 0 { return path(group, min(row, count(group) - 1)) }
    if let earlier = model.groups[..<position].last(where: { count($0) > 0 }) { return path(earlier, count(earlier) - 1) }
    if let later = model.groups[(position + 1)...].first(where: { count($0) > 0 }) { return path(later, 0) }
    return nil
}
