#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

// ydbview-cli: `replay` runs a scenario file through the engine and prints what a
// table would see; `demo` shows a live, ranged, animated catalogue.
// Exit status: 0 success, 1 engine error, 2 usage error or malformed input.

/// Must equal YDBVIEW_VERSION in include/ydbview.h (a test checks it).
let toolVersion = "0.2.0"

let replayUsage = """
    usage: ydbview-cli replay FILE|-  run a scenario file (- reads standard input) and
                                      print its states and changesets as JSON
                                      (format: docs/replay-format.md)
    """
let demoUsage = """
    usage: ydbview-cli demo [--seed N] [--commits N] [--rows N] [--delay MS] [--quiet]
                            [--check-titles]
                                      a live top-10 catalogue: random commits and the
                                      changesets a table view would animate, each one
                                      checked against the tables before and after
    usage: ydbview-cli demo --shared PATH (--writer | --follower) [--idle SECONDS]
                            [--seed N] [--commits N] [--rows N] [--delay MS] [--quiet]
                                      the same, over two processes: one commits, the
                                      other animates the table from its commits
      --seed N       random seed (default 42): the same seed gives the same run
      --commits N    number of commits (default 30, 1...100000)
      --rows N       books in the catalogue (default 3000, 100...10000000); the view
                     is registered in the background, with a progress bar on a terminal
      --delay MS     pause after each commit (default 60, or 900 when the table is
                     animated on a terminal; 0...60000)
      --quiet        print only the summary line
      --check-titles only check that every title such a run can show is distinct
                     (no database; the tests use it)
      --shared PATH  open the database file PATH in shared mode, where several
                     processes use it at once, instead of a temporary database.
                     Whichever process finds no books in it fills it first (its
                     --rows and --seed, one commit); the file is kept
      --writer       make the random commits (same seed, same commits; --delay
                     default 900) and print one line per commit; no table
      --follower     show the table and animate the changesets of the other
                     process's commits, checked as above (--delay: how long each
                     is shown, default 600 on a terminal, 0 in the log); ends after
                     --commits commits, after --idle seconds without one, on
                     Ctrl-C or Ctrl-D
      --idle SECONDS follower: stop after this long without a commit (default 30,
                     1...86400)

    On a terminal the table is redrawn in place for each commit, its changes
    marked; a pipe, a file, TERM=dumb or NO_COLOR get a plain log instead.

    Two terminals, the follower first (give both the same --commits):
      terminal 1: ydbview-cli demo --shared /tmp/books.sqlite --follower
      terminal 2: ydbview-cli demo --shared /tmp/books.sqlite --writer
    """
let usage = """
    \(replayUsage)
    \(demoUsage.replacingOccurrences(of: "usage: ", with: "       "))
           ydbview-cli --help | --version
    """

/// Prints help on standard output and exits 0 (asked for) — unlike usage
/// errors, which go to standard error with status 2.
func help(_ text: String) -> Never {
    print(text)
    exit(0)
}

func fail(_ status: Int32, _ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(status)
}

func readInput(_ argument: String) -> [UInt8] {
    if argument == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
    guard let data = FileManager.default.contents(atPath: argument) else {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory)
        fail(2, "ydbview-cli: cannot read \(argument): \(exists ? (isDirectory.boolValue ? "is a directory" : "permission denied") : "no such file")")
    }
    return Array(data)
}

func replay(_ arguments: [String]) -> Never {
    if arguments.contains("--help") || arguments.contains("-h") { help(replayUsage) }
    guard arguments.count == 1 else { fail(2, replayUsage) }
    let scenario: Scenario
    do {
        scenario = try Scenario.parse(bytes: readInput(arguments[0]))
    } catch let error as ScenarioError {
        fail(2, error.description)
    } catch {
        fail(2, "input: \(error)")
    }
    do {
        let session = try Replay(scenario)
        defer { session.close() }
        let output = try session.run()
        FileHandle.standardOutput.write(Data(output.prettyText.utf8))
    } catch {
        fail(1, "ydbview-cli: replay failed: \(error)")
    }
    exit(0)
}

func demo(_ arguments: [String]) -> Never {
    var options = DemoOptions()
    var checkTitles = false
    var idle: Int?
    var remaining = arguments[...]
    func number(after flag: String, _ range: ClosedRange<Int>) -> Int {
        guard let text = remaining.popFirst() else { fail(2, "ydbview-cli demo: \(flag) needs a number\n\(demoUsage)") }
        guard let value = Int(text), range.contains(value) else {
            fail(2, "ydbview-cli demo: \(flag) must be an integer in \(range.lowerBound)...\(range.upperBound), not \"\(text)\"")
        }
        return value
    }
    while let argument = remaining.popFirst() {
        switch argument {
        case "--seed": options.seed = UInt64(number(after: "--seed", 0...Int.max))
        case "--commits": options.commits = number(after: "--commits", 1...100_000)
        case "--rows": options.rows = number(after: "--rows", 100...10_000_000)
        case "--delay": options.delay = number(after: "--delay", 0...60_000)
        case "--quiet": options.quiet = true
        case "--check-titles": checkTitles = true
        case "--shared":
            guard let path = remaining.popFirst(), !path.isEmpty else {
                fail(2, "ydbview-cli demo: --shared needs the database file's path\n\(demoUsage)")
            }
            options.shared = path
        case "--writer", "--follower":
            let role: DemoRole = argument == "--writer" ? .writer : .follower
            if let other = options.role, other != role {
                fail(2, "ydbview-cli demo: --writer and --follower exclude each other: run one process of each")
            }
            options.role = role
        case "--idle": idle = number(after: "--idle", 1...86_400)
        case "--help", "-h": help(demoUsage)
        default: fail(2, "ydbview-cli demo: unknown option \"\(argument)\"\n\(demoUsage)")
        }
    }
    if options.shared != nil && options.role == nil {
        fail(2, "ydbview-cli demo: --shared needs --writer (make the commits) or --follower (show them), "
             + "one process of each:\n  terminal 1: ydbview-cli demo --shared \(options.shared!) --follower\n"
             + "  terminal 2: ydbview-cli demo --shared \(options.shared!) --writer")
    }
    if options.shared == nil && options.role != nil {
        fail(2, "ydbview-cli demo: --writer and --follower need --shared PATH, the file both processes open")
    }
    if let idle {
        guard options.role == .follower else { fail(2, "ydbview-cli demo: --idle is for --follower") }
        options.idle = idle
    }
    if checkTitles && options.shared != nil {
        fail(2, "ydbview-cli demo: --check-titles opens no database: leave out --shared")
    }
    do {
        var demo = try Demo(options)
        defer { demo.close() }
        switch (checkTitles, options.role) {
        case (true, _): print("ydbview-cli demo: \(try demo.checkTitles()) titles, all distinct")
        case (false, .writer?): try demo.runWriter()
        case (false, .follower?): try demo.runFollower()
        case (false, nil): try demo.run()
        }
    } catch is DemoInterrupted {
        // Ctrl-C on the animated table (or on a --shared process, after its
        // summary): the terminal is restored and the database closed (the
        // defer above) before leaving.
        exit(130)
    } catch {
        fail(1, "ydbview-cli: demo failed: \(error)")
    }
    exit(0)
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "replay": replay(Array(arguments.dropFirst()))
case "demo": demo(Array(arguments.dropFirst()))
case "--version", "version": print("ydbview-cli \(toolVersion)")
case "--help", "-h", "help": help(usage)
case nil: fail(2, usage)
case let command?: fail(2, "ydbview-cli: unknown command \"\(command)\"\n\(usage)")
}
