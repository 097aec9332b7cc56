@testable import YDBView

/// A table as a mappings shows it, with the rows named by rowid: every
/// change of a changeset names its row that way.
typealias Table = BatchUpdate<Int64>.Table

extension BatchUpdate.Table where Row == Int64 {
    /// Reads the table through the mappings' getters only (-1 for a row the
    /// getters point at but the contents lack).
    init(mappings: Mappings, contents: any ViewContents) {
        var groups: [String] = []
        var sections: [[Int64]] = []
        for section in 0..<mappings.numberOfSections {
            groups.append(mappings.group(forSection: section) ?? "<nil>")
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
        self.init(groups: groups, sections: sections)
    }

    func position(of rowid: Int64) -> TableIndexPath? {
        for (section, rows) in sections.enumerated() {
            if let row = rows.firstIndex(of: rowid) { return TableIndexPath(section: section, row: row) }
        }
        return nil
    }
}
