import XCTest
@testable import YDBView

/// The sort-key encodings keep value order as byte order, tuples sort by
/// their first value first, and the row cache of comparator views never
/// keeps a rolled-back value.
final class SortKeyTests: XCTestCase {
    private func key(_ build: (inout SortKey) -> Void) -> SortKey {
        var key = SortKey()
        build(&key)
        return key
    }

    private func assertOrdered<T>(_ values: [T], descending: Bool = false, file: StaticString = #filePath,
                                  line: UInt = #line, _ append: (inout SortKey, T, Bool) -> Void) {
        let keys = values.map { value in key { append(&$0, value, descending) } }
        for (a, b) in zip(keys, keys.dropFirst()) {
            XCTAssertTrue(descending ? b < a : a < b, "\(a) vs \(b)", file: file, line: line)
        }
    }

    func testIntegersDoublesAndTextKeepTheirOrder() {
        let integers: [Int64] = [.min, -1 << 40, -256, -1, 0, 1, 255, 256, 1 << 40, .max]
        assertOrdered(integers) { $0.append($1, descending: $2) }
        assertOrdered(integers, descending: true) { $0.append($1, descending: $2) }
        let doubles: [Double] = [-.infinity, -1e300, -2.5, -1e-300, 0, 1e-300, 2.5, 1e300, .infinity, .nan]
        assertOrdered(doubles) { $0.append($1, descending: $2) }
        assertOrdered(doubles, descending: true) { $0.append($1, descending: $2) }
        XCTAssertEqual(key { $0.append(-0.0) }, key { $0.append(0.0) })
        let texts = ["", "\u{0}", "\u{0}\u{0}", "\u{0}a", "a", "a\u{0}", "a\u{0}b", "ab", "b", "é", "😀"]
        assertOrdered(texts) { $0.append($1, descending: $2) }
        assertOrdered(texts, descending: true) { $0.append($1, descending: $2) }
        assertOrdered(texts.map { Array($0.utf8) }) { $0.append(bytes: $1, descending: $2) }
    }

    func testTuplesSortByTheirFirstValueFirst() {
        var rng = SeededGenerator(seed: 99)
        let words = ["", "a", "ab", "b", "a\u{0}", "ba"]
        let tuples = (0 ..< 300).map { _ in
            (words.randomElement(using: &rng)!, Int64.random(in: -3 ... 3, using: &rng), Double(Int.random(in: -2 ... 2, using: &rng)) / 2)
        }
        for a in tuples {
            for b in tuples.prefix(40) {
                let ka = key { $0.append(a.0); $0.append(a.1, descending: true); $0.append(a.2) }
                let kb = key { $0.append(b.0); $0.append(b.1, descending: true); $0.append(b.2) }
                let expected = Array(a.0.utf8).lexicographicallyPrecedes(Array(b.0.utf8)) ? true
                    : a.0 != b.0 ? false : a.1 != b.1 ? a.1 > b.1 : a.2 < b.2
                XCTAssertEqual(ka < kb, expected, "\(a) \(b)")
            }
        }
    }

    /// A key of up to 24 bytes is stored in the value, a longer one in an
    /// array; however it was built, it must compare, hash and read back as
    /// its bytes do (zero bytes, keys that are prefixes of others and keys
    /// on both sides of the limit included).
    func testKeysCompareAsTheirBytesWhereverTheyAreStored() {
        var rng = SeededGenerator(seed: 7)
        let byteStrings = (0 ..< 300).map { _ in
            (0 ..< Int.random(in: 0 ... 40, using: &rng)).map { _ in [0, 1, 0x7f, 0x80, 0xff].randomElement(using: &rng)! as UInt8 }
        }
        func built(_ bytes: [UInt8], _ route: Int) -> SortKey {
            switch route {
            case 0: return SortKey(bytes: bytes)
            case 1: return bytes.withUnsafeBytes { SortKey(copying: $0) }
            default:   // appended in pieces, crossing the limit in the middle of one
                var key = SortKey()
                var rest = bytes[...]
                while !rest.isEmpty {
                    let piece = rest.prefix(Int.random(in: 1 ... 9, using: &rng))
                    key.append(raw: Array(piece))
                    rest = rest.dropFirst(piece.count)
                }
                return key
            }
        }
        let keys = byteStrings.enumerated().map { built($0.element, $0.offset % 3) }
        for (a, bytesA) in zip(keys, byteStrings) {
            XCTAssertEqual(a.bytes, bytesA)
            XCTAssertEqual(a.count, bytesA.count)
            for (b, bytesB) in zip(keys, byteStrings).prefix(80) {
                let expected = bytesA == bytesB ? 0 : bytesA.lexicographicallyPrecedes(bytesB) ? -1 : 1
                XCTAssertEqual(SortKey.compare(a, b).signum(), expected, "\(a) vs \(b)")
                XCTAssertEqual(a == b, bytesA == bytesB, "\(a) vs \(b)")
                if a == b { XCTAssertEqual(a.hashValue, b.hashValue) }
            }
        }
        // What a view keeps per key: 32 bytes, none of them a reference for
        // a short key.
        XCTAssertEqual(MemoryLayout<SortKey>.stride, 32)
    }

