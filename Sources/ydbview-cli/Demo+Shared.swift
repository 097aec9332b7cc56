#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import YDBView

/// `ydbview-cli demo --shared PATH --writer | --follower`: the demo split over
/// two processes on one database file in shared mode (docs/behaviour.md,
/// "Several processes"). The writer makes the demo's random commits and
/// prints a line for each; the follower shows the table and animates the
/// changesets the other process's commits give it, woken by its connection's
/// wakeup descriptor. Its narration comes from the changesets (it cannot know
/// what the writer meant to do); its checks are the local demo's on the
/// changesets, plus one the local demo does not need: after every commit the
/// rows shown must be those the books themselves give, sorted without the view.
///
/// Whichever process finds the file without books fills it, with its own
/// `--rows` and `--seed`, in one commit that first checks that the collection
/// is still empty: two processes started together fill it once.
extension Demo {
    /// Above this many books the follower does not sort them all again
    /// after each commit to check the table (`checkAgainstBooks`).
    static let booksCheckedAtMost = 50_000

    var sharedPath: String { options.shared ?? "?" }

    /// Fills the catalogue unless the file holds books already; returns
    /// whether it did, and how many books the file holds. The books are drawn
    /// either way, so that the seeded generator is where the local demo's is
    /// when its commits begin (same seed, same commits); when books were
    /// found, new keys continue after the largest one.
    mutating func fillSharedCatalogue() throws -> (filled: Bool, books: Int) {
        let books = catalogue()
        let found: Int = try writer.readWrite { transaction in
            let count = try transaction.count(inCollection: "books")
            guard count == 0 else { return count }
            try transaction.setObjects(books.map { (key: $0.0, object: $0.1.bytes, metadata: nil) },
                                       inCollection: "books")
            return 0
        }
        guard found > 0 else { return (true, books.count) }
        let largest = try writer.read { transaction in
            try transaction.keys(inCollection: "books").compactMap { Int($0.dropFirst()) }.max()
        }
        nextKey = largest ?? nextKey
        return (false, found)
    }

    func sharedOpening(filled: Bool, books: Int) -> String {
        filled ? "\(sharedPath): filled with \(books) books in \(Demo.genres.count) genres, "
            + "in one commit (seed \(options.seed))"
            : "\(sharedPath): \(books) books found"
    }

    /// Writes standard output through now: the two processes' lines are
    /// read as they come, through pipes too.
    func flush() { fflush(nil) }

    // MARK: The writer

    /// `--writer`: the local demo's stream of random commits, one line each;
    /// no table. Stops early on Ctrl-C, after the commit under way.
    mutating func runWriter() throws {
        let started = Date()
        let (filled, books) = try fillSharedCatalogue()
        try registerByRank()
        let delay = options.delay ?? 900
        say("ydbview-cli demo --writer: " + sharedOpening(filled: filled, books: books))
        say("\(options.commits) random commits, one every \(delay) ms; to watch them, in another terminal: "
            + "ydbview-cli demo --shared \(sharedPath) --follower")
        flush()
        DemoScreen.countInterrupts()
        defer { DemoScreen.restoreInterrupts() }
        var made = 0, interrupted = false
        for commit in 1...options.commits {
            if DemoScreen.interrupts > 0 {
                interrupted = true
                break
            }
            let event = try randomCommit(number: commit)
            if case .nothing = event.expectation {
                say("[\(commit)/\(options.commits)] \(event.text): no commit")
            } else {
                made += 1
                say("[\(commit)/\(options.commits)] commit \(commit), snapshot \(writer.snapshot): \(event.text)")
            }
            flush()
            if commit < options.commits, delay > 0, !DemoScreen.sleep(milliseconds: delay) {
                interrupted = true
                break
            }
        }
        print("ydbview-cli demo --writer: \(made) commits to \(sharedPath), "
              + String(format: "%.1f s", Date().timeIntervalSince(started)) + (interrupted ? " (interrupted)" : ""))
        flush()
        if interrupted { throw DemoInterrupted() }
    }

    // MARK: The follower

    /// Why the follower stopped.
    enum FollowerEnd {
        case allCommits, idle, interrupted, endOfInput

        func text(_ options: DemoOptions) -> String {
            switch self {
            case .allCommits: "all \(options.commits) commits followed"
            case .idle: "no commit for \(options.idle) s"
            case .interrupted: "interrupted"
            case .endOfInput: "end of input"
            }
        }
    }

