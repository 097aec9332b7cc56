import Foundation
import YDBView

// ydbview-bench: figures for the "Views" and "Changesets" issues, each next to
// a baseline measured in the same run (see Benchmarks/README.md).

let usage = """
usage: ydbview-bench [--sizes 10000,100000,1000000] [--quick] [--repeats N]
                     [--commits N] [--lookups N] [--changeset-commits N]
                     [--groups N] [--wal-commits N] [--views N]
                     [--only views|changesets|durability|search]
  --quick   smoke run: sizes 1000,10000, 1 repeat, few samples
"""

var settings = Settings()
var arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func value(_ flag: String) -> String {
    guard !arguments.isEmpty else { print(usage); exit(2) }
    return arguments.removeFirst()
}
@MainActor func integer(_ flag: String) -> Int {
    guard let number = Int(value(flag)), number > 0 else { print("\(flag) wants a positive integer"); exit(2) }
    return number
}
while !arguments.isEmpty {
    let flag = arguments.removeFirst()
    switch flag {
    case "--sizes":
        let sizes = value(flag).split(separator: ",").compactMap { Int($0) }
        guard !sizes.isEmpty, sizes.allSatisfy({ $0 >= 100 }) else { print("--sizes wants numbers >= 100"); exit(2) }
        settings.sizes = sizes
    case "--quick":
        settings.sizes = [1000, 10_000]
        settings.repeats = 1
        settings.commits = 50
        settings.lookups = 500
        settings.changesetCommits = 20
        settings.walCommits = 1500
        settings.registeredViews = 300
    case "--repeats": settings.repeats = integer(flag)
    case "--commits": settings.commits = integer(flag)
    case "--lookups": settings.lookups = integer(flag)
    case "--changeset-commits": settings.changesetCommits = integer(flag)
    case "--groups": settings.groups = integer(flag)
    case "--wal-commits": settings.walCommits = integer(flag)
    case "--views": settings.registeredViews = integer(flag)
    case "--only":
        switch value(flag) {
        case "views": settings.runChangesets = false; settings.runDurability = false; settings.runSearch = false
        case "changesets": settings.runViews = false; settings.runDurability = false; settings.runSearch = false
        case "durability": settings.runViews = false; settings.runChangesets = false; settings.runSearch = false
        case "search": settings.runViews = false; settings.runChangesets = false; settings.runDurability = false
        default: print(usage); exit(2)
        }
    case "-h", "--help": print(usage); exit(0)
    default: print("unknown argument \(flag)\n" + usage); exit(2)
    }
}

var viewsResults: [ViewsResult] = []
var changesetsResults: [ChangesetsResult] = []
var durabilityResults: [DurabilityResult] = []
var registrationResult: RegistrationResult?
var searchResults: [SearchResult] = []
let loadAtStart = loadAverage()
let startedAt = Date()
log("ydbview-bench: sizes \(settings.sizes.map(count)), load \(loadAtStart)")

do {
    for (index, n) in settings.sizes.enumerated() where settings.runViews || settings.runChangesets || settings.runDurability {
        let fixture = try Fixture(n: n, groups: settings.groups, seed: 0x5EED + UInt64(index))
        defer { fixture.remove() }
        log("  [\(count(n))] loading rows")
        let (loadEngine, loadPlain) = try fixture.load()
        if settings.runViews {
            var result = try ViewsBenchmark.run(fixture, settings)
            result.loadEngine = loadEngine
            result.loadPlain = loadPlain
            viewsResults.append(result)
        } else {
            try fixture.plain.execute("CREATE INDEX t_order ON t (grp, rank)")
            try fixture.database.registerView(Data.view(fixture.counters), name: Data.viewName)
            try fixture.catchUp()
        }
        if settings.runChangesets {
            changesetsResults.append(try ChangesetsBenchmark.run(fixture, settings))
        }
        if settings.runDurability {
            durabilityResults.append(try DurabilityBenchmark.run(fixture, settings))
        }
    }
    if settings.runDurability {
        registrationResult = try DurabilityBenchmark.registration(views: settings.registeredViews)
    }
    if settings.runSearch {
        for n in settings.sizes { searchResults.append(try SearchBenchmark.run(n: n)) }
    }
} catch {
    print("benchmark failed: \(error)")
    exit(1)
}

// MARK: Report

