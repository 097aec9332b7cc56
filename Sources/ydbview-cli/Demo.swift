#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import YDBView

struct DemoOptions {
    var seed: UInt64 = 42
    var commits = 30
    /// Books in the catalogue, spread evenly over the genres.
    var rows = 3000
    var quiet = false
    /// Milliseconds to pause after each commit; nil: 60 for the log, 900
    /// for the animated table (slow enough to see each frame's marks); with
    /// `--shared`, 900 for the writer, 0 and 600 for the follower.
    var delay: Int?
    /// `--shared PATH`: the database file, opened in shared mode, and this
    /// process's part in it (Demo+Shared.swift); nil: a temporary database
    /// that one process both writes and shows.
    var shared: String?
    var role: DemoRole?
    /// The follower stops after this many seconds without a commit.
    var idle = 30
}

/// What a `--shared` demo process does: commit, or show the other's commits.
enum DemoRole {
    case writer, follower
}

/// A book as stored: "genre|score|title" in UTF-8. The view groups by genre
/// and sorts by score (lower is better), so both callbacks read only the
/// object. Scores are decimals so that a book can always be given a score
/// strictly between two others: it then lands exactly where the narration
/// says.
struct Book {
    var genre: String
    var score: Double
    var title: String

    var bytes: [UInt8] { Array("\(genre)|\(score)|\(title)".utf8) }

    init(genre: String, score: Double, title: String) {
        self.genre = genre
        self.score = score
        self.title = title
    }

    init?(_ bytes: [UInt8]?) {
        guard let bytes else { return nil }
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: "|", maxSplits: 2,
                                                                 omittingEmptySubsequences: false)
        guard parts.count == 3, let score = Double(parts[1]) else { return nil }
        self.init(genre: String(parts[0]), score: score, title: String(parts[2]))
    }
}

/// `ydbview-cli demo`: a catalogue of a few thousand books in a temporary
/// database, a view by genre sorted by rank, mappings showing the top 10 of
/// two genres plus a dynamic "classics" section, and a stream of random
/// commits from a writer. Each changeset is printed as a table view would
/// animate it, and checked: applied with batch-update rules to the old
/// table it must give the new one.
struct Demo {
    static let genres = ["fantasy", "scifi", "mystery", "romance", "history"]
    static let shownGroups = ["fantasy", "scifi", "classics"]
    static let topN = 10
    static let famous = [
        "fantasy": ["The Hobbit", "Earthsea", "Mistborn", "The Name of the Wind", "Piranesi", "Jonathan Strange"],
        "scifi": ["Dune", "Neuromancer", "Hyperion", "Foundation", "Solaris", "The Left Hand of Darkness"],
    ]

    let options: DemoOptions
    let booksPerGenre: Int
    var random: SeededGenerator
    let titles: DemoTitles
    let database: Database
    let writer: Connection
    let reader: Connection
    let mappings: Mappings
    var nextKey = 0

    init(_ options: DemoOptions) throws {
        self.options = options
        booksPerGenre = options.rows / Demo.genres.count
        random = SeededGenerator(seed: options.seed)
        titles = DemoTitles(using: &random)
        database = try options.shared.map { try Database(path: $0, options: DatabaseOptions(multiProcess: true)) }
            ?? Database(path: nil)
        writer = try database.newConnection()
        reader = try database.newConnection()
        mappings = Mappings(groups: Demo.shownGroups, view: "byRank")
    }

    /// Closes the database; a temporary one deletes its files (`exit`
    /// runs no deinit: without this each run left a directory behind).
    func close() { database.close() }

