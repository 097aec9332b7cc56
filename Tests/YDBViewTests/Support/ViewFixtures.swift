import Foundation
@testable import YDBView

/// Objects in view tests are "group|rank" strings: easy to write, easy to read.
enum Item {
    static func encode(group: String?, rank: Int) -> [UInt8] { Array("\(group ?? "-")|\(rank)".utf8) }
    static func group(_ bytes: [UInt8]?) -> String? {
        guard let bytes, let text = String(bytes: bytes, encoding: .utf8) else { return nil }
        let group = String(text.split(separator: "|", omittingEmptySubsequences: false)[0])
        return group == "-" ? nil : group
    }
    static func rank(_ bytes: [UInt8]?) -> Int {
        guard let bytes, let text = String(bytes: bytes, encoding: .utf8) else { return 0 }
        return Int(text.split(separator: "|", omittingEmptySubsequences: false).last ?? "") ?? 0
    }
}

/// Counts callback invocations so tests can assert what ran. Callbacks run
/// on the committing thread, and these tests commit from one thread.
final class CallCounter: @unchecked Sendable {
    var grouping = 0
    var sorting = 0
}

/// A view grouped by the object's group and sorted by rank, then key (then
/// collection). `keyed`: the same order in the sort-key form.
func rankView(counter: CallCounter = CallCounter(), tag: String = "1", persistent: Bool = true,
              collections: [String]? = nil, keyed: Bool = false) -> View {
    let grouping = ViewGrouping(flavour: .object) { row in
        counter.grouping += 1
        return Item.group(row.object)
    }
    if keyed {
        let sorting = ViewSorting(flavour: .object, key: { _, row in
            counter.sorting += 1
            var key = SortKey()
            key.append(Int64(Item.rank(row.object)))
            key.append(row.key)
            key.append(row.collection)
            return key
        })
        return View(grouping: grouping, sorting: sorting, versionTag: tag, isPersistent: persistent,
                    allowedCollections: collections)
    }
    let sorting = ViewSorting(flavour: .object) { _, a, b in
        counter.sorting += 1
        let ra = Item.rank(a.object), rb = Item.rank(b.object)
        if ra != rb { return ra < rb ? .ascending : .descending }
        if a.key != b.key { return a.key < b.key ? .ascending : .descending }
        return a.collection < b.collection ? .ascending : a.collection == b.collection ? .same : .descending
    }
    return View(grouping: grouping, sorting: sorting, versionTag: tag, isPersistent: persistent,
                allowedCollections: collections)
}

extension ViewTransaction {
    /// Every group's keys in view order.
    func dump() throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        for group in try allGroups() {
            var keys: [String] = []
            try enumerateKeys(inGroup: group) { rowKey, _, _ in keys.append(rowKey.key) }
            result[group] = keys
        }
        return result
    }
}
