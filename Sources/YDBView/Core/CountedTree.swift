/// A persistent B+tree of unique, ordered keys with subtree counts.
///
/// - Ordered by `Key`; every node knows how many elements lie below it, so
///   "element at index" and "index of key" are O(log n).
/// - A value type with structural sharing: copying a tree is O(1), and a
///   mutation copies only the nodes on its path that another copy still
///   shares (copy-on-write per node). This is what lets a commit publish a new
///   view state while readers keep the old one.
///
/// Views use it twice: a group is `CountedTree<Int64 label, Int64 rowid>`
/// (labels encode the sorted order, see `OrderLabels`), and the row index is
/// `CountedTree<Int64 rowid, RowPlace>`.
struct CountedTree<Key: Comparable, Value> {
    /// A node's fields skip Swift's run-time exclusivity checks: every
    /// lookup touches several of them on each level, the checks are a
    /// visible part of a one-row commit's view work, and no access here
    /// can overlap another (a node is mutated only by the tree that owns it
    /// uniquely, inside one method at a time).
    final class Node {
        /// Leaf: the elements' keys. Internal: the largest key below each child.
        @exclusivity(unchecked) var keys: [Key]
        /// Leaf only.
        @exclusivity(unchecked) var values: [Value]
        /// Internal only (never empty for an internal node).
        @exclusivity(unchecked) var children: [Node]
        /// Internal only: element count below each child.
        @exclusivity(unchecked) var counts: [Int]
        @exclusivity(unchecked) var total: Int
        /// The value of the last element below, in a tree whose values are
        /// plain data (`PlainTreeValue`; nil in others): `firstIndex` reads
        /// it in the child it probes instead of walking down to that
        /// child's last leaf, a chain of cache misses per probe.
        @exclusivity(unchecked) var last: Value?

        /// `tracking`: the tree keeps last values (`CountedTree.tracksLast`).
        init(keys: [Key], values: [Value], tracking: Bool) {
            self.keys = keys
            self.values = values
            self.children = []
            self.counts = []
            self.total = keys.count
            if tracking { last = values.last }
        }

        init(children: [Node], tracking: Bool) {
            self.keys = children.map { $0.keys.last! }
            self.values = []
            self.children = children
            self.counts = children.map(\.total)
            self.total = counts.reduce(0, +)
            if tracking { last = children.last?.last }
        }

        /// A copy is made to be changed at once (a path copy), so the
        /// children and non-plain values (sort keys) are copied here by a
        /// loop the compiler specializes: left to the array's copy-on-write,
        /// each element goes through the runtime's generic copy and a value
        /// witness call, on every path copy of every commit. The
        /// other arrays (labels, counts, row ids; an outer tree's group
        /// names, rarely written) stay shared until written.
        private init(copying other: Node) {
            keys = other.keys
            values = _isPOD(Value.self) ? other.values : Node.copied(other.values)
            children = Node.copied(other.children)
            counts = other.counts
            total = other.total
            last = other.last
        }

        /// A copy of `elements` with room for one more (a split's insert).
        private static func copied<Element>(_ elements: [Element]) -> [Element] {
            guard !elements.isEmpty else { return elements }
            return [Element](unsafeUninitializedCapacity: elements.count + 1) { buffer, count in
                elements.withUnsafeBufferPointer { source in
                    for index in source.indices { (buffer.baseAddress! + index).initialize(to: source[index]) }
                }
                count = elements.count
            }
        }

        /// Sets `last` again after the node's elements (or its last
        /// child's) changed; only in a tree that keeps last values.
        func refreshLast() {
            last = isLeaf ? values.last : children.last?.last
        }

        /// Internal: keeps `keys[slot]` the largest key below child `slot`
        /// after that child changed. Written only when it changed: a path
        /// copy shares the keys array until it is written, and a change
        /// inside a child (not at its end) leaves its largest key as it was.
        func setLargestKey(of slot: Int) {
            let largest = children[slot].keys.last!
            if keys[slot] != largest { keys[slot] = largest }
        }

