import XCTest
@testable import YDBView

/// The rare paths — node splits and merges, relabelling a crowded window of
/// order labels — run in ordinary tests: debug builds use tiny trees and
/// label gaps (`Tuning`) and check every view update against its
/// invariants (and the stored rows at each commit).
final class RarePathTests: XCTestCase {
    func testSplitsMergesAndRelabelsRunWithInvariantsChecked() throws {
        #if !DEBUG
        throw XCTSkip("the rare paths are made common in debug builds only")
        #else
        XCTAssertTrue(Tuning.checksInvariants)
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let connection = try database.newConnection()
        var random = SeededGenerator(seed: 7)
        var ranks: [String: Int] = [:]
        // Crowd one spot: many rows with ranks between two neighbours force
        // relabelling; 400 rows split nodes; removing most merges them.
        let counts = try RarePaths.counting {
            for batch in 0 ..< 20 {
                try connection.readWrite { t in
                    for index in 0 ..< 20 {
                        let key = "k\(batch)-\(index)"
                        let rank = batch % 2 == 0 ? Int.random(in: 0 ..< 1_000_000, using: &random) : 500_000 + index
                        ranks[key] = rank
                        try t.setObject(Item.encode(group: "g", rank: rank), forKey: key, inCollection: "c", metadata: nil)
                    }
                }
            }
            for key in ranks.keys.sorted().prefix(360) {
                try connection.readWrite { try $0.removeObject(forKey: key, inCollection: "c") }
            }
        }.counts
        XCTAssertGreaterThan(counts.splits, 0, "no node split")
        XCTAssertGreaterThan(counts.merges, 0, "no node merge")
        XCTAssertGreaterThan(counts.relabels, 0, "no relabelling")
        let remaining = ranks.keys.sorted().dropFirst(360)
        let expected = remaining.sorted { (ranks[$0]!, $0) < (ranks[$1]!, $1) }
        XCTAssertEqual(try connection.read { try $0.view("v").dump()["g"] }, Array(expected))
        #endif
    }
}

/// Groups that come and go: the row index keeps each group by a small id, and
/// the ids of emptied groups are dropped (the index renumbered) once there
/// are many, so they do not pile up.
final class GroupIDTests: XCTestCase {
    func testGroupsThatComeAndGoAreRenumberedAway() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let connection = try database.newConnection()
        let counts = try RarePaths.counting {
            try connection.readWrite { t in
                for index in 0 ..< 20 {
                    try t.setObject(Item.encode(group: "g", rank: index), forKey: "k\(index)", inCollection: "c", metadata: nil)
                }
            }
            for round in 0 ..< 300 {
                try connection.readWrite { t in
                    try t.setObject(Item.encode(group: "t\(round)", rank: round), forKey: "x\(round)", inCollection: "c",
                                    metadata: nil)
                    // Moving a stable row to another group and back uses the ids too.
                    try t.setObject(Item.encode(group: "u\(round)", rank: 3), forKey: "k3", inCollection: "c", metadata: nil)
                }
                try connection.readWrite { t in
                    try t.removeObject(forKey: "x\(round)", inCollection: "c")
                    try t.setObject(Item.encode(group: "g", rank: 3), forKey: "k3", inCollection: "c", metadata: nil)
                }
            }
            try connection.readWrite { t in
                try t.setObject(Item.encode(group: "late", rank: 1), forKey: "y", inCollection: "c", metadata: nil)
            }
        }.counts
        #if DEBUG
        XCTAssertGreaterThan(counts.groupRenumbers, 0, "never renumbered")
        #endif
        let dump = try connection.read { try $0.view("v").dump() }
        XCTAssertEqual(dump["g"], (0 ..< 20).map { "k\($0)" })
        XCTAssertEqual(dump["late"], ["y"])
        XCTAssertEqual(dump.count, 2)
        XCTAssertEqual(try connection.read { try $0.view("v").position(forKey: "k3", inCollection: "c")?.index }, 3)
    }
}

/// `PendingMarks` (the dependency marks' blocks) against a plain sorted array,
/// over enough marks that blocks split, empty and shift.
final class PendingMarksTests: XCTestCase {
    func testBlocksAgreeWithAPlainArray() {
        var random = SeededGenerator(seed: 11)
        var marks = PendingMarks()
        var model: [Int] = []
        for step in 0 ..< 20_000 {
            if step % 1_000 == 0 { XCTAssertEqual(marks.positions, model, "step \(step)") }
            let position = Int.random(in: 0 ..< 3_000, using: &random)
            switch Int.random(in: 0 ..< 10, using: &random) {
            case 0 ..< 5:
                marks.insert(position)
                if !model.contains(position) { model.append(position); model.sort() }
            case 5 ..< 7:
                let removed = marks.remove(position)
                XCTAssertEqual(removed, model.contains(position))
                model.removeAll { $0 == position }
            case 7 ..< 9:
                marks.shift(from: position, by: 1)
                model = model.map { $0 >= position ? $0 + 1 : $0 }
            default:
                // A delete at `position`: its mark goes, the later ones move up.
                _ = marks.remove(position)
                marks.shift(from: position + 1, by: -1)
                model = model.filter { $0 != position }.map { $0 > position ? $0 - 1 : $0 }
            }
        }
        XCTAssertGreaterThan(model.count, 600, "enough marks to split blocks")
        XCTAssertEqual(marks.positions, model)
    }
}