    mutating func run() throws {
        let started = Date()
        try fillCatalogue()
        try registerViewAndMappings()

        var table = try currentTable()
        let total = try reader.read { try $0.view("byRank").numberOfItemsInAllGroups() }
        say("ydbview-cli demo: \(total) books in \(Demo.genres.count) genres; showing the top \(Demo.topN) "
            + "of fantasy and scifi, plus a dynamic \"classics\" section (seed \(options.seed))")
        say("Rows are numbered from 0 everywhere, as in a table view's index paths.")
        // The animated table on a terminal, else today's log (which the
        // tests read through a pipe, line for line).
        let screen = options.quiet ? nil : DemoScreen.forStandardOutput()
        let delay = options.delay ?? (screen == nil ? 60 : 900)
        screen?.begin()
        defer { screen?.end() }
        if let screen {
            drawInitialFrame(on: screen, table: table)
            try screen.pause(milliseconds: delay)
        } else {
            say(render(table))
        }

        var rowChangeCount = 0, sectionChangeCount = 0
        for commit in 1...options.commits {
            try screen?.checkInterrupted()
            let event = try randomCommit(number: commit)
            let notifications = try reader.beginLongLivedReadTransaction()
            let changeset = try mappings.changes(for: notifications)
            let newTable = try currentTable()
            try check(changeset, from: table, to: newTable, commit: commit)
            try check(event, old: table, new: newTable, commit: commit)
            rowChangeCount += changeset.rowChanges.count
            sectionChangeCount += changeset.sectionChanges.count
            if let screen {
                try animate(on: screen, heading: "commit \(commit)/\(options.commits): \(event.text)",
                            changeset: changeset, old: table, new: newTable, delay: delay)
            } else {
                say("[\(commit)/\(options.commits)] commit \(commit): \(event.text)")
                for line in describe(changeset, old: table, new: newTable) { say("    " + line) }
                if !options.quiet { Thread.sleep(forTimeInterval: Double(delay) / 1000) }
            }
            table = newTable
        }
        screen?.end()
        let seconds = Date().timeIntervalSince(started)
        print("ydbview-cli demo: \(options.commits) commits, \(rowChangeCount) row changes and "
              + "\(sectionChangeCount) section changes, every changeset checked, "
              + String(format: "%.1f s", seconds))
    }

    func say(_ line: String) {
        if !options.quiet { print(line) }
    }

    // MARK: Data

    /// Registers the view "byRank" (by genre, by score) and points the
    /// mappings at it: the top 10 of fantasy and scifi, and a dynamic
    /// "classics" section; the reader begins its long-lived read.
    func registerViewAndMappings() throws {
        try registerByRank()
        let top = try RangeOptions.fixed(length: Demo.topN, offset: 0, from: .beginning)
        mappings.setRangeOptions(top, forGroup: "fantasy")
        mappings.setRangeOptions(top, forGroup: "scifi")
        mappings.setIsDynamicSection(true, forGroup: "classics")
        try reader.beginLongLivedReadTransaction()
        try reader.read { try mappings.update(with: $0) }
    }

    /// The view alone: the writer picks its books through it.
    func registerByRank() throws {
        let grouping = ViewGrouping(flavour: .object) { row in Book(row.object)?.genre }
        let sorting = ViewSorting(flavour: .object) { _, left, right in
            let a = Book(left.object)?.score ?? 0, b = Book(right.object)?.score ?? 0
            if a != b { return a < b ? .ascending : .descending }
            return left.key < right.key ? .ascending : left.key == right.key ? .same : .descending
        }
        try register(View(grouping: grouping, sorting: sorting, versionTag: "1", isPersistent: true), name: "byRank")
    }

    /// The books the demo starts with, keyed.
    mutating func catalogue() -> [(String, Book)] {
        var books: [(String, Book)] = []
        for genre in Demo.genres {
            let famous = Demo.famous[genre] ?? []
            var scores = Array(famous.count..<booksPerGenre).map { Double($0 * 10 + 10) }
            scores.shuffle(using: &random)
            for index in 0..<booksPerGenre {
                let key = newKey()
                let title = index < famous.count ? famous[index] : newTitle()
                let score = index < famous.count ? Double(index * 10 + 10) : scores[index - famous.count]
                books.append((key, Book(genre: genre, score: score, title: title)))
            }
        }
        return books
    }

    mutating func fillCatalogue() throws {
        let books = catalogue()
        try writer.readWrite { transaction in
            for (key, book) in books {
                try transaction.setObject(book.bytes, forKey: key, inCollection: "books", metadata: nil)
            }
        }
    }