        var isLeaf: Bool { children.isEmpty }
        func copy() -> Node { Node(copying: self) }

        /// First slot whose key is >= `key` (a leaf's insertion point, an
        /// internal node's child to descend into; clamped to the last child).
        func slot(for key: Key) -> Int {
            var low = 0, high = keys.count
            while low < high {
                let mid = (low + high) / 2
                if keys[mid] < key { low = mid + 1 } else { high = mid }
            }
            return isLeaf ? low : Swift.min(low, keys.count - 1)
        }
    }

    private(set) var root: Node?
    /// Most entries a node holds before it splits. Tiny capacities in tests
    /// exercise splits and merges with few elements.
    let capacity: Int

    /// Whether nodes keep their last value (`Node.last`). Only plain
    /// values: a kept copy of a nested tree would share that tree's nodes,
    /// and every change to it would then copy them. Stored: the check is a
    /// dynamic cast, too slow to make per node changed.
    let tracksLast: Bool

    init(capacity: Int = Tuning.treeCapacity) {
        precondition(capacity >= 4)
        self.capacity = capacity
        tracksLast = Value.self is PlainTreeValue.Type
    }

    /// Builds a tree from elements already sorted by strictly increasing key, in O(n).
    init<S: Sequence>(sorted elements: S, capacity: Int = Tuning.treeCapacity) where S.Element == (Key, Value) {
        self.init(capacity: capacity)
        let fill = Swift.max(2, capacity * 3 / 4)
        var level: [Node] = []
        var keys: [Key] = [], values: [Value] = []
        keys.reserveCapacity(fill)
        values.reserveCapacity(fill)
        for (key, value) in elements {
            keys.append(key)
            values.append(value)
            if keys.count == fill {
                level.append(Node(keys: keys, values: values, tracking: tracksLast))
                keys.removeAll(keepingCapacity: true)
                values.removeAll(keepingCapacity: true)
            }
        }
        if !keys.isEmpty { level.append(Node(keys: keys, values: values, tracking: tracksLast)) }
        while level.count > 1 {
            level = stride(from: 0, to: level.count, by: fill).map {
                Node(children: Array(level[$0 ..< Swift.min($0 + fill, level.count)]), tracking: tracksLast)
            }
        }
        root = level.first
    }

    var count: Int { root?.total ?? 0 }
    var isEmpty: Bool { count == 0 }

    // MARK: Lookups

    /// The leaf holding `key` and its slot there; nil when absent.
    private func leafSlot(of key: Key) -> (leaf: Node, slot: Int)? {
        guard var node = root else { return nil }
        while !node.isLeaf { node = node.children[node.slot(for: key)] }
        let slot = node.slot(for: key)
        return slot < node.keys.count && node.keys[slot] == key ? (node, slot) : nil
    }

    func value(for key: Key) -> Value? {
        leafSlot(of: key).map { $0.leaf.values[$0.slot] }
    }

    /// Whether `key` is present; copies no value (a view's instance, a
    /// group's tree), which `value(for:) != nil` would.
    func contains(_ key: Key) -> Bool { leafSlot(of: key) != nil }

    func index(of key: Key) -> Int? {
        guard var node = root else { return nil }
        var offset = 0
        while !node.isLeaf {
            let slot = node.slot(for: key)
            for child in 0 ..< slot { offset += node.counts[child] }
            node = node.children[slot]
        }
        let slot = node.slot(for: key)
        return slot < node.keys.count && node.keys[slot] == key ? offset + slot : nil
    }

    /// Number of elements with a key smaller than `key`.
    func rank(of key: Key) -> Int {
        guard var node = root else { return 0 }
        var offset = 0
        while !node.isLeaf {
            let slot = node.slot(for: key)
            for child in 0 ..< slot { offset += node.counts[child] }
            node = node.children[slot]
        }
        return offset + node.slot(for: key)
    }

    func element(at index: Int) -> (key: Key, value: Value)? {
        guard index >= 0, index < count, var node = root else { return nil }
        var remaining = index
        while !node.isLeaf {
            var slot = 0
            while remaining >= node.counts[slot] {
                remaining -= node.counts[slot]
                slot += 1
            }
            node = node.children[slot]
        }
        return (node.keys[remaining], node.values[remaining])
    }

