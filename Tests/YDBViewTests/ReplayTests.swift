import Foundation
import XCTest

/// Runs the built `ydbview` executable (`ydbview-cli`, next to the test
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
                          ["demo", "--commits"], ["demo", "--commits", "0"], ["demo", "--bogus"]] {
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
        XCTAssertEqual(missing.stderr, "ydbview: cannot read /nonexistent/scenario.json: no such file\n")
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
            .trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "ydbview ", with: "")
        let defined = header.split(separator: "\n").first { $0.hasPrefix("#define YDBVIEW_VERSION ") }
        XCTAssertEqual(defined?.split(separator: " ", omittingEmptySubsequences: true).last, "\"\(version)\"",
                       "ydbview --version says \(version)")
    }

    func testDemoRuns() throws {
        let run = try Self.run(["demo", "--commits", "5", "--quiet"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(String(decoding: run.stdout, as: UTF8.self).contains("5 commits"))
        // Same seed, same run (the last line holds the elapsed time).
        func lines(_ run: Run) -> [Substring] {
            String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").dropLast()
        }
        let first = try Self.run(["demo", "--commits", "25", "--seed", "7"])
        let second = try Self.run(["demo", "--commits", "25", "--seed", "7"])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertGreaterThan(lines(first).count, 25)
        XCTAssertEqual(lines(first), lines(second))
    }

    // MARK: Changeset validity

    /// A table as a STATE shows it: section groups and their [collection, key] items.
    struct Table: Equatable {
        var groups: [String]
        var items: [[[String]]]

        init(state: [String: Any]) throws {
            let sections = try XCTUnwrap(state["sections"] as? [[String: Any]])
            groups = try sections.map { try XCTUnwrap($0["group"] as? String) }
            items = try sections.map { try XCTUnwrap($0["items"] as? [[String]]) }
            for (section, rows) in zip(sections, items) { XCTAssertEqual(section["count"] as? Int, rows.count) }
        }
    }

    /// Applies each changeset to the previous state's table with UITableView
    /// batch-update rules and checks that the result is the next state's table:
    /// row deletes and moves-out at original paths, section deletes, then
    /// section inserts and row inserts/moves-in at final paths in ascending
    /// order; updates at original paths of rows that stay. A change that names
    /// its row must point at that row.
    func assertChangesetsAreValid(_ document: Any, name: String) throws {
        let root = try XCTUnwrap(document as? [String: Any], name)
        var table = try Table(state: try XCTUnwrap(root["initial"] as? [String: Any]))
        for (step, change) in try XCTUnwrap(root["changes"] as? [[String: Any]]).enumerated() {
            let next = try Table(state: try XCTUnwrap(change["state"] as? [String: Any]))
            let context = "\(name) changes[\(step)]"
            let sectionChanges = try XCTUnwrap(change["section_changes"] as? [[String: Any]])
            let rowChanges = try XCTUnwrap(change["row_changes"] as? [[String: Any]])
            func path(_ value: Any?) -> (Int, Int)? {
                guard let pair = value as? [Int], pair.count == 2 else { return nil }
                return (pair[0], pair[1])
            }
            func named(_ change: [String: Any]) -> [String]? {
                guard let collection = change["collection"] as? String, let key = change["key"] as? String else {
                    return nil
                }
                return [collection, key]
            }
            var seen = Set<[String]>()
            for change in rowChanges {
                if let row = named(change) {
                    XCTAssertTrue(seen.insert(row).inserted, "\(context): two changes for \(row)")
                }
            }
            // Removals at original paths.
            var rows: [[[String]?]] = table.items.map { $0.map { Optional($0) } }
            var movedOut: [String: [String]] = [:]   // "s,r" of the final path -> item
            for change in rowChanges {
                let type = change["type"] as? String
                guard type == "delete" || type == "move" || type == "update" else { continue }
                guard let (section, row) = path(change["index_path"]), rows.indices.contains(section),
                      rows[section].indices.contains(row) else {
                    XCTFail("\(context): \(type ?? "?") has a bad index_path \(change)")
                    return
                }
                guard let item = rows[section][row] else {
                    XCTFail("\(context): row [\(section), \(row)] changed twice")
                    return
                }
                if let key = named(change) { XCTAssertEqual(item, key, "\(context): \(change) names another row") }
                if type == "update" {
                    let deletedSection = sectionChanges.contains {
                        $0["type"] as? String == "delete" && $0["index"] as? Int == section
                    }
                    XCTAssertFalse(deletedSection, "\(context): update in a deleted section")
                    continue
                }
                rows[section][row] = nil
                if type == "move", let (toSection, toRow) = path(change["new_index_path"]) {
                    movedOut["\(toSection),\(toRow)"] = item
                }
            }
            var groups: [String?] = table.groups
            for change in sectionChanges where change["type"] as? String == "delete" {
                let index = try XCTUnwrap(change["index"] as? Int)
                XCTAssertTrue(groups.indices.contains(index), "\(context): section delete \(index) out of range")
                guard groups.indices.contains(index) else { return }
                XCTAssertEqual(groups[index], change["group"] as? String, "\(context)")
                XCTAssertTrue(rows[index].allSatisfy { $0 == nil }, "\(context): deleted section \(index) keeps rows")
                groups[index] = nil
            }
            var result: [(String, [[String]])] = zip(groups, rows).compactMap { group, rows in
                group.map { ($0, rows.compactMap { $0 }) }
            }
            let inserts = sectionChanges.filter { $0["type"] as? String == "insert" }
                .sorted { ($0["index"] as? Int ?? 0) < ($1["index"] as? Int ?? 0) }
            for change in inserts {
                let index = try XCTUnwrap(change["index"] as? Int)
                XCTAssertLessThanOrEqual(index, result.count, "\(context): section insert \(index) out of range")
                guard index <= result.count else { return }
                result.insert((try XCTUnwrap(change["group"] as? String), []), at: index)
            }
            // Arrivals at final paths, ascending.
            let arrivals = rowChanges.filter { ["insert", "move"].contains($0["type"] as? String) }
                .compactMap { change in path(change["new_index_path"]).map { (change, $0) } }
                .sorted { ($0.1.0, $0.1.1) < ($1.1.0, $1.1.1) }
            XCTAssertEqual(arrivals.count, rowChanges.filter { ["insert", "move"].contains($0["type"] as? String) }.count,
                           "\(context): an insert or move without new_index_path")
            for (change, (section, row)) in arrivals {
                guard result.indices.contains(section), row <= result[section].1.count,
                      next.items.indices.contains(section), next.items[section].indices.contains(row) else {
                    XCTFail("\(context): bad new_index_path [\(section), \(row)] in \(change)")
                    return
                }
                let item = next.items[section][row]
                if let key = named(change) { XCTAssertEqual(item, key, "\(context): \(change) lands on another row") }
                if change["type"] as? String == "move" {
                    XCTAssertEqual(movedOut["\(section),\(row)"], item, "\(context): a move changes its row")
                }
                result[section].1.insert(item, at: row)
            }
            XCTAssertEqual(result.map(\.0), next.groups, "\(context): sections after applying the changeset")
            XCTAssertEqual(result.map(\.1), next.items, "\(context): rows after applying the changeset")
            table = next
        }
    }
}