    /// Registers the view in the background (`registerViewAsync`) and
    /// waits for it, drawing a progress bar on standard error when it is a
    /// terminal (standard output stays the demo's own).
    func register(_ view: View, name: String) throws {
        let bar = !options.quiet && isatty(STDERR_FILENO) != 0
        let started = Date()
        let task = try database.registerViewAsync(view, name: name, progress: { progress in
            guard bar else { return }
            let width = 30, filled = Int(progress.fractionCompleted * Double(width))
            let line = "\rpopulating \(name) [" + String(repeating: "#", count: filled)
                + String(repeating: ".", count: width - filled) + "] \(Int(progress.fractionCompleted * 100))%"
            FileHandle.standardError.write(Data(line.utf8))
        })
        try task.wait()
        if bar {
            let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
            FileHandle.standardError.write(Data(" \(name) populated in \(seconds) s\n".utf8))
        }
    }

    mutating func newKey() -> String {
        nextKey += 1
        return String(format: "b%05d", nextKey)
    }

    /// The title of the book `newKey()` just named: keys are never reused,
    /// so neither are titles.
    func newTitle() -> String { titles.title(nextKey) }

    /// `ydbview-cli demo --check-titles`: every title a run with these options
    /// can show (the catalogue's, and one new book per commit at most) is
    /// generated, without a database, and must differ from all the others.
    /// Returns how many were checked.
    mutating func checkTitles() throws -> Int {
        var all = catalogue().map(\.1.title)
        for _ in 0..<options.commits {
            _ = newKey()
            all.append(newTitle())
        }
        var seen = Set<String>(minimumCapacity: all.count)
        for title in all where !seen.insert(title).inserted {
            throw ReplayError(description: "the title \"\(title)\" is given to two books")
        }
        return all.count
    }

    /// What a commit did: the words printed, and where the book must be
    /// afterwards, which `check(_:old:new:commit:)` holds the table to.
    struct Event {
        enum Expectation {
            /// At `row` of `group` (checked when that row is shown).
            case at(key: String, group: String, row: Int)
            /// Where it was before the commit.
            case unchanged(key: String)
            /// Shown nowhere.
            case gone(key: String)
            case nothing
        }
        let text: String
        let expectation: Expectation
    }