    /// The index of the first element for which `isAfter` is true, when it
    /// is false for a prefix of the elements and true for the rest (count
    /// when it is never true): a binary search in one descent. On each
    /// level it bisects the node's children by their last elements, so it
    /// makes about log2(count) calls and walks no counts but those it skips.
    func firstIndex(where isAfter: (Value) throws -> Bool) rethrows -> Int {
        guard var node = root else { return 0 }
        var offset = 0
        while !node.isLeaf {
            // The last child needs no test: whatever is left is in it.
            var low = 0, high = node.children.count - 1
            while low < high {
                let mid = (low + high) / 2
                let child = node.children[mid]
                if try isAfter(child.last ?? Self.lastValue(below: child)) { high = mid } else { low = mid + 1 }
            }
            for child in 0 ..< low { offset += node.counts[child] }
            node = node.children[low]
        }
        var low = 0, high = node.values.count
        while low < high {
            let mid = (low + high) / 2
            if try isAfter(node.values[mid]) { high = mid } else { low = mid + 1 }
        }
        return offset + low
    }

    private static func lastValue(below node: Node) -> Value {
        var node = node
        while !node.isLeaf { node = node.children[node.children.count - 1] }
        return node.values[node.values.count - 1]
    }

    var first: (key: Key, value: Value)? { element(at: 0) }
    var last: (key: Key, value: Value)? { element(at: count - 1) }

    /// Visits the elements with index in `range` (clamped), forwards or
    /// backwards, until `body` returns false. Returns false when stopped.
    @discardableResult
    func forEach(in range: Range<Int>? = nil, reverse: Bool = false,
                 _ body: (Key, Value) throws -> Bool) rethrows -> Bool {
        guard let root else { return true }
        let lower = Swift.max(0, range?.lowerBound ?? 0)
        let upper = Swift.min(count, range?.upperBound ?? count)
        guard lower < upper else { return true }
        return try Self.visit(root, base: 0, lower ..< upper, reverse, body)
    }

    /// Visits every key in order, copying no value: listing a registry's
    /// view names copied each view's whole state along (`forEach`).
    func forEachKey(_ body: (Key) -> Void) {
        func visit(_ node: Node) {
            if node.isLeaf {
                for key in node.keys { body(key) }
            } else {
                for child in node.children { visit(child) }
            }
        }
        if let root { visit(root) }
    }

    /// Allocates nothing: it runs for every read of a range of rows.
    private static func visit(_ node: Node, base: Int, _ range: Range<Int>, _ reverse: Bool,
                              _ body: (Key, Value) throws -> Bool) rethrows -> Bool {
        if node.isLeaf {
            let local = Swift.max(0, range.lowerBound - base) ..< Swift.min(node.keys.count, range.upperBound - base)
            guard !local.isEmpty else { return true }
            if reverse {
                for slot in local.reversed() where try !body(node.keys[slot], node.values[slot]) { return false }
            } else {
                for slot in local where try !body(node.keys[slot], node.values[slot]) { return false }
            }
            return true
        }
        // Each child covers the elements from its start (`base` plus the
        // counts before it) on; only those overlapping `range` are visited.
        if reverse {
            var start = base + node.total
            for child in node.children.indices.reversed() {
                start -= node.counts[child]
                guard start < range.upperBound else { continue }
                guard start + node.counts[child] > range.lowerBound else { break }
                if try !visit(node.children[child], base: start, range, reverse, body) { return false }
            }
        } else {
            var start = base
            for child in node.children.indices {
                guard start < range.upperBound else { break }
                if start + node.counts[child] > range.lowerBound,
                   try !visit(node.children[child], base: start, range, reverse, body) { return false }
                start += node.counts[child]
            }
        }
        return true
    }

    // MARK: Mutations

