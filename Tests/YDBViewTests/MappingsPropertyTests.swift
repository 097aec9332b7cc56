import XCTest
@testable import YDBView

/// Every getter against an independent computation (`MappingsModel`) over thousands
/// of random view contents and configurations. Seeded: a failure prints its seed.
final class MappingsPropertyTests: XCTestCase {
    func testGettersAgreeWithIndependentModel() {
        let baseSeed = UInt64(20_240_611)
        for caseNumber in 0..<3_000 {
            let seed = baseSeed &+ UInt64(caseNumber)
            var rng = SeededGenerator(seed: seed)
            let view = RandomScenario.view(using: &rng)
            let config = RandomScenario.config(using: &rng)
            let mappings = config.make()
            let contents = view.contents
            mappings.update(with: contents, snapshot: view.snapshot)
            let problems = getterDisagreements(mappings, model: MappingsModel(config: config, contents: contents),
                                               contents: contents)
            if !problems.isEmpty {
                XCTFail("seed \(seed): \(config)\ncontents \(contents.groups)\n" + problems.prefix(8).joined(separator: "\n"))
                return
            }
        }
    }

    /// Configuration after the first update takes effect at once, exactly as if it
    /// had been made before (for configurations whose ranges are placed fresh).
    func testConfiguringAfterUpdateMatchesConfiguringBefore() {
        for caseNumber in 0..<1_000 {
            let seed = UInt64(77_000) &+ UInt64(caseNumber)
            var rng = SeededGenerator(seed: seed)
            let view = RandomScenario.view(using: &rng)
            let config = RandomScenario.config(using: &rng)
            let late = MappingsConfig(staticGroups: config.staticGroups, steps: []).make()
            late.update(with: view.contents, snapshot: view.snapshot)
            for step in config.steps { step.apply(to: late) }
            let problems = getterDisagreements(late, model: MappingsModel(config: config, contents: view.contents),
                                               contents: view.contents)
            if !problems.isEmpty {
                XCTFail("seed \(seed): \(config)\n" + problems.prefix(8).joined(separator: "\n"))
                return
            }
        }
    }
}
