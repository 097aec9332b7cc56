#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

// ydbview: `replay` runs a scenario file through the engine and prints what a
// table would see; `demo` shows a live, ranged, animated catalogue.
// Exit status: 0 success, 1 engine error, 2 usage error or malformed input.

/// Must equal YDBVIEW_VERSION in include/ydbview.h (a test checks it).
let toolVersion = "0.1.0"

let usage = """
    usage: ydbview replay FILE|-      run a scenario file (- reads standard input) and
                                      print its states and changesets as JSON
           ydbview demo [--seed N] [--commits N] [--quiet]
                                      a live top-10 catalogue: random commits and the
                                      changesets a table view would animate
           ydbview --help | --version
    """

func fail(_ status: Int32, _ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(status)
}

func readInput(_ argument: String) -> [UInt8] {
    if argument == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
    guard let data = FileManager.default.contents(atPath: argument) else {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory)
        fail(2, "ydbview: cannot read \(argument): \(exists ? (isDirectory.boolValue ? "is a directory" : "permission denied") : "no such file")")
    }
    return Array(data)
}

func replay(_ arguments: [String]) -> Never {
    guard arguments.count == 1 else { fail(2, usage) }
    let scenario: Scenario
    do {
        scenario = try Scenario.parse(bytes: readInput(arguments[0]))
    } catch let error as ScenarioError {
        fail(2, error.description)
    } catch {
        fail(2, "input: \(error)")
    }
    do {
        let output = try Replay(scenario).run()
        FileHandle.standardOutput.write(Data(output.prettyText.utf8))
        exit(0)
    } catch {
        fail(1, "ydbview: replay failed: \(error)")
    }
}

func demo(_ arguments: [String]) -> Never {
    var options = DemoOptions()
    var remaining = arguments[...]
    func number(after flag: String, _ range: ClosedRange<Int>) -> Int {
        guard let text = remaining.popFirst() else { fail(2, "ydbview demo: \(flag) needs a number\n\(usage)") }
        guard let value = Int(text), range.contains(value) else {
            fail(2, "ydbview demo: \(flag) must be an integer in \(range.lowerBound)...\(range.upperBound), not \"\(text)\"")
        }
        return value
    }
    while let argument = remaining.popFirst() {
        switch argument {
        case "--seed": options.seed = UInt64(number(after: "--seed", 0...Int.max))
        case "--commits": options.commits = number(after: "--commits", 1...100_000)
        case "--quiet": options.quiet = true
        default: fail(2, "ydbview demo: unknown option \"\(argument)\"\n\(usage)")
        }
    }
    do {
        var demo = try Demo(options)
        try demo.run()
        exit(0)
    } catch {
        fail(1, "ydbview: demo failed: \(error)")
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "replay": replay(Array(arguments.dropFirst()))
case "demo": demo(Array(arguments.dropFirst()))
case "--version", "version": print("ydbview \(toolVersion)")
case "--help", "-h", "help": fail(2, usage)
case nil: fail(2, usage)
case let command?: fail(2, "ydbview: unknown command \"\(command)\"\n\(usage)")
}
