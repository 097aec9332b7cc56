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
        let before = RarePaths.shared.current
        var random = SeededGenerator(seed: 7)
        var ranks: [String: Int] = [:]
        // Crowd one spot: many rows with ranks between two neighbours force
        // relabelling; 400 rows split nodes; removing most merges them.
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
        let after = RarePaths.shared.current
        XCTAssertGreaterThan(after.splits, before.splits, "no node split")
        XCTAssertGreaterThan(after.merges, before.merges, "no node merge")
        XCTAssertGreaterThan(after.relabels, before.relabels, "no relabelling")
        let remaining = ranks.keys.sorted().dropFirst(360)
        let expected = remaining.sorted { (ranks[$0]!, $0) < (ranks[$1]!, $1) }
        XCTAssertEqual(try connection.read { try $0.view("v")!.dump()["g"] }, Array(expected))
        #endif
    }
}