    /// Inserts a new element; the key must not be present yet.
    mutating func insert(_ key: Key, _ value: Value) {
        guard root != nil else {
            root = Node(keys: [key], values: [value], tracking: tracksLast)
            return
        }
        if !isKnownUniquelyReferenced(&root!) { root = root!.copy() }
        if let right = insert(key, value, into: root!) {
            root = Node(children: [root!, right], tracking: tracksLast)
        }
    }

    /// Returns the new right sibling when `node` had to split.
    private func insert(_ key: Key, _ value: Value, into node: Node) -> Node? {
        node.total += 1
        if node.isLeaf {
            let slot = node.slot(for: key)
            node.keys.insert(key, at: slot)
            node.values.insert(value, at: slot)
            if tracksLast, slot == node.values.count - 1 { node.refreshLast() }
        } else {
            let slot = node.slot(for: key)
            if !isKnownUniquelyReferenced(&node.children[slot]) {
                node.children[slot] = node.children[slot].copy()
            }
            let child = node.children[slot]
            if let right = insert(key, value, into: child) {
                node.children.insert(right, at: slot + 1)
                node.counts.insert(right.total, at: slot + 1)
                node.keys.insert(right.keys.last!, at: slot + 1)
            }
            node.counts[slot] = child.total
            node.setLargestKey(of: slot)
            if tracksLast { node.refreshLast() }
        }
        return node.keys.count > capacity ? split(node) : nil
    }

    private func split(_ node: Node) -> Node {
        RarePaths.count(\.splits)
        let half = node.keys.count / 2
        let right: Node
        if node.isLeaf {
            right = Node(keys: Array(node.keys[half...]), values: Array(node.values[half...]), tracking: tracksLast)
            node.keys.removeSubrange(half...)
            node.values.removeSubrange(half...)
            node.total = node.keys.count
        } else {
            right = Node(children: Array(node.children[half...]), tracking: tracksLast)
            node.children.removeSubrange(half...)
            node.counts.removeSubrange(half...)
            node.keys.removeSubrange(half...)
            node.total = node.counts.reduce(0, +)
        }
        if tracksLast { node.refreshLast() }
        return right
    }

    /// Removes the element with `key`, returning its value (nil when absent).
    @discardableResult
    mutating func remove(_ key: Key) -> Value? {
        guard contains(key) else { return nil }
        if !isKnownUniquelyReferenced(&root!) { root = root!.copy() }
        let removed = remove(key, from: root!)
        if root!.total == 0 {
            root = nil
        } else {
            while !root!.isLeaf && root!.children.count == 1 { root = root!.children[0] }
        }
        return removed
    }

    /// The key is known to be present below `node`.
    private func remove(_ key: Key, from node: Node) -> Value {
        node.total -= 1
        let slot = node.slot(for: key)
        if node.isLeaf {
            node.keys.remove(at: slot)
            let removed = node.values.remove(at: slot)
            if tracksLast, slot == node.values.count { node.refreshLast() }
            return removed
        }
        if !isKnownUniquelyReferenced(&node.children[slot]) {
            node.children[slot] = node.children[slot].copy()
        }
        let child = node.children[slot]
        let removed = remove(key, from: child)
        if child.total == 0 {
            node.children.remove(at: slot)
            node.counts.remove(at: slot)
            node.keys.remove(at: slot)
        } else {
            node.counts[slot] = child.total
            node.setLargestKey(of: slot)
            mergeIfSparse(node, at: slot)
        }
        if tracksLast { node.refreshLast() }
        return removed
    }

    /// Keeps nodes from thinning out after many removals: a child with fewer
    /// than a quarter of the capacity is merged into a neighbour when both fit.
    private func mergeIfSparse(_ node: Node, at slot: Int) {
        guard node.children[slot].keys.count < capacity / 4, node.children.count > 1 else { return }
        let left = slot > 0 ? slot - 1 : slot
        let right = left + 1
        guard node.children[left].keys.count + node.children[right].keys.count <= capacity else { return }
        RarePaths.count(\.merges)
        if !isKnownUniquelyReferenced(&node.children[left]) {
            node.children[left] = node.children[left].copy()
        }
        let into = node.children[left], from = node.children[right]
        into.keys += from.keys
        into.values += from.values
        into.children += from.children
        into.counts += from.counts
        into.total += from.total
        node.children.remove(at: right)
        node.counts.remove(at: right)
        node.keys.remove(at: right)
        node.counts[left] = into.total
        node.keys[left] = into.keys.last!
        if tracksLast { into.refreshLast() }
    }

