import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// MARK: Time

/// Monotonic nanoseconds.
@inline(__always)
func now() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// Runs `body` and returns (result, seconds).
func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let start = now()
    let result = try body()
    return (result, Double(now() - start) / 1e9)
}

/// Samples in seconds, summarised.
struct Samples {
    private(set) var values: [Double] = []
    mutating func add(_ seconds: Double) { values.append(seconds) }
    mutating func add(from start: UInt64) { values.append(Double(now() - start) / 1e9) }

    func quantile(_ q: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let position = Int((Double(sorted.count - 1) * q).rounded())
        return sorted[position]
    }
    var median: Double { quantile(0.5) }
    var p95: Double { quantile(0.95) }
    var mean: Double { values.isEmpty ? .nan : values.reduce(0, +) / Double(values.count) }
}

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2]
        : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

// MARK: Formatting

func us(_ seconds: Double) -> String { String(format: "%.1f µs", seconds * 1e6) }
func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1e3) }
func sec(_ seconds: Double) -> String {
    seconds < 1e-3 ? us(seconds) : seconds < 1 ? ms(seconds) : String(format: "%.2f s", seconds)
}
func ratio(_ a: Double, _ b: Double) -> String {
    let value = a / b
    return String(format: value < 0.1 ? "%.3f×" : "%.2f×", value)
}
func count(_ n: Int) -> String {
    n >= 1_000_000 && n % 1_000_000 == 0 ? "\(n / 1_000_000)M" : n >= 1000 && n % 1000 == 0 ? "\(n / 1000)k" : "\(n)"
}

/// A plain-text table, printed with aligned columns.
struct Table {
    let title: String
    let header: [String]
    var rows: [[String]] = []

    init(_ title: String, _ header: [String]) {
        self.title = title
        self.header = header
    }

    mutating func add(_ row: [String]) { rows.append(row) }

    func render() -> String {
        let all = [header] + rows
        var widths = [Int](repeating: 0, count: header.count)
        for row in all { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        func line(_ row: [String]) -> String {
            "| " + row.enumerated().map { i, cell in
                cell + String(repeating: " ", count: widths[i] - cell.count)
            }.joined(separator: " | ") + " |"
        }
        var out = "\n### \(title)\n\n" + line(header) + "\n"
        out += "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|\n"
        for row in rows { out += line(row) + "\n" }
        return out
    }
}

func log(_ message: String) {
    FileHandle.standardError.write((message + "\n").data(using: .utf8)!)
}

// MARK: Process

/// glibc's malloc_trim, which the Glibc module does not export.
@_silgen_name("malloc_trim")
private func mallocTrim(_ pad: Int) -> Int32

/// Resident memory in bytes (VmRSS), after giving freed heap back to the
/// system so the figure reflects what is live.
func residentBytes(trim: Bool = true) -> Int {
    if trim { _ = mallocTrim(0) }
    return procStatus("VmRSS")
}

/// Peak resident memory of the process so far (VmHWM).
func peakResidentBytes() -> Int { procStatus("VmHWM") }

/// Resets VmHWM to the current RSS (Linux: "5" to /proc/self/clear_refs), so
/// the peak of one step can be read afterwards.
func resetPeakResident() {
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
}

private func procStatus(_ field: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return digits * 1024
    }
    return 0
}

func loadAverage() -> String {
    (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))
        .map { $0.split(separator: " ").prefix(3).joined(separator: " ") } ?? "?"
}

// MARK: Plain SQLite (the baselines)

private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

struct SQLiteFailure: Error, CustomStringConvertible {
    let description: String
}

/// Just enough SQLite to run the baselines the way an application using
/// SQLite directly (or GRDB) would.
final class PlainSQLite {
    let db: OpaquePointer

    init(path: String) throws {
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK, let handle else {
            throw SQLiteFailure(description: "cannot open \(path)")
        }
        db = handle
        // The same settings as the engine's store.
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA synchronous = NORMAL")
    }

    deinit { sqlite3_close_v2(db) }

    func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, sql, nil, nil, &error) == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? "?"
            sqlite3_free(error)
            throw SQLiteFailure(description: "\(message) in \(sql)")
        }
    }

    func prepare(_ sql: String) throws -> PlainStatement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw SQLiteFailure(description: String(cString: sqlite3_errmsg(db)) + " in \(sql)")
        }
        return PlainStatement(statement, db)
    }
}

final class PlainStatement {
    let statement: OpaquePointer
    let db: OpaquePointer
    init(_ statement: OpaquePointer, _ db: OpaquePointer) {
        self.statement = statement
        self.db = db
    }
    deinit { sqlite3_finalize(statement) }

    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(statement, index, value) }
    func bind(_ index: Int32, _ value: String) { sqlite3_bind_text(statement, index, value, -1, transient) }
    func bind(_ index: Int32, _ value: [UInt8]) {
        value.withUnsafeBytes { _ = sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), transient) }
    }

    /// True while there is a row.
    @discardableResult
    func step() throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteFailure(description: String(cString: sqlite3_errmsg(db)))
        }
    }

    func run() throws {
        try step()
        reset()
    }

    func reset() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
    func string(_ column: Int32) -> String { String(cString: sqlite3_column_text(statement, column)) }
}