    /// A population sorts its rows by radix on the keys' first eight bytes,
    /// then by whole keys where those tie (`KeyOrder`). Whatever the keys
    /// -- sharing long prefixes, shorter than eight bytes, ending in zero
    /// bytes, in the value or in an array, equal -- the rows must come out
    /// as a stable sort by bytes puts them: equal keys in input order.
    func testAPopulationsKeyOrderIsAStableSortByBytes() {
        var rng = SeededGenerator(seed: 11)
        let alphabet: [UInt8] = [0, 1, 0x61, 0x80, 0xff]
        for round in 0 ..< 60 {
            let count = [0, 1, 2, 3, 17, 64, 65, 400][round % 8]
            let shared = (0 ..< Int.random(in: 0 ... 12, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            let rows = (0 ..< count).map { index -> KeyedRow in
                let tail = (0 ..< Int.random(in: 0 ... 30, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
                let bytes = Int.random(in: 0 ... 3, using: &rng) == 0 ? Array(shared.prefix(3)) : shared + tail
                return KeyedRow(key: SortKey(bytes: bytes), rowid: Int64(index))
            }
            let expected = rows.indices.sorted {
                rows[$0].key.bytes != rows[$1].key.bytes ? rows[$0].key.bytes.lexicographicallyPrecedes(rows[$1].key.bytes) : $0 < $1
            }.map { rows[$0] }
            var sorted = rows
            KeyOrder.sort(&sorted)
            XCTAssertEqual(sorted.map(\.rowid), expected.map(\.rowid), "round \(round), \(count) rows")
            XCTAssertEqual(sorted.map(\.key.bytes), expected.map(\.key.bytes))
        }
        // Every run of that test must reach the radix passes and their ties.
        XCTAssertLessThanOrEqual(KeyOrder.radixThreshold, 17)
    }

    /// A comparison inside a transaction that rolls back caches the row as
    /// that transaction changed it; the next transaction must not use it.
    func testRolledBackRowsLeaveNoTraceInTheComparatorCache() throws {
        let database = try Database(path: nil)
        defer { database.close() }
        try database.registerView(rankView(), name: "v")
        let connection = try database.newConnection()
        try connection.readWrite { t in
            for i in 0 ..< 20 { try t.setObject(Item.encode(group: "g", rank: i * 10), forKey: "k\(i)", inCollection: "c", metadata: nil) }
        }
        struct Abort: Error {}
        XCTAssertThrowsError(try connection.readWrite { t in
            // k10 jumps to the front, then inserts compare against it.
            try t.setObject(Item.encode(group: "g", rank: -5), forKey: "k10", inCollection: "c", metadata: nil)
            for i in 0 ..< 10 { try t.setObject(Item.encode(group: "g", rank: i), forKey: "n\(i)", inCollection: "c", metadata: nil) }
            throw Abort()
        })
        for i in 0 ..< 40 {
            try connection.readWrite { t in
                try t.setObject(Item.encode(group: "g", rank: i * 5 + 1), forKey: "m\(i)", inCollection: "c", metadata: nil)
            }
        }
        try connection.read { t in
            var ranks: [Int] = []
            try t.view("v").enumerateRows(inGroup: "g") { _, object, _, _, _ in ranks.append(Item.rank(object)) }
            XCTAssertEqual(ranks, ranks.sorted())
            XCTAssertEqual(ranks.count, 60)
        }
    }

    /// Registering the sort-key form under the tag of a stored comparator
    /// view (no keys stored) repopulates instead of loading keyless rows.
    func testSortKeyViewDoesNotLoadAComparatorViewsRows() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ydbview-keys-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        do {
            let database = try Database(path: path)
            try database.registerView(rankView(), name: "v")
            try database.newConnection().readWrite { t in
                for i in 0 ..< 10 { try t.setObject(Item.encode(group: "g", rank: 10 - i), forKey: "k\(i)", inCollection: "c", metadata: nil) }
            }
            database.close()
        }
        let database = try Database(path: path)
        defer { database.close() }
        XCTAssertEqual(try database.registerView(rankView(keyed: true), name: "v"), .rebuiltBecauseStale)
        try database.newConnection().readWrite { t in
            try t.setObject(Item.encode(group: "g", rank: 5), forKey: "new", inCollection: "c", metadata: nil)
        }
        let keys = try database.newConnection().read { try $0.view("v").dump()["g"]! }
        XCTAssertEqual(keys, ["k9", "k8", "k7", "k6", "k5", "new", "k4", "k3", "k2", "k1", "k0"])
    }
}
