@testable import YDBView

/// Random configurations and view contents for the randomized tests.
enum RandomScenario {
    static let groupPool = ["a", "b", "c", "d", "x"]

    static func rangeOptions(using rng: inout SeededGenerator) -> RangeOptions {
        let length = Int.random(in: 1...8, using: &rng)
        let offset = Bool.random(using: &rng) ? 0 : Int.random(in: 0...6, using: &rng)
        let pin: RangePin = Bool.random(using: &rng) ? .beginning : .end
        if Int.random(in: 0..<3, using: &rng) == 0 {
            return try! .fixed(length: length, offset: offset, from: pin)
        }
        let minLength = Bool.random(using: &rng) ? 0 : Int.random(in: 0...5, using: &rng)
        let maxLength = Bool.random(using: &rng) ? Int.max : Int.random(in: max(minLength, 1)...10, using: &rng)
        let grow: RangeGrowOptions = [.pinSide, .nonPinSide, .bothSides].randomElement(using: &rng)!
        return try! .flexible(length: length, offset: offset, from: pin,
                              maxLength: maxLength, minLength: minLength, grow: grow)
    }

    static func config(using rng: inout SeededGenerator) -> MappingsConfig {
        var staticGroups: [String]? = nil
        if Int.random(in: 0..<3, using: &rng) > 0 {
            var groups = (groupPool + ["e"]).shuffled(using: &rng)
            groups.removeLast(Int.random(in: 0...3, using: &rng))
            staticGroups = groups
        }
        let names = staticGroups ?? groupPool
        func group() -> String { names.isEmpty ? "a" : names.randomElement(using: &rng)! }
        var steps: [ConfigStep] = []
        for _ in 0..<Int.random(in: 0...7, using: &rng) {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: steps.append(.dynamicAll(Bool.random(using: &rng)))
            case 1: steps.append(.dynamic(group(), Bool.random(using: &rng)))
            case 2, 3: steps.append(.reversed(group(), Bool.random(using: &rng)))
            case 4, 5, 6: steps.append(.range(group(), rangeOptions(using: &rng)))
            case 7: steps.append(.range(group(), nil))
            case 8:
                let offsets = Set([-2, -1, 1, 2].filter { _ in Bool.random(using: &rng) })
                steps.append(.dependencies(group(), offsets.isEmpty ? [-1] : offsets))
            default:
                let name = Int.random(in: 0..<5, using: &rng) == 0 ? "a" : "all"
                steps.append(.consolidate(Int.random(in: 0...16, using: &rng), name))
            }
        }
        return MappingsConfig(staticGroups: staticGroups, steps: steps)
    }

    /// A fake view holding a random number of rows in random groups (rowids from 1).
    static func view(using rng: inout SeededGenerator, maxRows: Int = 30) -> FakeView {
        let view = FakeView()
        let groups = groupPool.filter { _ in Int.random(in: 0..<4, using: &rng) > 0 }
        for rowid in 1...Int64(Int.random(in: 1...maxRows, using: &rng)) where !groups.isEmpty {
            view.set(rowid, group: groups.randomElement(using: &rng)!, value: Int.random(in: 0...20, using: &rng))
        }
        view.commit()
        return view
    }
}