    /// `--follower`: the local demo's table, driven by the other processes'
    /// commits. Ends after `--commits` commits (a changeset may hold several,
    /// when they come faster than the table is drawn), after `--idle`
    /// seconds without one, on Ctrl-C or on end of input (Ctrl-D), with a
    /// summary line.
    mutating func runFollower() throws {
        let started = Date()
        let (filled, books) = try fillSharedCatalogue()
        try registerViewAndMappings()
        var table = try currentTable()
        let checkBooks = books <= Demo.booksCheckedAtMost
        if checkBooks { try checkAgainstBooks(table, commit: 0) }
        say("ydbview-cli demo --follower: " + sharedOpening(filled: filled, books: books)
            + "; showing the top \(Demo.topN) of fantasy and scifi, plus a dynamic \"classics\" section")
        say("Rows are numbered from 0 everywhere, as in a table view's index paths.")
        let screen = options.quiet ? nil : DemoScreen.forStandardOutput()
        let delay = options.delay ?? (screen == nil ? 0 : 600)
        let waiting = "waiting for another process's commits "
            + "(ydbview-cli demo --shared \(sharedPath) --writer); Ctrl-C stops"
        if let screen {
            screen.begin()
            drawInitialFrame(on: screen, table: table, heading: "commit 0/\(options.commits): " + waiting)
        } else {
            DemoScreen.countInterrupts()
            say(render(table))
            say(waiting)
        }
        flush()
        defer {
            screen?.end()
            DemoScreen.restoreInterrupts()
        }

        let descriptor = try reader.wakeupDescriptor()
        // Ctrl-D ends it too, when standard input is this terminal and the
        // process is in the foreground (reading it from the background
        // would stop the process; a pipe or /dev/null is not watched).
        let watchInput = isatty(STDIN_FILENO) != 0 && tcgetpgrp(STDIN_FILENO) == getpgrp()
        var followed = 0, changesets = 0, rowChanges = 0, sectionChanges = 0, reloads = 0
        var lastCommit = Date()
        var end = FollowerEnd.allCommits
        following: while followed < options.commits {
            switch Demo.wait(on: descriptor, watchingInput: watchInput) {
            case .interrupted:
                end = .interrupted
                break following
            case .endOfInput:
                end = .endOfInput
                break following
            case .timeout:
                if Date().timeIntervalSince(lastCommit) >= Double(options.idle) {
                    end = .idle
                    break following
                }
                continue following
            case .commits:
                break
            }
            let notifications: [CommitNotification]
            do {
                notifications = try reader.beginLongLivedReadTransaction()
            } catch let error as YDBError where error.code == .reloadRequired {
                // More than maxCommitsBehind commits behind (stopped in a
                // debugger, suspended): no changeset, the table anew.
                try reader.read { try mappings.update(with: $0) }
                table = try currentTable()
                reloads += 1
                lastCommit = Date()
                let text = "too far behind: the table reloaded at snapshot \(reader.snapshot), without a changeset"
                if let screen { drawInitialFrame(on: screen, table: table, heading: text) } else { say(text) }
                continue following
            }
            guard !notifications.isEmpty else { continue following }   // already caught up
            // The mappings take every notification; only commits that wrote
            // rows count (a view registration commits too, with no rows).
            let changeset = try mappings.changes(for: notifications)
            let newTable = try currentTable()
            let commits = notifications.filter {
                !$0.changedRows.isEmpty || $0.removedAll || !$0.removedCollections.isEmpty
            }
            try check(changeset, from: table, to: newTable, commit: followed + commits.count)
            if checkBooks { try checkAgainstBooks(newTable, commit: followed + commits.count) }
            guard let last = commits.last else {
                table = newTable
                continue following
            }
            lastCommit = Date()
            let first = followed + 1
            followed += commits.count
            changesets += 1
            rowChanges += changeset.rowChanges.count
            sectionChanges += changeset.sectionChanges.count
            let numbers = commits.count == 1 ? "commit \(first)" : "commits \(first)–\(followed)"
            let snapshots = commits.count == 1 ? "snapshot \(last.snapshot)"
                : "snapshots \(commits[0].snapshot)–\(last.snapshot)"
            var lines = describe(changeset, old: table, new: newTable)
            if changeset.isEmpty { lines = [try offscreen(commits)] }
            if let screen {
                do {
                    let heading = "\(numbers)/\(options.commits) (\(snapshots)): " + headline(lines)
                    try animate(on: screen, heading: heading, changeset: changeset,
                                old: table, new: newTable, delay: delay)
                } catch is DemoInterrupted {
                    table = newTable
                    end = .interrupted
                    break following
                }
            } else {
                say("[\(min(followed, options.commits))/\(options.commits)] \(numbers) (\(snapshots)):")
                for line in lines { say("    " + line) }
                flush()
                if delay > 0, !DemoScreen.sleep(milliseconds: delay) {
                    end = .interrupted
                    break following
                }
            }
            table = newTable
        }
        screen?.end()
        let seconds = Date().timeIntervalSince(started)
        print("ydbview-cli demo --follower: followed \(followed) commits in \(changesets) changesets, "
              + "\(rowChanges) row changes and \(sectionChanges) section changes, every changeset checked"
              + (checkBooks ? " (and every table against the books)" : "")
              + (reloads > 0 ? ", \(reloads) reloads" : "")
              + ", " + String(format: "%.1f s", seconds) + "; stopped: " + end.text(options))
        flush()
        if end == .interrupted { throw DemoInterrupted() }
    }

