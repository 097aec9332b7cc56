@testable import YDBView

/// A table as a mappings shows it: sections (with the group each shows), each a list of rowids.
struct Table: Equatable, CustomStringConvertible {
    var names: [String]
    var sections: [[Int64]]

    /// Reads the table through the mappings' getters only.
    init(mappings: Mappings, contents: any ViewContents) {
        names = []
        sections = []
        for section in 0..<mappings.numberOfSections {
            names.append(mappings.group(forSection: section) ?? "<nil>")
            var rows: [Int64] = []
            for row in 0..<(mappings.numberOfItems(inSection: section) ?? -1) {
                if let (group, index) = mappings.groupAndIndex(forRow: row, inSection: section),
                   let rowid = contents.rowid(at: index, inGroup: group) {
                    rows.append(rowid)
                } else {
                    rows.append(-1)
                }
            }
            sections.append(rows)
        }
    }

    init(names: [String], sections: [[Int64]]) {
        self.names = names
        self.sections = sections
    }

    func position(of rowid: Int64) -> TableIndexPath? {
        for (section, rows) in sections.enumerated() {
            if let row = rows.firstIndex(of: rowid) { return TableIndexPath(section: section, row: row) }
        }
        return nil
    }

    func row(at path: TableIndexPath) -> Int64? {
        guard sections.indices.contains(path.section), sections[path.section].indices.contains(path.row) else {
            return nil
        }
        return sections[path.section][path.row]
    }

    var description: String {
        zip(names, sections).map { "\($0): \($1)" }.joined(separator: " | ")
    }
}

struct OracleFailure: Error, CustomStringConvertible {
    let description: String
}

/// Applies a changeset to a table the way UITableView applies a batch update, and
/// checks every rule on the way:
/// 1. at most one change per row; every path points at the row the change names;
/// 2. section deletes and row deletes/moves-out at ORIGINAL paths — every row of a
///    deleted section must be removed by a row change (our documented decision);
/// 3. section inserts (ascending), then row inserts/moves-in at FINAL paths in
///    ascending order — every row of an inserted section must arrive by a row change;
/// 4. updates at original paths of rows neither deleted nor moved, never in a
///    deleted section.
enum TableOracle {
    static func apply(_ changeset: Changeset, to old: Table) throws -> Table {
        func fail(_ message: String) -> OracleFailure { OracleFailure(description: message) }
        var seen = Set<Int64>()
        for change in changeset.rowChanges where !seen.insert(change.rowid).inserted {
            throw fail("two changes for row \(change.rowid)")
        }
        let deletedSections = Set(changeset.sectionChanges.filter { $0.type == .delete }.map(\.index))
        let insertedSections = changeset.sectionChanges.filter { $0.type == .insert }.map(\.index).sorted()
        for section in deletedSections where !old.sections.indices.contains(section) {
            throw fail("section delete \(section) out of range")
        }
        // Removals at original paths.
        var removed = Set<TableIndexPath>()
        for change in changeset.rowChanges where change.type == .delete || change.type == .move {
            guard let path = change.indexPath else { throw fail("\(change) has no indexPath") }
            guard old.row(at: path) == change.originalRowid else {
                throw fail("\(change): original path holds \(String(describing: old.row(at: path)))")
            }
            removed.insert(path)
        }
        for section in deletedSections {
            for row in old.sections[section].indices where !removed.contains(TableIndexPath(section: section, row: row)) {
                throw fail("row \(old.sections[section][row]) of deleted section \(section) not reported")
            }
        }
        // Updates.
        for change in changeset.rowChanges where change.type == .update {
            guard let path = change.indexPath, change.newIndexPath == nil else { throw fail("\(change): bad paths") }
            guard old.row(at: path) == change.rowid else { throw fail("\(change): update path holds another row") }
            if deletedSections.contains(path.section) { throw fail("\(change): update in deleted section") }
        }
        var names: [String] = []
        var sections: [[Int64]] = []
        for (index, rows) in old.sections.enumerated() where !deletedSections.contains(index) {
            names.append(old.names[index])
            sections.append(rows.enumerated()
                .filter { !removed.contains(TableIndexPath(section: index, row: $0.offset)) }.map(\.element))
        }
        for section in insertedSections {
            guard section <= sections.count else { throw fail("section insert \(section) out of range") }
            let name = changeset.sectionChanges.first { $0.type == .insert && $0.index == section }!.group
            names.insert(name, at: section)
            sections.insert([], at: section)
        }
        let arrivals = changeset.rowChanges
            .filter { $0.type == .insert || $0.type == .move }
            .sorted { ($0.newIndexPath ?? TableIndexPath(section: -1, row: -1)) < ($1.newIndexPath ?? TableIndexPath(section: -1, row: -1)) }
        for change in arrivals {
            guard let path = change.newIndexPath else { throw fail("\(change) has no newIndexPath") }
            guard sections.indices.contains(path.section), path.row <= sections[path.section].count else {
                throw fail("\(change): final path out of range")
            }
            sections[path.section].insert(change.rowid, at: path.row)
        }
        let arrived = Set(arrivals.map(\.rowid))
        for section in insertedSections {
            for rowid in sections[section] where !arrived.contains(rowid) {
                throw fail("row \(rowid) of inserted section \(section) not reported")
            }
        }
        return Table(names: names, sections: sections)
    }
}
