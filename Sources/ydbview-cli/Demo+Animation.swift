import YDBView

/// The animated table `ydbview-cli demo` draws on a terminal: the three shown
/// groups side by side (or one under the other when the terminal is too
/// narrow), each commit drawn twice — the old table with the rows about to
/// leave or move marked, then the new one with the rows inserted, moved and
/// reloaded marked — as a table view would animate the changeset.
extension Demo {
    enum Mark {
        case inserted, deleted, moved, updated

        var symbol: String {
            switch self {
            case .inserted: "+"
            case .deleted: "−"
            case .moved: "↕"
            case .updated: "~"
            }
        }

        var style: DemoScreen.Style {
            switch self {
            case .inserted: .green
            case .deleted: .red
            case .moved: .yellow
            case .updated: .cyan
            }
        }
    }

    /// What one frame marks, by group and row (a frame shows groups, not
    /// section numbers, so that a section appearing does not shift them).
    struct Marks {
        var rows: [String: [Int: Mark]] = [:]
        var sections: [String: Mark] = [:]

        var isEmpty: Bool { rows.isEmpty && sections.isEmpty }

        mutating func mark(_ path: TableIndexPath?, in table: Table, _ mark: Mark) {
            guard let path, table.groups.indices.contains(path.section) else { return }
            rows[table.groups[path.section], default: [:]][path.row] = mark
        }
    }

    /// The first frame, before any commit.
    func drawInitialFrame(on screen: DemoScreen, table: Table, heading: String? = nil) {
        screen.draw(frame(table, marks: Marks(),
                          heading: heading ?? "commit 0/\(options.commits): the top \(Demo.topN) as registered",
                          legend: legend(before: false), changes: []))
    }

    /// Draws a commit's changeset under `heading`: the old table with what
    /// leaves, then the new one with what arrived, sharing the pause between them.
    func animate(on screen: DemoScreen, heading: String, changeset: Changeset,
                 old: Table, new: Table, delay: Int) throws {
        var before = Marks(), after = Marks()
        for change in changeset.sectionChanges {
            if change.type == .delete { before.sections[change.group] = .deleted } else { after.sections[change.group] = .inserted }
        }
        for change in changeset.rowChanges {
            switch change.type {
            case .insert:
                after.mark(change.newIndexPath, in: new, .inserted)
            case .delete:
                before.mark(change.indexPath, in: old, .deleted)
            case .move:
                before.mark(change.indexPath, in: old, .moved)
                after.mark(change.newIndexPath, in: new, .moved)
            case .update:
                after.mark(change.newIndexPath ?? change.finalPosition ?? change.indexPath, in: new, .updated)
            }
        }
        // The changeset in words, without the "now:" lines the table shows.
        let changes = describe(changeset, old: old, new: new).filter { !$0.contains(" now: ") }
        if !before.isEmpty {
            screen.draw(frame(old, marks: before, heading: heading, legend: legend(before: true), changes: changes))
            try screen.pause(milliseconds: delay * 2 / 5)
            screen.draw(frame(new, marks: after, heading: heading, legend: legend(before: false), changes: changes))
            try screen.pause(milliseconds: delay - delay * 2 / 5)
        } else {
            screen.draw(frame(new, marks: after, heading: heading, legend: legend(before: false), changes: changes))
            try screen.pause(milliseconds: delay)
        }
    }

    func legend(before: Bool) -> DemoScreen.Line {
        let marks: [Mark] = before ? [.deleted, .moved] : [.inserted, .moved, .updated]
        var line: DemoScreen.Line = [.init(text: before ? "before: " : "after:  ", style: .dim)]
        for mark in marks {
            let name = switch mark {
            case .inserted: "inserted"
            case .deleted: "leaving"
            case .moved: before ? "moving" : "moved"
            case .updated: "reloaded"
            }
            line.append(.init(text: "\(mark.symbol) \(name)", style: mark.style))
            line.append(.init(text: "  "))
        }
        line.append(.init(text: "(rows numbered from 0, as in index paths)", style: .dim))
        return line
    }

    func frame(_ table: Table, marks: Marks, heading: String, legend: DemoScreen.Line,
               changes: [String]) -> [DemoScreen.Line] {
        let columns = DemoScreen.size().columns
        let width = (columns - 1) / Demo.shownGroups.count
        let sideBySide = width >= 24
        let cells = Demo.shownGroups.map { column($0, of: table, marks: marks, width: sideBySide ? width : columns - 1) }
        var lines: [DemoScreen.Line] = [[.init(text: heading, style: .bold)], []]
        if sideBySide {
            for row in 0..<(Demo.topN + 1) { lines.append(cells.flatMap { $0[row] }) }
        } else {
            for column in cells { lines += column }
        }
        lines.append([])
        lines.append(legend)
        lines += changes.map { [.init(text: "  " + $0)] }
        return lines
    }

    /// One group: its heading, then `topN` cells, each exactly `width`
    /// characters wide so that the columns line up.
    func column(_ group: String, of table: Table, marks: Marks, width: Int) -> [DemoScreen.Line] {
        func cell(_ text: String, _ style: DemoScreen.Style) -> DemoScreen.Line {
            let room = max(1, width - 1)
            var fitted = text.count > room ? String(text.prefix(room - 1)) + "…" : text
            fitted += String(repeating: " ", count: width - fitted.count)
            return [.init(text: fitted, style: style)]
        }
        var lines: [DemoScreen.Line] = []
        guard let section = table.groups.firstIndex(of: group) else {
            lines.append(cell("\(group): no section (empty)", .dim))
            return lines + Array(repeating: cell("", .plain), count: Demo.topN)
        }
        switch marks.sections[group] {
        case .inserted?: lines.append(cell("\(group): section appears", .green))
        case .deleted?: lines.append(cell("\(group): section disappears", .red))
        default: lines.append(cell(group, .bold))
        }
        let keys = table.rows[section]
        for row in 0..<Demo.topN {
            guard row < keys.count else {
                lines.append(cell("", .plain))
                continue
            }
            let title = table.titles[keys[row]] ?? keys[row]
            let number = row < 10 ? " \(row)" : "\(row)"
            if let mark = marks.rows[group]?[row] {
                lines.append(cell("\(mark.symbol) \(number) \(title)", mark.style))
            } else {
                lines.append(cell("  \(number) \(title)", .plain))
            }
        }
        return lines
    }
}