    /// What `wait(on:watchingInput:)` saw.
    enum Wake {
        case commits, timeout, interrupted, endOfInput
    }

    /// Waits a quarter of a second at most for the wakeup descriptor (and
    /// standard input), so that Ctrl-C and `--idle` are seen in time.
    static func wait(on descriptor: Int32, watchingInput: Bool) -> Wake {
        var waiters = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        if watchingInput { waiters.append(pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)) }
        let ready = poll(&waiters, nfds_t(waiters.count), 250)
        if DemoScreen.interrupts > 0 { return .interrupted }
        guard ready > 0 else { return .timeout }   // also EINTR
        if watchingInput, waiters[1].revents != 0 {
            // A line typed (dropped), or Ctrl-D at the start of a line: 0 bytes.
            var bytes = [UInt8](repeating: 0, count: 256)
            let count = read(STDIN_FILENO, &bytes, bytes.count)
            if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { return .endOfInput }
        }
        return waiters[0].revents & Int16(POLLIN) != 0 ? .commits : .timeout
    }

    /// The changeset's own lines for a frame's heading: what the commit did
    /// to the rows shown, without the rows pushed across the edge as a
    /// consequence and without the "now:" lines.
    func headline(_ lines: [String]) -> String {
        let shown = lines.filter { !$0.contains(" now: ") }
        let primary = shown.filter { !$0.contains("(pushed across") }
        return (primary.isEmpty ? shown : primary).joined(separator: "; ")
    }

    /// For a changeset with nothing visible: which books the commits
    /// changed, read from the notifications and the rows.
    func offscreen(_ notifications: [CommitNotification]) throws -> String {
        let changed = notifications.flatMap(\.orderedChangedRows).filter { $0.row.collection == "books" }
        guard !changed.isEmpty else { return "(nothing visible changed)" }
        let named: [String] = try reader.read { transaction in
            try changed.prefix(3).map { row, change in
                if change.contains(.removed) { return "a book (\(row.key)) removed" }
                guard let book = Book(try transaction.object(forKey: row.key, inCollection: "books")) else {
                    return row.key
                }
                return "\"\(book.title)\" (\(book.genre))"
            }
        }
        let more = changed.count > 3 ? " and \(changed.count - 3) more" : ""
        return "(nothing visible changed: " + named.joined(separator: ", ") + more + ", beyond the rows shown)"
    }

    /// The rows shown must be what the books themselves give, at the same
    /// snapshot, without the view: the top 10 of fantasy and scifi and all
    /// of classics, by score then key.
    func checkAgainstBooks(_ table: Table, commit: Int) throws {
        let sorted: [String: [String]] = try reader.read { transaction in
            var found: [String: [(score: Double, key: String)]] = [:]
            try transaction.enumerateRows(inCollection: "books") { key, object, _, _ in
                if let book = Book(object), Demo.shownGroups.contains(book.genre) {
                    found[book.genre, default: []].append((book.score, key))
                }
            }
            return found.mapValues { books in
                books.sorted { $0.score != $1.score ? $0.score < $1.score : $0.key < $1.key }.map(\.key)
            }
        }
        for group in Demo.shownGroups {
            let all = sorted[group] ?? []
            let expected = group == "classics" ? all : Array(all.prefix(Demo.topN))
            let shown = table.groups.firstIndex(of: group).map { table.rows[$0] } ?? []
            guard shown == expected else {
                throw ReplayError(description: "commit \(commit): \(group) shows \(shown), "
                                  + "but its books sorted by score give \(expected)")
            }
        }
    }
}
