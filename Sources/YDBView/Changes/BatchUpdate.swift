/// A changeset as a table applies it, and the one checker that applies it:
/// the CLI's demo, the replay tests and the engine's tests all hold
/// changesets to `apply(to:readingUnnamedRowsFrom:)` and `check(from:to:)`.
///
/// Applying follows `UITableView`'s batch-update rules and checks each of
/// them, so that an invalid changeset fails with the change at fault:
/// 1. every change has the paths its type needs (delete, update: original;
///    insert: final; move: both), and no row, original path or final path
///    has two changes;
/// 2. section deletes and row deletes and moves-out at ORIGINAL paths, each
///    path holding the row its change names; every row of a deleted section
///    is deleted or moved by a row change (as `Changeset` promises);
/// 3. updates at the original paths of rows that stay, never in a deleted
///    section;
/// 4. section inserts in ascending order, then row inserts and moves-in at
///    FINAL paths in ascending order, each within its section as it then is —
///    so every row of an inserted section arrives by a row change.
///
/// `Row` is what names a row in the caller's table. A changeset names every
/// row by rowid (`BatchUpdate<Int64>(changeset)`), but by (collection, key)
/// only the rows the commits touched (`BatchUpdate<RowKey>(changeset)`): a row
/// that merely entered a range window is named by nothing, and its insert
/// takes the row the new table shows there.
package struct BatchUpdate<Row: Hashable> {
    /// A table: the group each section shows, and each section's rows, top to bottom.
    package struct Table: Hashable, CustomStringConvertible {
        package var groups: [String]
        package var sections: [[Row]]

        package init(groups: [String], sections: [[Row]]) {
            self.groups = groups
            self.sections = sections
        }

        /// The row at `path`, or nil when the table has no such row.
        package func row(at path: TableIndexPath) -> Row? {
            guard sections.indices.contains(path.section), sections[path.section].indices.contains(path.row) else {
                return nil
            }
            return sections[path.section][path.row]
        }

        package var description: String {
            zip(groups, sections).map { group, rows in
                "\(group): [" + rows.map { "\($0)" }.joined(separator: ", ") + "]"
            }.joined(separator: " | ")
        }
    }

    /// One row change in table terms: its type, its paths and the rows it names.
    package struct Change: CustomStringConvertible {
        package var type: RowChange.Kind
        /// The ORIGINAL path: set for a delete, a move and an update.
        package var indexPath: TableIndexPath?
        /// The FINAL path: set for an insert and a move.
        package var newIndexPath: TableIndexPath?
        /// The row at `indexPath` before the update, when the change names it.
        package var originalRow: Row?
        /// The row at `newIndexPath` after the update, when the change names it.
        package var finalRow: Row?

        package init(type: RowChange.Kind, indexPath: TableIndexPath?, newIndexPath: TableIndexPath?,
                     originalRow: Row?, finalRow: Row?) {
            self.type = type
            self.indexPath = indexPath
            self.newIndexPath = newIndexPath
            self.originalRow = originalRow
            self.finalRow = finalRow
        }

        package var description: String {
            func text(_ path: TableIndexPath?) -> String { path.map { "\($0)" } ?? "nil" }
            let paths: String
            switch type {
            case .insert: paths = text(newIndexPath)
            case .delete, .update: paths = text(indexPath)
            case .move: paths = "\(text(indexPath)) -> \(text(newIndexPath))"
            }
            let row = (originalRow ?? finalRow).map { " \($0)" } ?? ""
            return "\(type) \(paths)\(row)"
        }
    }

    /// Why a batch update is invalid, naming the change at fault.
    package struct Invalid: Error, CustomStringConvertible {
        package let description: String
    }

    /// Section deletes (original indexes) and section inserts (final indexes).
    package var sectionChanges: [SectionChange]
    package var rowChanges: [Change]

    package init(sectionChanges: [SectionChange], rowChanges: [Change]) {
        self.sectionChanges = sectionChanges
        self.rowChanges = rowChanges
    }

    /// Applies the changes to `old` and returns the table they give. A change
    /// that names no row inserts the row `new` shows at its final path (a
    /// move takes the row it moved out).
    ///
    /// - Throws: `Invalid`, naming the first change that breaks a rule.
    package func apply(to old: Table, readingUnnamedRowsFrom new: Table? = nil) throws -> Table {
        try checkPaths()
        let deletedSections = try sectionDeletes(in: old)
        var changeOfRow: [Row: Int] = [:]
        func claim(_ row: Row, by number: Int) throws {
            if let other = changeOfRow.updateValue(number, forKey: row), other != number {
                throw invalid(number, "row \(row) is also changed by \(name(other))")
            }
        }

        // Deletes, moves-out and updates, at original paths.
        var changeAtOriginalPath: [TableIndexPath: Int] = [:]
        for (number, change) in rowChanges.enumerated() where change.type != .insert {
            let path = change.indexPath!
            guard let row = old.row(at: path) else {
                throw invalid(number, "original path \(path) is not in the old table (\(size(of: old, at: path)))")
            }
            if let named = change.originalRow, named != row {
                throw invalid(number, "original path \(path) holds \(row), not the row the change names")
            }
            if let other = changeAtOriginalPath.updateValue(number, forKey: path) {
                throw invalid(number, "\(name(other)) is at the same original path")
            }
            if change.type == .update, deletedSections.contains(path.section) {
                throw invalid(number, "reloads a row of deleted section \(path.section)")
            }
            try claim(row, by: number)
        }
        func isRemoved(_ path: TableIndexPath) -> Bool {
            changeAtOriginalPath[path].map { rowChanges[$0].type != .update } ?? false
        }

        // The sections that stay, without their removed rows; then the inserted sections.
        var groups: [String] = []
        var survivors: [[Row]] = []
        for (section, rows) in old.sections.enumerated() {
            let paths = rows.indices.map { TableIndexPath(section: section, row: $0) }
            if deletedSections.contains(section) {
                if let kept = paths.first(where: { !isRemoved($0) }) {
                    throw Invalid(description: "delete section \(section) (\(old.groups[section])): its row "
                                  + "\(old.row(at: kept)!) at \(kept) is neither deleted nor moved")
                }
                continue
            }
            groups.append(old.groups[section])
            survivors.append(zip(paths, rows).filter { !isRemoved($0.0) }.map(\.1))
        }
        let sectionInserts = sectionChanges.filter { $0.type == .insert }.sorted { $0.index < $1.index }
        for (insert, next) in zip(sectionInserts, sectionInserts.dropFirst()) where insert.index == next.index {
            throw Invalid(description: "two section inserts at index \(insert.index) (\(insert.group), \(next.group))")
        }
        for insert in sectionInserts {
            guard insert.index <= groups.count else {
                throw Invalid(description: "\(insert): beyond the end of the table, which then has "
                              + "\(groups.count) sections")
            }
            groups.insert(insert.group, at: insert.index)
            survivors.insert([], at: insert.index)
        }

        // Inserts and moves-in, at final paths in ascending order.
        var arrivals: [[(number: Int, row: Int, content: Row)]] = Array(repeating: [], count: groups.count)
        let arriving = rowChanges.indices.filter { rowChanges[$0].newIndexPath != nil }
            .sorted { rowChanges[$0].newIndexPath! < rowChanges[$1].newIndexPath! }
        for (number, next) in zip(arriving, arriving.dropFirst())
        where rowChanges[number].newIndexPath == rowChanges[next].newIndexPath {
            throw invalid(next, "\(name(number)) arrives at the same final path")
        }
        for number in arriving {
            let change = rowChanges[number], path = change.newIndexPath!
            guard arrivals.indices.contains(path.section) else {
                throw invalid(number, "final section \(path.section) does not exist: the table then has "
                              + "\(groups.count) sections")
            }
            let row: Row
            if let named = change.finalRow {
                row = named
            } else if change.type == .move {
                row = old.row(at: change.indexPath!)!
            } else if let new {
                guard let shown = new.row(at: path) else {
                    throw invalid(number, "names no row, and final path \(path) is not in the new table "
                                  + "(\(size(of: new, at: path)))")
                }
                row = shown
            } else {
                throw invalid(number, "names no row, and no new table was given to read it from")
            }
            try claim(row, by: number)
            arrivals[path.section].append((number, path.row, row))
        }
        var sections: [[Row]] = []
        for (section, arrived) in arrivals.enumerated() {
            var rows: [Row] = [], kept = survivors[section][...]
            rows.reserveCapacity(kept.count + arrived.count)
            // Inserting each arrival in ascending order is merging: the rows
            // before its final row are the survivors not yet placed.
            for arrival in arrived {
                while rows.count < arrival.row, let next = kept.popFirst() { rows.append(next) }
                guard rows.count == arrival.row else {
                    throw invalid(arrival.number, "final path is beyond the end of section \(section), which then "
                                  + "has \(rows.count) rows")
                }
                rows.append(arrival.content)
            }
            rows.append(contentsOf: kept)
            sections.append(rows)
        }
        return Table(groups: groups, sections: sections)
    }

    /// Applies the changes to `old` and checks that they give exactly `new`.
    ///
    /// - Throws: `Invalid`, naming the change at fault or the first row
    ///   where the result and `new` differ.
    package func check(from old: Table, to new: Table) throws {
        try Self.expect(try apply(to: old, readingUnnamedRowsFrom: new), equals: new)
    }

    /// Throws `Invalid` naming the first difference between a table the
    /// changes gave and the new table.
    private static func expect(_ applied: Table, equals new: Table) throws {
        guard applied != new else { return }
        guard applied.groups == new.groups else {
            throw Invalid(description: "the changes give sections \(applied.groups), the new table has \(new.groups)")
        }
        for (section, (rows, expected)) in zip(applied.sections, new.sections).enumerated() where rows != expected {
            let row = zip(rows, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(rows.count, expected.count)
            let found = row < rows.count ? "\(rows[row])" : "nothing"
            let wanted = row < expected.count ? "\(expected[row])" : "nothing"
            throw Invalid(description: "the changes give \(found) at \([section, row]) of \(new.groups[section]), "
                          + "the new table has \(wanted) (\(rows.count) rows against \(expected.count))")
        }
    }

    // MARK: Rules

    /// Every change has the paths its type needs, and only those.
    private func checkPaths() throws {
        for (number, change) in rowChanges.enumerated() {
            let needsOriginal = change.type != .insert
            let needsFinal = change.type == .insert || change.type == .move
            if (change.indexPath != nil) != needsOriginal {
                throw invalid(number, needsOriginal ? "has no original path" : "has an original path")
            }
            if (change.newIndexPath != nil) != needsFinal {
                throw invalid(number, needsFinal ? "has no final path" : "has a final path")
            }
        }
    }

    /// The sections deleted: each once, in the old table, and named by the group it showed.
    private func sectionDeletes(in old: Table) throws -> Set<Int> {
        var deleted = Set<Int>()
        for change in sectionChanges where change.type == .delete {
            guard old.groups.indices.contains(change.index) else {
                throw Invalid(description: "\(change): the old table has \(old.groups.count) sections")
            }
            guard old.groups[change.index] == change.group else {
                throw Invalid(description: "\(change): the section showed \(old.groups[change.index])")
            }
            guard deleted.insert(change.index).inserted else {
                throw Invalid(description: "\(change): deleted twice")
            }
        }
        return deleted
    }

    private func name(_ number: Int) -> String { "row change \(number) (\(rowChanges[number]))" }

    private func invalid(_ number: Int, _ why: String) -> Invalid {
        Invalid(description: "\(name(number)): \(why)")
    }

    /// What `table` has where `path` points past it.
    private func size(of table: Table, at path: TableIndexPath) -> String {
        table.sections.indices.contains(path.section)
            ? "section \(path.section) has \(table.sections[path.section].count) rows"
            : "it has \(table.sections.count) sections"
    }
}

// MARK: Edit scripts

extension BatchUpdate {
    /// Applies an edit script (`Changeset.steps()`) to `old` one step at a
    /// time, checking each step against the table as it then stands: a
    /// section is removed only when empty and inserted only within the
    /// table; a row step's paths exist at that moment and hold the row it
    /// names (`named(step, true)`: the row before the step, `false`: after
    /// it); a move changes the row's place. A step that names no row
    /// inserts the row `new` shows at the step's final position.
    ///
    /// - Throws: `Invalid`, naming the first step that breaks a rule.
    package static func apply(steps: [EditStep], to old: Table, naming named: (EditStep, Bool) -> Row?,
                              readingUnnamedRowsFrom new: Table? = nil) throws -> Table {
        var table = old
        for (number, step) in steps.enumerated() {
            func invalid(_ why: String) -> Invalid { Invalid(description: "step \(number) (\(step)): \(why)") }
            func rows(in section: Int) throws -> Int {
                guard table.sections.indices.contains(section) else {
                    throw invalid("section \(section) does not exist: the table has \(table.sections.count)")
                }
                return table.sections[section].count
            }
            func take(at path: TableIndexPath) throws -> Row {
                guard let row = table.row(at: path) else {
                    throw invalid("\(path) is not in the table (\(try rows(in: path.section)) rows)")
                }
                if let expected = named(step, true), expected != row {
                    throw invalid("\(path) holds \(row), not the row the step names")
                }
                return table.sections[path.section].remove(at: path.row)
            }
            func arriving(_ fallback: Row?) throws -> Row {
                if let row = named(step, false) ?? fallback { return row }
                guard let final = step.finalPosition, let row = new?.row(at: final) else {
                    throw invalid("names no row, and the new table has none at its final position")
                }
                return row
            }
            func put(_ row: Row, at path: TableIndexPath) throws {
                guard (0...(try rows(in: path.section))).contains(path.row) else {
                    throw invalid("row \(path.row) is beyond the end of section \(path.section), which has "
                                  + "\(table.sections[path.section].count) rows")
                }
                table.sections[path.section].insert(row, at: path.row)
            }
            let path = step.row.map { TableIndexPath(section: step.section, row: $0) }
            switch step.kind {
            case .removeSection:
                _ = try rows(in: step.section)
                guard table.groups[step.section] == step.group else {
                    throw invalid("the section shows \(table.groups[step.section])")
                }
                guard table.sections[step.section].isEmpty else {
                    throw invalid("the section still has \(table.sections[step.section].count) rows")
                }
                table.groups.remove(at: step.section)
                table.sections.remove(at: step.section)
            case .insertSection:
                guard (0...table.groups.count).contains(step.section) else {
                    throw invalid("beyond the end of the table, which has \(table.groups.count) sections")
                }
                table.groups.insert(step.group ?? "", at: step.section)
                table.sections.insert([], at: step.section)
            case .removeRow:
                _ = try take(at: path!)
            case .insertRow:
                try put(try arriving(nil), at: path!)
            case .moveRow:
                let destination = TableIndexPath(section: step.toSection!, row: step.toRow!)
                guard destination != path! else { throw invalid("leaves the row where it is") }
                let moved = try take(at: path!)
                try put(try arriving(moved), at: destination)
            case .reloadRow:
                // A reload re-reads the row: one removed and set again under
                // its key (a new id) may still show its old id until then.
                guard let row = table.row(at: path!) else { throw invalid("\(path!) is not in the table") }
                let after = named(step, false)
                if let after, after != row, named(step, true) != row {
                    throw invalid("\(path!) holds \(row), not the row the step names")
                }
                if let after { table.sections[path!.section][path!.row] = after }
            }
        }
        return table
    }

    /// Applies an edit script to `old` and checks that it gives exactly `new`.
    package static func check(steps: [EditStep], from old: Table, to new: Table,
                              naming named: (EditStep, Bool) -> Row?) throws {
        try expect(try apply(steps: steps, to: old, naming: named, readingUnnamedRowsFrom: new), equals: new)
    }
}

extension BatchUpdate where Row == Int64 {
    /// Edit-script rows named by rowid: the old id before a step, the new one after.
    package static func rowid(_ step: EditStep, before: Bool) -> Int64? {
        before ? step.originalRowid : step.rowid
    }

    /// `changeset` with its rows named by rowid: every change names its row
    /// (a row removed and set again under the same key by its old rowid
    /// before and its new one after).
    package init(_ changeset: Changeset) {
        self.init(sectionChanges: changeset.sectionChanges, rowChanges: changeset.rowChanges.map {
            Change(type: $0.type, indexPath: $0.indexPath, newIndexPath: $0.newIndexPath,
                   originalRow: $0.originalRowid, finalRow: $0.rowid)
        })
    }
}

extension BatchUpdate where Row == RowKey {
    /// Edit-script rows named by (collection, key), when the step knows them.
    package static func rowKey(_ step: EditStep, before: Bool) -> RowKey? { step.rowKey }

    /// `changeset` with its rows named by (collection, key), as a table that
    /// shows keys sees it: a row the commits did not touch is named by nothing.
    package init(_ changeset: Changeset) {
        self.init(sectionChanges: changeset.sectionChanges, rowChanges: changeset.rowChanges.map {
            Change(type: $0.type, indexPath: $0.indexPath, newIndexPath: $0.newIndexPath,
                   originalRow: $0.rowKey, finalRow: $0.rowKey)
        })
    }
}