    /// One random commit; returns what it did.
    mutating func randomCommit(number: Int) throws -> Event {
        let genre = ["fantasy", "scifi"].randomElement(using: &random)!
        // A genre change a third and two thirds of the way: the classics
        // section appears, then the book goes back and it disappears.
        if number == max(1, options.commits / 3) {
            return try changeGenre(inGenre: genre, at: Int.random(in: 0..<3, using: &random), to: "classics")
        }
        if number == max(2, 2 * options.commits / 3), let (key, book) = try firstBook(in: "classics") {
            let home = Demo.famous.first { $0.value.contains(book.title) }?.key ?? genre
            return try move(key, book, to: home, row: Int.random(in: 0...4, using: &random))
        }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<55:
            let from = Int.random(in: 0..<(Demo.topN + 6), using: &random)
            let to = Int.random(in: 0..<Demo.topN, using: &random)
            return try changeRank(inGenre: genre, from: from, to: to)
        case 55..<80:
            return try insertBook(inGenre: genre, at: Int.random(in: 0..<(Demo.topN + 4), using: &random))
        default:
            return try removeBook(inGenre: genre, at: Int.random(in: 0..<Demo.topN, using: &random))
        }
    }

    func book(at index: Int, inGroup group: String) throws -> (String, Book)? {
        try writer.read { transaction in
            guard let row = try transaction.view("byRank").row(at: index, inGroup: group) else { return nil }
            return Book(row.object).map { (row.key.key, $0) }
        }
    }

    func firstBook(in group: String) throws -> (String, Book)? { try book(at: 0, inGroup: group) }

    /// A score that puts a book at exactly `row` of `group` once the book
    /// `moving` (if it is in the group) has left its place: strictly between
    /// the scores of the books that will be its neighbours.
    func score(forRow row: Int, inGroup group: String, moving: String? = nil) throws -> Double {
        let scores: [Double] = try writer.read { transaction in
            let view = try transaction.view("byRank")
            var found: [Double] = []
            try view.enumerateRows(inGroup: group, range: 0..<min(row + 2, try view.numberOfItems(inGroup: group))) {
                key, object, _, _, _ in
                if key.key != moving, let book = Book(object) { found.append(book.score) }
            }
            return found
        }
        let above = row > 0 && row - 1 < scores.count ? scores[row - 1] : nil
        let below = row < scores.count ? scores[row] : nil
        switch (above, below) {
        case let (above?, below?): return (above + below) / 2
        case let (above?, nil): return above + 10
        case let (nil, below?): return below - 10
        case (nil, nil): return 10
        }
    }

    func write(_ key: String, _ book: Book) throws {
        try writer.readWrite { try $0.setObject(book.bytes, forKey: key, inCollection: "books", metadata: nil) }
    }

    func changeRank(inGenre genre: String, from: Int, to: Int) throws -> Event {
        guard from != to, let (key, found) = try book(at: from, inGroup: genre) else {
            return try touchBook(inGenre: genre, at: to)
        }
        var book = found
        book.score = try score(forRow: to, inGroup: genre, moving: key)
        try write(key, book)
        return Event(text: "\(genre): \"\(book.title)\" from row \(from) to row \(to)",
                     expectation: .at(key: key, group: genre, row: to))
    }

    func touchBook(inGenre genre: String, at index: Int) throws -> Event {
        guard let (key, book) = try book(at: index, inGroup: genre) else { return Event(text: "nothing to do", expectation: .nothing) }
        try writer.readWrite { try $0.touchObject(forKey: key, inCollection: "books") }
        return Event(text: "\(genre): \"\(book.title)\" (row \(index)) edited in place", expectation: .unchanged(key: key))
    }

    mutating func insertBook(inGenre genre: String, at index: Int) throws -> Event {
        let key = newKey()
        let book = Book(genre: genre, score: try score(forRow: index, inGroup: genre), title: newTitle())
        try write(key, book)
        return Event(text: "\(genre): new book \"\(book.title)\" enters at row \(index)",
                     expectation: .at(key: key, group: genre, row: index))
    }

    func removeBook(inGenre genre: String, at index: Int) throws -> Event {
        guard let (key, book) = try book(at: index, inGroup: genre) else { return Event(text: "nothing to do", expectation: .nothing) }
        try writer.readWrite { try $0.removeObject(forKey: key, inCollection: "books") }
        return Event(text: "\(genre): \"\(book.title)\" (row \(index)) removed", expectation: .gone(key: key))
    }

    func changeGenre(inGenre genre: String, at index: Int, to newGenre: String) throws -> Event {
        guard let (key, book) = try book(at: index, inGroup: genre) else { return Event(text: "nothing to do", expectation: .nothing) }
        return try move(key, book, to: newGenre, row: 0)
    }

    func move(_ key: String, _ book: Book, to genre: String, row: Int) throws -> Event {
        var moved = book
        moved.genre = genre
        moved.score = try score(forRow: row, inGroup: genre, moving: key)
        try write(key, moved)
        return Event(text: "\"\(book.title)\" moves from \(book.genre) to \(genre), row \(row)",
                     expectation: .at(key: key, group: genre, row: row))
    }

    // MARK: The table

    struct Table {
        var groups: [String]
        var rows: [[String]]     // keys
        var titles: [String: String]

        /// The rows as the batch-update checker names them.
        var rowKeys: BatchUpdate<RowKey>.Table {
            BatchUpdate.Table(groups: groups, sections: rows.map { $0.map { RowKey(collection: "books", key: $0) } })
        }
    }

    func currentTable() throws -> Table {
        try reader.read { transaction in
            let view = try transaction.view("byRank")
            var table = Table(groups: [], rows: [], titles: [:])
            for section in 0..<mappings.numberOfSections {
                table.groups.append(mappings.group(forSection: section) ?? "?")
                var keys: [String] = []
                for row in 0..<(mappings.numberOfItems(inSection: section) ?? 0) {
                    let path = TableIndexPath(section: section, row: row)
                    guard let found = try view.row(at: path, mappings: mappings) else {
                        throw ReplayError(description: "mappings show a row at \(path) that the view lacks")
                    }
                    keys.append(found.key.key)
                    table.titles[found.key.key] = Book(found.object)?.title ?? found.key.key
                }
                table.rows.append(keys)
            }
            return table
        }
    }

    func render(_ table: Table) -> String {
        zip(table.groups, table.rows).map { group, keys in
            "  \(group): " + keys.enumerated().map { "\($0) \(table.titles[$1] ?? $1)" }.joined(separator: " · ")
        }.joined(separator: "\n")
    }

    func describe(_ changeset: Changeset, old: Table, new: Table) -> [String] {
        if changeset.isEmpty { return ["(nothing visible changed)"] }
        var lines: [String] = []
        for change in changeset.sectionChanges {
            lines.append("section \(change.index) \"\(change.group)\": \(change.type == .insert ? "appears" : "disappears")")
        }
        func title(_ path: TableIndexPath?, in table: Table) -> String {
            guard let path, table.rows.indices.contains(path.section),
                  table.rows[path.section].indices.contains(path.row) else { return "?" }
            let key = table.rows[path.section][path.row]
            return "\"\(table.titles[key] ?? key)\""
        }
        func group(_ path: TableIndexPath?, in table: Table) -> String {
            guard let path, table.groups.indices.contains(path.section) else { return "?" }
            return table.groups[path.section]
        }
        for change in changeset.rowChanges {
            let why = change.rowKey == nil ? " (pushed across the top-\(Demo.topN) edge)" : ""
            switch change.type {
            case .insert:
                lines.append("\(group(change.newIndexPath, in: new)): insert row \(change.newIndexPath!.row) "
                             + title(change.newIndexPath, in: new) + why)
            case .delete:
                lines.append("\(group(change.indexPath, in: old)): delete row \(change.indexPath!.row) "
                             + title(change.indexPath, in: old) + why)
            case .move:
                let from = change.indexPath!, to = change.newIndexPath!
                let place = from.section == to.section
                    ? "\(group(from, in: old)): move row \(from.row) → \(to.row)"
                    : "move \(group(from, in: old)) row \(from.row) → \(group(to, in: new)) row \(to.row)"
                lines.append(place + " " + title(to, in: new))
            case .update:
                lines.append("\(group(change.indexPath, in: old)): reload row \(change.indexPath!.row) "
                             + title(change.indexPath, in: old))
            }
        }
        let touched = Set(changeset.rowChanges.compactMap { change -> String? in
            change.finalGroup ?? change.originalGroup
        }).union(changeset.sectionChanges.filter { $0.type == .insert }.map(\.group))
        for (group, keys) in zip(new.groups, new.rows) where touched.contains(group) {
            lines.append("\(group) now: " + keys.enumerated().map { "\($0) \(new.titles[$1] ?? $1)" }
                .joined(separator: " · "))
        }
        return lines
    }

    /// Holds the narration to the table: the book is where the words said.
    func check(_ event: Event, old: Table, new: Table, commit: Int) throws {
        func place(_ key: String, in table: Table) -> (group: String, row: Int)? {
            for (group, keys) in zip(table.groups, table.rows) {
                if let row = keys.firstIndex(of: key) { return (group, row) }
            }
            return nil
        }
        func fail(_ why: String) -> ReplayError {
            ReplayError(description: "commit \(commit): the narration \"\(event.text)\" disagrees with the table: \(why)")
        }
        switch event.expectation {
        case let .at(key, group, row):
            let shown = new.groups.firstIndex(of: group).map { new.rows[$0].count } ?? 0
            guard row < shown else { return }   // beyond the top 10: not on screen
            let found = place(key, in: new)
            guard found?.group == group, found?.row == row else {
                throw fail("the book is at \(found.map { "\($0.group) row \($0.row)" } ?? "no row shown")")
            }
        case let .unchanged(key):
            guard place(key, in: old)?.row == place(key, in: new)?.row else { throw fail("the book moved") }
        case let .gone(key):
            if let found = place(key, in: new) { throw fail("the book is still at \(found.group) row \(found.row)") }
        case .nothing:
            break
        }
    }

    /// Applies `changeset` to `old` with UITableView batch-update rules and
    /// compares the result with `new`.
    func check(_ changeset: Changeset, from old: Table, to new: Table, commit: Int) throws {
        do {
            try BatchUpdate<RowKey>(changeset).check(from: old.rowKeys, to: new.rowKeys)
        } catch {
            throw ReplayError(description: "commit \(commit): the changeset does not turn the old table into "
                              + "the new one: \(error)")
        }
    }
}