let elapsed = Date().timeIntervalSince(startedAt)
print("# ydbview-bench")
print("")
print("\(ProcessInfo.processInfo.activeProcessorCount) cores; load average at start \(loadAtStart), at end \(loadAverage()); "
      + String(format: "%.1f s; ", elapsed) + "\(settings.groups) groups, medians of \(settings.repeats) (population/reopen), "
      + "\(settings.commits) commits, \(settings.lookups) lookups, \(settings.changesetCommits) changeset commits")

if !viewsResults.isEmpty {
    var population = Table("Views: population (registerView) vs CREATE INDEX on the plain table",
                           ["rows", "registerView", "CREATE INDEX (grp, rank)", "engine ÷ index", "same view, isPersistent: false",
                            "grouping calls/row", "sorting calls/row", "log2(group)", "RSS/row kept", "RSS/row kept, sort keys", "peak RSS/row while populating",
                            "load rows (engine / plain)"])
    var calls = Table("Views: sorting-callback calls per one-row commit",
                      ["rows", "rows in g0", "random insert (median, max)", "⌈log2(m+1)⌉",
                       "append (median, max)", "update moving the row (median)"])
    var latency = Table("Views: one-row commit latency (median / p95) vs the plain indexed table",
                        ["rows", "insert", "plain insert", "engine ÷ plain", "append", "update", "plain update", "engine ÷ plain",
                         "plain update, synchronous=FULL"])
    var lookups = Table("Views: lookups in g0 (median / p95) vs SQL on the plain table",
                        ["rows", "rowKey(at:)", "SQL OFFSET", "engine ÷ SQL", "position(forKey:)", "SQL count(*)",
                         "engine ÷ SQL"])
    var reopen = Table("Views: reopen a persistent view with the same versionTag",
                       ["rows", "open + registerView", "callbacks called", "rows loaded", "reopen ÷ population",
                        "plain: open + ordered scan", "reopen ÷ scan"])
    for r in viewsResults {
        let populate = median(r.populate), index = median(r.createIndex)
        population.add([count(r.n), sec(populate), sec(index), ratio(populate, index), sec(median(r.populateInMemory)),
                        String(format: "%.2f", Double(r.populateGroupingCalls) / Double(r.n)),
                        String(format: "%.1f", Double(r.populateSortingCalls) / Double(r.n)),
                        String(format: "%.1f", log2(Double(r.groupSize))),
                        String(format: "%.0f B", median(r.rssPerRow)),
                        String(format: "%.0f B", median(r.keyedRSSPerRow)),
                        String(format: "%.0f B", median(r.peakPerRow)),
                        "\(sec(r.loadEngine)) / \(sec(r.loadPlain))"])
        let insertMedian = median(r.insertCalls.map(Double.init))
        let expected = median(r.insertGroupSizes.map { Double(ceilLog2($0)) })
        calls.add([count(r.n), "\(r.groupSize)",
                   String(format: "%.0f, %d", insertMedian, r.insertCalls.max() ?? 0),
                   String(format: "%.0f", expected),
                   String(format: "%.0f, %d", median(r.appendCalls.map(Double.init)), r.appendCalls.max() ?? 0),
                   String(format: "%.0f", median(r.updateCalls.map(Double.init)))])
        latency.add([count(r.n), "\(us(r.insert.median)) / \(us(r.insert.p95))",
                     "\(us(r.insertPlain.median)) / \(us(r.insertPlain.p95))",
                     ratio(r.insert.median, r.insertPlain.median),
                     "\(us(r.append.median)) / \(us(r.append.p95))",
                     "\(us(r.update.median)) / \(us(r.update.p95))",
                     "\(us(r.updatePlain.median)) / \(us(r.updatePlain.p95))",
                     ratio(r.update.median, r.updatePlain.median),
                     "\(us(r.updatePlainFull.median)) / \(us(r.updatePlainFull.p95))"])
        lookups.add([count(r.n), "\(us(r.rowKeyAt.median)) / \(us(r.rowKeyAt.p95))",
                     "\(us(r.rowKeyAtPlain.median)) / \(us(r.rowKeyAtPlain.p95))",
                     ratio(r.rowKeyAt.median, r.rowKeyAtPlain.median),
                     "\(us(r.position.median)) / \(us(r.position.p95))",
                     "\(us(r.positionPlain.median)) / \(us(r.positionPlain.p95))",
                     ratio(r.position.median, r.positionPlain.median)])
        reopen.add([count(r.n), sec(median(r.reopen)), "\(r.reopenCalls.max() ?? -1)", "\(r.reopenCount)",
                    ratio(median(r.reopen), median(r.populate)), sec(median(r.orderedScan)),
                    ratio(median(r.reopen), median(r.orderedScan))])
    }
    for table in [population, calls, latency, lookups, reopen] { print(table.render(), terminator: "") }
}

