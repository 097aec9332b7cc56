// Compiled with the README's Swift examples into a Swift 6 package outside
// the repository (scripts/check-swift6-package.sh): a view, an observer and
// mappings while two threads commit at once. Complete concurrency checking,
// warnings as errors.
import Foundation
import YDBView

struct Score: Codable, Sendable {
    var player: String
    var points: Int

    init(player: String, points: Int) { (self.player, self.points) = (player, points) }
    init?(_ row: ViewRow) {
        guard let score = try? JSONDecoder().decode(Score.self, from: Data(row.object ?? [])) else { return nil }
        self = score
    }
}

/// Counts what the observer saw; the observer may run on any committing thread.
final class Tally: @unchecked Sendable {   // guarded by `lock`
    private let lock = NSLock()
    private var snapshots: [UInt64] = []
    func add(_ snapshot: UInt64) { lock.withLock { snapshots.append(snapshot) } }
    var all: [UInt64] { lock.withLock { snapshots } }
}

/// Scores grouped high (50 or more) and low, best first.
func byPointsView() -> View {
    View(
        grouping: ViewGrouping(flavour: .object) { row in Score(row).map { $0.points >= 50 ? "high" : "low" } },
        sorting: ViewSorting(flavour: .object) { _, a, b in
            let (x, y) = (Score(a)?.points ?? 0, Score(b)?.points ?? 0)
            return x > y ? .ascending : x < y ? .descending : a.key < b.key ? .ascending : .descending
        },
        versionTag: "1")
}

func commitFromTwoThreads(_ database: Database) throws {
    let byPoints = byPointsView()
    try database.registerView(byPoints, name: "byPoints")
    let tally = Tally()
    database.addCommitObserver { tally.add($0.snapshot) }

    let reader = try database.newConnection()
    let mappings = Mappings(groups: ["high", "low"], view: "byPoints")
    try reader.beginLongLivedReadTransaction()
    try reader.read { try mappings.update(with: $0) }

    let group = DispatchGroup()
    for thread in 0 ..< 2 {
        let writer = try database.newConnection()
        DispatchQueue.global().async(group: group) {
            for round in 0 ..< 50 {
                try? writer.readWrite { t in
                    try t.setValue(Score(player: "p\(thread)-\(round % 10)", points: (round * 37 + thread) % 100),
                                   forKey: "p\(thread)-\(round % 10)", inCollection: "scores")
                }
            }
        }
    }
    group.wait()
    let changeset = try mappings.changes(for: try reader.beginLongLivedReadTransaction())
    let shown = (0 ..< mappings.numberOfSections).map { mappings.numberOfItems(inSection: $0) ?? 0 }.reduce(0, +)
    let snapshots = tally.all
    guard shown == 20, snapshots == snapshots.sorted(), !changeset.rowChanges.isEmpty else {
        print("FAIL: \(shown) rows shown, observer order \(snapshots == snapshots.sorted())")
        exit(1)
    }
    print("two threads committed \(snapshots.count) times; the table shows \(shown) rows")
}

/// A live view followed with `for try await` while two tasks commit: the
/// changesets move the mappings to the newest snapshot, and what they show
/// at the end is what a fresh read shows.
func followWithTwoTasks() async throws {
    let database = try Database(path: nil)
    defer { database.close() }
    let byPoints = byPointsView()
    try database.registerView(byPoints, name: "byPoints")
    let ui = try database.newConnection()
    let writers = [try database.newConnection(), try database.newConnection()]
    let writing = Task.detached {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (task, writer) in writers.enumerated() {
                group.addTask {
                    for round in 0 ..< 40 {
                        let score = Score(player: "p\(task)-\(round % 10)", points: (round * 37 + task) % 100)
                        try await writer.asyncReadWrite { try $0.setValue(score, forKey: score.player, inCollection: "scores") }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await writers[0].asyncReadWrite { try $0.setValue(Score(player: "last", points: 1), forKey: "last", inCollection: "scores") }
    }
    let mappings = Mappings(groups: ["high", "low"], view: "byPoints")
    var changesets = 0
    for try await _ in ui.changesets(for: mappings) {
        changesets += 1
        if try ui.read({ try $0.object(forKey: "last", inCollection: "scores") }) != nil { break }
    }
    try await writing.value
    let fresh = try database.newConnection()
    let counts = try fresh.read { t in
        (try t.view("byPoints").numberOfItems(inGroup: "high"), try t.view("byPoints").numberOfItems(inGroup: "low"))
    }
    let shown = (mappings.numberOfItems(inSection: 0) ?? -1, mappings.numberOfItems(inSection: 1) ?? -1)
    guard changesets > 1, shown == counts, counts.0 + counts.1 == 21, ui.snapshot == database.snapshot else {
        fatalError("the live view showed \(shown) rows after \(changesets) changesets, a fresh read \(counts)")
    }
    print("followed a live view with for try await: \(changesets) changesets, \(counts.0 + counts.1) rows")
}
