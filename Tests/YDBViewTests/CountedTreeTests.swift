import XCTest
@testable import YDBView

final class CountedTreeTests: XCTestCase {
    /// Sweeps sizes with a tiny node capacity so splits, merges and root
    /// collapses all happen, and compares with a sorted array after every step.
    func testRandomInsertRemoveAgainstSortedArray() {
        for seed in [1, 2, 3] as [UInt64] {
            var random = SeededGenerator(seed: seed)
            for size in [0, 1, 2, 4, 8, 16, 64, 256, 1024] {
                var tree = CountedTree<Int, Int>(capacity: 4)
                var model: [Int] = []
                for _ in 0 ..< size * 2 {
                    let key = Int.random(in: 0 ..< size * 4 + 1, using: &random)
                    if let at = model.firstIndex(of: key) {
                        XCTAssertEqual(tree.remove(key), key * 10)
                        model.remove(at: at)
                    } else {
                        tree.insert(key, key * 10)
                        model.append(key)
                        model.sort()
                    }
                }
                XCTAssertNil(tree.checkInvariants(), "seed \(seed) size \(size)")
                XCTAssertNil(tree.lastValuesViolation(), "seed \(seed) size \(size)")
                XCTAssertEqual(tree.count, model.count)
                for (index, key) in model.enumerated() {
                    XCTAssertEqual(tree.element(at: index)?.key, key)
                    XCTAssertEqual(tree.index(of: key), index)
                    XCTAssertEqual(tree.rank(of: key), index)
                    XCTAssertEqual(tree.value(for: key), key * 10)
                    XCTAssertTrue(tree.contains(key))
                }
                for absent in [-1, size * 4 + 1] + (0 ..< size * 4).filter({ !model.contains($0) }).prefix(8) {
                    XCTAssertFalse(tree.contains(absent), "key \(absent)")
                    XCTAssertNil(tree.modifyValue(for: absent) { $0 = 0 })
                }
                // The one-descent search finds every boundary a binary
                // search over the sorted values would, and calls its test
                // about log2(count) times, not once per element.
                for boundary in stride(from: -1, through: size * 4 + 1, by: max(1, size / 8)) {
                    var calls = 0
                    let found = tree.firstIndex { value in
                        calls += 1
                        return value > boundary * 10
                    }
                    XCTAssertEqual(found, model.firstIndex { $0 > boundary } ?? model.count, "boundary \(boundary)")
                    XCTAssertLessThanOrEqual(calls, 4 * (model.count.bitWidth - model.count.leadingZeroBitCount) + 4)
                }
                // Ranges visit their elements forwards and backwards (clamped
                // to the tree), and a visit stops where its body says.
                for _ in 0 ..< 8 {
                    let lower = Int.random(in: -2 ... model.count + 1, using: &random)
                    let upper = Int.random(in: lower ... model.count + 2, using: &random)
                    let from = min(max(0, lower), model.count)
                    let expected = Array(model[from ..< max(from, min(model.count, upper))])
                    for reverse in [false, true] {
                        let order = reverse ? expected.reversed() : expected
                        var visited: [Int] = []
                        XCTAssertTrue(tree.forEach(in: lower ..< upper, reverse: reverse) { key, value in
                            XCTAssertEqual(value, key * 10)
                            visited.append(key)
                            return true
                        })
                        XCTAssertEqual(visited, order, "range \(lower) ..< \(upper), reverse \(reverse)")
                        let stop = Int.random(in: 0 ... expected.count, using: &random)
                        visited = []
                        let finished = tree.forEach(in: lower ..< upper, reverse: reverse) { key, _ in
                            visited.append(key)
                            return visited.count < stop
                        }
                        XCTAssertEqual(finished, stop == 0 && expected.isEmpty || stop > expected.count)
                        XCTAssertEqual(visited, Array(order.prefix(max(1, stop))), "stop at \(stop)")
                    }
                }
                var whole: [Int] = []
                tree.forEach { key, _ in whole.append(key); return true }
                XCTAssertEqual(whole, model)
                var keys: [Int] = []
                tree.forEachKey { keys.append($0) }
                XCTAssertEqual(keys, model)
            }
        }
    }

    /// Nodes keep the last value below them for `firstIndex` (values that
    /// are plain data): changing a value in place, the last ones included,
    /// keeps every node's copy right, and the search then finds boundaries
    /// by the new values.
    func testKeptLastValuesFollowChangesInPlace() {
        var random = SeededGenerator(seed: 7)
        var tree = CountedTree<Int, Int>(sorted: (0 ..< 300).map { ($0, $0 * 10) }, capacity: 4)
        var model = (0 ..< 300).map { $0 * 10 }
        XCTAssertTrue(tree.tracksLast)
        XCTAssertFalse(CountedTree<Int, CountedTree<Int, Int>>().tracksLast)
        let snapshot = tree
        for step in 0 ..< 600 {
            // Values stay increasing: each moves within its neighbours' room.
            let key = step % 3 == 0 ? Int.random(in: 0 ..< 300, using: &random) : [299, 298, 255, 127][step % 4]
            let low = key == 0 ? -5 : model[key - 1] + 1, high = key == 299 ? model[key] + 50 : model[key + 1] - 1
            guard low <= high else { continue }
            let value = Int.random(in: low ... high, using: &random)
            if step % 2 == 0 { tree.updateValue(value, for: key) } else { tree.modifyValue(for: key) { $0 = value } }
            model[key] = value
            XCTAssertNil(tree.lastValuesViolation(), "step \(step)")
            let boundary = model[Int.random(in: 0 ..< 300, using: &random)]
            XCTAssertEqual(tree.firstIndex { $0 > boundary }, model.firstIndex { $0 > boundary } ?? 300)
        }
        XCTAssertNil(snapshot.lastValuesViolation())
        XCTAssertEqual(snapshot.firstIndex { $0 > 2985 }, 299)
    }

    /// A copy keeps its contents while the original is mutated (persistence).
    func testCopiesAreIndependent() {
        var tree = CountedTree<Int, Int>(sorted: (0 ..< 500).map { ($0 * 2, $0) }, capacity: 4)
        let snapshot = tree
        for key in 0 ..< 200 { tree.remove(key * 2) }
        for key in 0 ..< 100 { tree.insert(key * 2 + 1, -key) }
        XCTAssertEqual(snapshot.count, 500)
        XCTAssertNil(snapshot.checkInvariants())
        XCTAssertNil(tree.checkInvariants())
        for key in 0 ..< 500 { XCTAssertEqual(snapshot.value(for: key * 2), key) }
        XCTAssertEqual(tree.count, 400)
    }

    func testBulkBuildMatchesInserts() {
        for size in [0, 1, 3, 47, 48, 49, 1000] {
            let tree = CountedTree<Int, Int>(sorted: (0 ..< size).map { ($0, $0) }, capacity: 4)
            XCTAssertNil(tree.checkInvariants())
            XCTAssertEqual(tree.count, size)
            if size > 0 { XCTAssertEqual(tree.element(at: size - 1)?.key, size - 1) }
        }
    }
}