    /// Replaces the value stored under an existing key (no-op when absent).
    mutating func updateValue(_ value: Value, for key: Key) {
        modifyValue(for: key) { $0 = value }
    }

    /// Runs `body` on the value stored under `key` in place (nil when
    /// absent, and `body` is not run). Copies only the nodes on the path
    /// that another copy of the tree still shares, so a value that is itself
    /// a tree (a view's groups) is mutated without removing and reinserting it.
    @discardableResult
    mutating func modifyValue<R>(for key: Key, _ body: (inout Value) throws -> R) rethrows -> R? {
        guard contains(key) else { return nil }
        if !isKnownUniquelyReferenced(&root!) { root = root!.copy() }
        var node = root!
        while !node.isLeaf {
            let slot = node.slot(for: key)
            if !isKnownUniquelyReferenced(&node.children[slot]) {
                node.children[slot] = node.children[slot].copy()
            }
            node = node.children[slot]
        }
        let slot = node.slot(for: key)
        let result = try body(&node.values[slot])
        if tracksLast, slot == node.values.count - 1 { Self.refreshLasts(along: key, from: root!) }
        return result
    }

    /// A leaf's last value changed: so did the kept last value of every
    /// node on the path to it (bottom up), in the rare case it ends them.
    private static func refreshLasts(along key: Key, from node: Node) {
        if !node.isLeaf { refreshLasts(along: key, from: node.children[node.slot(for: key)]) }
        node.refreshLast()
    }
}

extension CountedTree {
    /// Checks every structural invariant; used by tests.
    func checkInvariants() -> String? {
        guard let root else { return nil }
        var previous: Key?
        func check(_ node: Node, depth: Int, leafDepth: inout Int?) -> String? {
            if node.isLeaf {
                if let expected = leafDepth, expected != depth { return "leaves at different depths" }
                leafDepth = depth
                if node.keys.count != node.values.count { return "leaf keys/values mismatch" }
                if node.keys.count > capacity { return "leaf over capacity" }
                if node.total != node.keys.count { return "leaf total wrong" }
                if node.keys.isEmpty { return "empty leaf" }
                for key in node.keys {
                    if let previous, !(previous < key) { return "keys out of order" }
                    previous = key
                }
                return nil
            }
            if node.children.count != node.counts.count || node.children.count != node.keys.count {
                return "internal arrays mismatch"
            }
            if node.keys.count > capacity { return "node over capacity" }
            for (index, child) in node.children.enumerated() {
                if let problem = check(child, depth: depth + 1, leafDepth: &leafDepth) { return problem }
                if node.counts[index] != child.total { return "count wrong" }
                if node.keys[index] != child.keys.last! { return "separator wrong" }
            }
            if node.total != node.counts.reduce(0, +) { return "total wrong" }
            return nil
        }
        var leafDepth: Int?
        return check(root, depth: 0, leafDepth: &leafDepth)
    }
}

/// Values a `CountedTree` may keep copies of in its nodes (`Node.last`):
/// plain data, not trees of their own.
protocol PlainTreeValue {}

extension Int: PlainTreeValue {}
extension Int64: PlainTreeValue {}

extension CountedTree where Value: Equatable {
    /// Whether every node's kept last value is the last value below it
    /// (nil when there is none, or the tree keeps none); used by tests.
    func lastValuesViolation() -> String? {
        guard tracksLast, let root else { return nil }
        func check(_ node: Node) -> String? {
            let expected = node.isLeaf ? node.values.last : Self.lastValue(below: node)
            if node.last != expected { return "a node keeps a stale last value" }
            for child in node.children { if let problem = check(child) { return problem } }
            return nil
        }
        return check(root)
    }
}
