import Foundation
import XCTest
import YDBView

/// Runs the built `ydbview-cli` executable (next to the test
/// bundle) on the scenario files of `Tests/Scenarios`: each output must equal
/// its `.expected.json` (parsed, compared structurally), every changeset must
/// be a valid batch update from one state to the next, malformed files must
/// exit 2 with their `.stderr` line, and the demo must run.
final class ReplayTests: XCTestCase {
    static let scenarios = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Scenarios")

    // MARK: Running the tool

    struct Run {
        var status: Int32
        var stdout: Data
        var stderr: String
    }

    /// The executable: `YDBVIEW_CLI` if set, else `ydbview-cli` in the build
    /// directory that holds the test bundle.
    static func executable() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["YDBVIEW_CLI"] { return URL(fileURLWithPath: path) }
        var directories: [URL] = []
        if let path = Bundle.main.executablePath { directories.append(URL(fileURLWithPath: path).deletingLastPathComponent()) }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            directories.append(URL(fileURLWithPath: bundle.bundlePath).deletingLastPathComponent())
        }
        for directory in directories {
            let candidate = directory.appendingPathComponent("ydbview-cli")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw XCTSkip("ydbview-cli not found next to the test bundle (\(directories.map(\.path))); "
                      + "build it first (swift build) or set YDBVIEW_CLI")
    }

    static func run(_ arguments: [String], stdin: Data? = nil) throws -> Run {
        let process = Process()
        process.executableURL = try executable()
        process.arguments = arguments
        // Standard error goes to a file, so reading standard output to its end
        // cannot deadlock against a child blocked on a full stderr pipe.
        let errorsURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("ydbview-replay-\(UUID().uuidString).stderr")
        _ = FileManager.default.createFile(atPath: errorsURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorsURL) }
        let errors = try FileHandle(forWritingTo: errorsURL)
        let output = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        try errors.close()
        if let stdin {
            input.fileHandleForWriting.write(stdin)
            try input.fileHandleForWriting.close()
        }
        let stdoutData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: stdoutData,
                   stderr: String(decoding: try Data(contentsOf: errorsURL), as: UTF8.self))
    }

    static func scenarioFiles() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: scenarios, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" && !$0.lastPathComponent.hasSuffix(".expected.json") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func json(_ data: Data) throws -> Any {
        try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    }

    // MARK: Scenarios

    func testScenariosMatchTheirExpectedOutput() throws {
        let files = try Self.scenarioFiles()
        XCTAssertGreaterThanOrEqual(files.count, 10)
        for file in files {
            let name = file.deletingPathExtension().lastPathComponent
            let run = try Self.run(["replay", file.path])
            XCTAssertEqual(run.status, 0, "\(name): \(run.stderr)")
            guard run.status == 0 else { continue }
            let output = try Self.json(run.stdout)
            let expectedURL = Self.scenarios.appendingPathComponent("\(name).expected.json")
            let expected = try Self.json(Data(contentsOf: expectedURL))
            let matches = NSDictionary(dictionary: output as? [String: Any] ?? [:])
                .isEqual(to: expected as? [String: Any] ?? [:])
            XCTAssertTrue(matches, "\(name): output differs from \(name).expected.json:\n"
                          + String(decoding: run.stdout, as: UTF8.self))
            try assertChangesetsAreValid(output, name: name)
            try assertChangesetsAreValid(expected, name: "\(name).expected")
        }
    }

    func testReverseBeforeOrAfterRangeGivesTheSameTable() throws {
        let first = try Self.run(["replay", Self.scenarios.appendingPathComponent("reverse_range_range_first.json").path])
        let second = try Self.run(["replay", Self.scenarios.appendingPathComponent("reverse_range_reverse_first.json").path])
        XCTAssertEqual(first.status, 0)
        XCTAssertEqual(first.stdout, second.stdout)
    }

    func testStandardInputIsReadForDash() throws {
        let file = Self.scenarios.appendingPathComponent("touch.json")
        let fromFile = try Self.run(["replay", file.path])
        let fromStdin = try Self.run(["replay", "-"], stdin: try Data(contentsOf: file))
        XCTAssertEqual(fromStdin.status, 0, fromStdin.stderr)
        XCTAssertEqual(fromFile.stdout, fromStdin.stdout)
    }

    func testMalformedScenariosExitTwoWithOneLineNamingThePath() throws {
        let directory = Self.scenarios.appendingPathComponent("malformed")
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
        XCTAssertGreaterThanOrEqual(files.count, 20)
        for file in files {
            let name = file.deletingPathExtension().lastPathComponent
            let expected = try String(contentsOf: directory.appendingPathComponent("\(name).stderr"), encoding: .utf8)
            let run = try Self.run(["replay", file.path])
            XCTAssertEqual(run.status, 2, "\(name)")
            XCTAssertEqual(run.stderr, expected, "\(name)")
            XCTAssertTrue(run.stdout.isEmpty, "\(name) printed to stdout")
        }
    }

    func testUsageErrors() throws {
        for arguments in [[], ["frobnicate"], ["replay"], ["replay", "a", "b"],
                          ["demo", "--commits"], ["demo", "--commits", "0"], ["demo", "--bogus"],
                          ["demo", "--rows", "99"], ["demo", "--shared"], ["demo", "--shared", "/tmp/x.sqlite"],
                          ["demo", "--writer"], ["demo", "--follower"], ["demo", "--idle", "5"],
                          ["demo", "--shared", "/tmp/x.sqlite", "--writer", "--follower"],
                          ["demo", "--shared", "/tmp/x.sqlite", "--writer", "--idle", "5"]] {
            let run = try Self.run(arguments)
            XCTAssertEqual(run.status, 2, "\(arguments)")
            XCTAssertFalse(run.stderr.isEmpty, "\(arguments)")
        }
        // Help that was asked for: standard output, status 0, for every command.
        for arguments in [["--help"], ["replay", "--help"], ["demo", "--help"]] {
            let run = try Self.run(arguments)
            XCTAssertEqual(run.status, 0, "\(arguments)")
            XCTAssertTrue(String(decoding: run.stdout, as: UTF8.self).hasPrefix("usage: ydbview"), "\(arguments)")
        }
        let missing = try Self.run(["replay", "/nonexistent/scenario.json"])
        XCTAssertEqual(missing.status, 2)
        XCTAssertEqual(missing.stderr, "ydbview-cli: cannot read /nonexistent/scenario.json: no such file\n")
    }

    /// The demo checks every changeset and its own narration against the
    /// tables (it exits 1 on the first disagreement): run it on a few seeds.
    func testDemoNarrationAndChangesetsAgreeWithTheTables() throws {
        for seed in [1, 7, 42, 1234] {
            let run = try Self.run(["demo", "--quiet", "--seed", "\(seed)", "--commits", "60"])
            XCTAssertEqual(run.status, 0, "seed \(seed): \(run.stderr)")
            XCTAssertTrue(String(decoding: run.stdout, as: UTF8.self).contains("every changeset checked"))
        }
    }

    func testVersionMatchesTheHeader() throws {
        let run = try Self.run(["--version"])
        XCTAssertEqual(run.status, 0)
        let header = try String(contentsOf: Self.scenarios.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("include/ydbview.h"), encoding: .utf8)
        let version = String(decoding: run.stdout, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "ydbview-cli ", with: "")
        let defined = header.split(separator: "\n").first { $0.hasPrefix("#define YDBVIEW_VERSION ") }
        XCTAssertEqual(defined?.split(separator: " ", omittingEmptySubsequences: true).last, "\"\(version)\"",
                       "ydbview-cli --version says \(version)")
    }

    func testDemoRuns() throws {
        let run = try Self.run(["demo", "--commits", "5", "--quiet"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(String(decoding: run.stdout, as: UTF8.self).contains("5 commits"))
        // A larger catalogue, registered in the background: still checked.
        let larger = try Self.run(["demo", "--rows", "6000", "--commits", "10", "--quiet"])
        XCTAssertEqual(larger.status, 0, larger.stderr)
        XCTAssertTrue(String(decoding: larger.stdout, as: UTF8.self).contains("every changeset checked"))
        // Same seed, same run (the last line holds the elapsed time).
        func lines(_ run: Run) -> [Substring] {
            String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").dropLast()
        }
        let first = try Self.run(["demo", "--commits", "25", "--seed", "7"])
        let second = try Self.run(["demo", "--commits", "25", "--seed", "7"])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertGreaterThan(lines(first).count, 25)
        XCTAssertEqual(lines(first), lines(second))
        // Through a pipe the demo prints its log, never the terminal's
        // animated table (whatever TERM says).
        XCTAssertFalse(String(decoding: first.stdout, as: UTF8.self).contains("\u{1B}"))
    }

    /// `demo --shared PATH`: a follower and a writer, two processes on one
    /// file in shared mode. The follower starts first and fills the file;
    /// once it waits, the writer makes its commits. The follower must get
    /// every one of them (each writer snapshot in one of its changesets) and
    /// its checks must pass: each changeset against the tables before and
    /// after, each table against the books sorted without the view (it exits
    /// 1 on the first failure). Writer delay 0 gives changesets of several
    /// commits; 20 ms mostly one each.
    func testSharedDemoFollowerGetsEveryCommitOfTheWriter() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ydbview-shared-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (index, delay) in ["0", "20"].enumerated() {
            let path = directory.appendingPathComponent("books-\(index).sqlite").path
            let common = ["demo", "--shared", path, "--rows", "300", "--commits", "20", "--seed", "\(index + 3)"]
            let follower = Process()
            follower.executableURL = try Self.executable()
            follower.arguments = common + ["--follower", "--idle", "10"]
            let output = Pipe()
            let errorsURL = directory.appendingPathComponent("follower-\(index).stderr")
            _ = FileManager.default.createFile(atPath: errorsURL.path, contents: nil)
            follower.standardOutput = output
            follower.standardError = try FileHandle(forWritingTo: errorsURL)
            follower.standardInput = FileHandle.nullDevice
            try follower.run()
            var seen = Data()
            while !String(decoding: seen, as: UTF8.self).contains("waiting for another process's commits") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }   // the follower ended early: its output says why
                seen.append(chunk)
            }
            let writer = try Self.run(common + ["--writer", "--delay", delay])
            seen.append(output.fileHandleForReading.readDataToEndOfFile())
            follower.waitUntilExit()
            let text = String(decoding: seen, as: UTF8.self)
            let context = "delay \(delay):\n\(text)\n" + String(decoding: try Data(contentsOf: errorsURL), as: UTF8.self)
            let written = String(decoding: writer.stdout, as: UTF8.self)
            XCTAssertEqual(writer.status, 0, writer.stderr)
            XCTAssertTrue(written.contains("--writer: 20 commits to \(path)"), written)
            XCTAssertEqual(follower.terminationStatus, 0, context)
            XCTAssertTrue(text.contains("filled with 300 books"), context)
            XCTAssertTrue(text.contains("followed 20 commits in "), context)
            XCTAssertTrue(text.contains("every changeset checked (and every table against the books)"), context)
            XCTAssertTrue(text.contains("stopped: all 20 commits followed"), context)
            // "[3/20] commit 3, snapshot 7: …" against "[5/20] commits 4–5 (snapshots 8–9):".
            func number(after marker: String, in line: Substring) -> Int? {
                guard let start = line.range(of: marker)?.upperBound else { return nil }
                return Int(line[start...].prefix { $0.isNumber })
            }
            let snapshots = written.split(separator: "\n").compactMap { number(after: ", snapshot ", in: $0) }
            var followed: [ClosedRange<Int>] = []
            for line in text.split(separator: "\n") where line.hasPrefix("[") {
                if let one = number(after: "(snapshot ", in: line) { followed.append(one...one) }
                if let tail = line.range(of: "(snapshots ").map({ line[$0.upperBound...] }),
                   let first = Int(tail.prefix { $0.isNumber }), let last = number(after: "–", in: tail) {
                    followed.append(first...last)
                }
            }
            XCTAssertEqual(snapshots.count, 20, written)
            XCTAssertEqual(followed.reduce(0) { $0 + $1.count }, 20, context)
            for snapshot in snapshots {
                XCTAssertTrue(followed.contains { $0.contains(snapshot) }, "snapshot \(snapshot) not followed: \(context)")
            }
        }
    }

    /// Issue 39: picked at random from two short word lists, titles repeated
    /// once the catalogue was large and read as duplicated rows. Every title
    /// a 300,000-book run can show (the catalogue and the books its commits
    /// add) must be distinct; `--check-titles` generates them with the run's
    /// own code but without a database, so this takes seconds, not the
    /// minutes registering such a view takes in a debug build.
    func testDemoTitlesAreDistinctForALargeCatalogue() throws {
        for seed in ["42", "7"] {
            let run = try Self.run(["demo", "--rows", "300000", "--commits", "100", "--seed", seed, "--check-titles"])
            XCTAssertEqual(run.status, 0, "seed \(seed): \(run.stderr)")
            XCTAssertEqual(String(decoding: run.stdout, as: UTF8.self), "ydbview-cli demo: 300100 titles, all distinct\n")
        }
    }

    // MARK: Changeset validity

    /// Applies each changeset to the previous state's table with the
    /// batch-update checker (`BatchUpdate`, which the demo and the engine
    /// tests use too) and checks that the result is the next state's table.
    /// A change that names its row must point at that row.
    func assertChangesetsAreValid(_ document: Any, name: String) throws {
        let root = try XCTUnwrap(document as? [String: Any], name)
        var table = try Self.table(shownBy: root["initial"])
        for (step, change) in try XCTUnwrap(root["changes"] as? [[String: Any]]).enumerated() {
            let next = try Self.table(shownBy: change["state"])
            do {
                try Self.batchUpdate(describedBy: change).check(from: table, to: next)
            } catch {
                XCTFail("\(name) changes[\(step)]: \(error)")
                return
            }
            table = next
        }
    }

    /// The table a STATE shows: section groups and their [collection, key] items.
    static func table(shownBy state: Any?) throws -> BatchUpdate<RowKey>.Table {
        let sections = try XCTUnwrap((state as? [String: Any])?["sections"] as? [[String: Any]])
        let groups = try sections.map { try XCTUnwrap($0["group"] as? String) }
        let items = try sections.map { try XCTUnwrap($0["items"] as? [[String]]) }
        for (section, rows) in zip(sections, items) { XCTAssertEqual(section["count"] as? Int, rows.count) }
        return BatchUpdate.Table(groups: groups, sections: try items.map { rows in
            try rows.map { item in
                guard item.count == 2 else { throw ReplayFailure(description: "item \(item) is not [collection, key]") }
                return RowKey(collection: item[0], key: item[1])
            }
        })
    }

    /// The batch update an output's `section_changes` and `row_changes`
    /// describe; a row change names its row when it has a collection and key.
    static func batchUpdate(describedBy change: [String: Any]) throws -> BatchUpdate<RowKey> {
        func path(_ value: Any?) throws -> TableIndexPath? {
            guard let value, !(value is NSNull) else { return nil }
            guard let pair = value as? [Int], pair.count == 2 else {
                throw ReplayFailure(description: "\(value) is not an index path [section, row]")
            }
            return TableIndexPath(section: pair[0], row: pair[1])
        }
        let sectionChanges = try XCTUnwrap(change["section_changes"] as? [[String: Any]]).map { section in
            let types: [String: SectionChange.Kind] = ["insert": .insert, "delete": .delete]
            return SectionChange(type: try XCTUnwrap(types[section["type"] as? String ?? ""], "\(section)"),
                                 index: try XCTUnwrap(section["index"] as? Int, "\(section)"),
                                 group: try XCTUnwrap(section["group"] as? String, "\(section)"))
        }
        let rowChanges = try XCTUnwrap(change["row_changes"] as? [[String: Any]]).map { row in
            let types: [String: RowChange.Kind] = ["insert": .insert, "delete": .delete, "move": .move, "update": .update]
            var named: RowKey?
            if let collection = row["collection"] as? String, let key = row["key"] as? String {
                named = RowKey(collection: collection, key: key)
            }
            return BatchUpdate<RowKey>.Change(type: try XCTUnwrap(types[row["type"] as? String ?? ""], "\(row)"),
                                              indexPath: try path(row["index_path"]),
                                              newIndexPath: try path(row["new_index_path"]),
                                              originalRow: named, finalRow: named)
        }
        return BatchUpdate(sectionChanges: sectionChanges, rowChanges: rowChanges)
    }
}

struct ReplayFailure: Error, CustomStringConvertible {
    let description: String
}