if !changesetsResults.isEmpty {
    var after = Table("Changesets: after a one-row commit, until the changeset is ready (median / p95), group g0",
                      ["rows", "rows in g0", "engine, 50-row range", "engine, no range",
                       "baseline: requery group + diff", "no range ÷ baseline",
                       "baseline: LIMIT 50 + diff", "range ÷ LIMIT 50"])
    var endToEnd = Table("Changesets: from the start of the one-row commit to the finished changeset (median / p95)",
                         ["rows", "rows in g0", "engine, 50-row range", "engine, no range",
                          "baseline: requery group + diff", "no range ÷ baseline",
                          "baseline: LIMIT 50 + diff", "range ÷ LIMIT 50"])
    var parts = Table("Changesets: the parts (medians)",
                      ["rows", "engine commit", "catch-up", "changes (range)", "changes (no range)",
                       "plain commit", "requery", "diff", "requery 50", "diff 50", "row changes (range / full / diff)"])
    func both(_ samples: Samples) -> String { "\(us(samples.median)) / \(us(samples.p95))" }
    for r in changesetsResults {
        after.add([count(r.n), "\(r.groupSize)", both(r.afterRanged), both(r.afterFull), both(r.afterPlain),
                   ratio(r.afterFull.median, r.afterPlain.median), both(r.afterPlain50),
                   ratio(r.afterRanged.median, r.afterPlain50.median)])
        endToEnd.add([count(r.n), "\(r.groupSize)",
                      "\(us(r.endToEndRanged.median)) / \(us(r.endToEndRanged.p95))",
                      "\(us(r.endToEndFull.median)) / \(us(r.endToEndFull.p95))",
                      "\(us(r.endToEndPlain.median)) / \(us(r.endToEndPlain.p95))",
                      ratio(r.endToEndFull.median, r.endToEndPlain.median),
                      "\(us(r.endToEndPlain50.median)) / \(us(r.endToEndPlain50.p95))",
                      ratio(r.endToEndRanged.median, r.endToEndPlain50.median)])
        let k = Double(max(1, settings.changesetCommits))
        parts.add([count(r.n), us(r.commit.median), us(r.catchUp.median), us(r.changesRanged.median),
                   us(r.changesFull.median), us(r.commitPlain.median), us(r.requery.median), us(r.diff.median),
                   us(r.requery50.median), us(r.diff50.median),
                   String(format: "%.1f / %.1f / %.1f", Double(r.rowChangesRanged) / k,
                          Double(r.rowChangesFull) / k, Double(r.baselineEdits) / k)])
    }
    print(after.render(), terminator: "")
    print(endToEnd.render(), terminator: "")
    print(parts.render(), terminator: "")
}
if !durabilityResults.isEmpty {
    var commits = Table("Durability: one-row update commit (median / p95) with one view, and the write-ahead log",
                        ["rows", "commits per run", "plain indexed table", "engine alone", "alone ÷ plain",
                         "engine, reader catching up", "with reader ÷ plain", "reader's catch-up",
                         "WAL max: alone / catching up / never catching up", "never-catching-up reader told to reload"])
    func both(_ samples: Samples) -> String { "\(us(samples.median)) / \(us(samples.p95))" }
    func mb(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }
    for r in durabilityResults {
        commits.add([count(r.n), "\(r.commits)", both(r.plain), both(r.alone), ratio(r.alone.median, r.plain.median),
                     both(r.withReader), ratio(r.withReader.median, r.plain.median), both(r.catchUp),
                     "\(mb(r.walAlone)) / \(mb(r.walWithReader)) / \(mb(r.walNeverCatchingUp))",
                     r.reloadSeen ? "yes" : "no"])
    }
    print(commits.render(), terminator: "")
}
if let r = registrationResult {
    var registration = Table("Durability: registering many views (100 rows each)",
                             ["views", "first \(max(1, r.views / 20)) (median)", "last \(max(1, r.views / 20)) (median)",
                              "last ÷ first", "reopen and register all"])
    registration.add(["\(r.views)", ms(r.first.median), ms(r.last.median), ratio(r.last.median, r.first.median),
                      sec(r.reopen)])
    print(registration.render(), terminator: "")
}
if !searchResults.isEmpty { SearchBenchmark.report(searchResults) }
print("\nEvery ratio is engine time ÷ baseline time: below 1× the engine is faster.")
