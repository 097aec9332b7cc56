/// Maps the groups of one view onto the sections of a table: which groups are
/// shown, in which order, which part of each (ranges), in which direction
/// (reverse), as separate sections or one (auto-consolidation) — and turns a
/// view's commit logs into the section and row changes that animate the table
/// (`changes(for:)`).
///
/// A `Mappings` is a **single-thread object**: create, configure, update and read
/// it from one thread (typically the UI thread), like the read transaction it
/// follows. It never reads the database itself; it caches group counts and
/// window positions from the `ViewContents` it is updated with, so every getter
/// is O(1) or O(log groups).
///
/// ```swift
/// let mappings = Mappings(groups: ["wine", "liquor", "beer"], view: "order")
/// mappings.setIsDynamicSection(true, forGroup: "beer")
/// mappings.setRangeOptions(try .fixed(length: 20, offset: 0, from: .beginning), forGroup: "wine")
/// mappings.update(with: contents, snapshot: readerSnapshot)      // once, before use
/// tableView.numberOfSections = mappings.numberOfSections
/// // ... after the reader moves forward:
/// let changeset = try mappings.changes(for: commitLogs)          // also moves the mappings
/// ```
///
/// Configuration order matters exactly as in YapDatabase: a range or a cell
/// drawing dependency set on a group that is already reversed is read in the
/// reversed (display) order; reversing a group afterwards leaves its window
/// where it was and only flips it.
public final class Mappings {
    /// How the mappings find their groups.
    enum GroupSource {
        case fixed([String])
        case dynamic(DynamicGroups)
    }

    /// Dynamic groups' filter and order, given the transaction the groups
    /// are found with: nil where there is none (`update(with:snapshot:)`,
    /// `hasChanges`, `changes(for:)` without `in:`).
    struct DynamicGroups {
        let filter: (ReadTransaction?, String) throws -> Bool
        let areInIncreasingOrder: (ReadTransaction?, String, String) throws -> Bool
        /// They read the transaction: their answers hold for its snapshot
        /// only, so an older snapshot's groups are not computed again.
        let readsTransaction: Bool

        /// Whether `group` may show, without a transaction: a filter that
        /// needs one (or fails) says it may.
        func mayShow(_ group: String) -> Bool { (try? filter(nil, group)) ?? true }
    }

    /// The registered name of the view these mappings read.
    public let viewName: String
    let groupSource: GroupSource
    /// Whether `update(with: transaction)` accepts a view that is not
    /// registered at the transaction's snapshot, showing it as empty
    /// (mappings made before their view is registered: its registration's
    /// changeset then inserts every row). False: such an update throws
    /// `.notFound`, so a misspelt view name is an error, not an empty table.
    public var allowsUnregisteredView = false

    // Configuration, as set (ranges and dependencies stored in view order).
    var dynamicSectionsForAllGroups = false
    var dynamicSectionsPerGroup: NameMap<Bool> = [:]
    var ranges: NameMap<RangeOptions> = [:]
    var reversedGroups: NameSet = []
    var dependencyOffsets: NameMap<Set<Int>> = [:]
    var consolidationThreshold = 0
    var consolidationName: String?

    // State as of the last update.
    var flexibleStates: NameMap<FlexibleState> = [:]
    var layout: MappingsLayout?
    var lastSnapshot: UInt64?
    /// The view as of `lastSnapshot`: commits that did not touch the view
    /// carry no log for it, and this stands in for its unchanged state.
    var lastContents: (any ViewContents)?

    /// Mappings over a fixed, ordered list of groups: section `i` is `groups[i]`
    /// (minus dynamic sections that show no rows).
    public init(groups: [String], view viewName: String) {
        self.viewName = viewName
        var seen = NameSet()
        self.groupSource = .fixed(groups.filter { seen.insert($0).inserted })
    }

    /// Mappings whose groups are discovered from the view at every update: the
    /// view's groups that pass `filter`, ordered by `areInIncreasingOrder`.
    ///
    /// ```swift
    /// let mappings = Mappings(filter: { $0.hasPrefix("dept:") }, sortedBy: <, view: "inventory")
    /// ```
    public init(filter: @escaping (String) -> Bool,
                sortedBy areInIncreasingOrder: @escaping (String, String) -> Bool,
                view viewName: String) {
        self.viewName = viewName
        self.groupSource = .dynamic(DynamicGroups(filter: { _, group in filter(group) },
                                                  areInIncreasingOrder: { _, a, b in areInIncreasingOrder(a, b) },
                                                  readsTransaction: false))
    }

    /// Dynamic groups whose filter and order also read the transaction the
    /// mappings are updated with (YapDatabase's group filter and sort
    /// blocks): a group shown only while the row it names exists, say.
    ///
    /// ```swift
    /// let mappings = Mappings(filter: { transaction, group in try transaction.exists(key: group, inCollection: "authors") },
    ///                         sortedBy: { _, a, b in a < b }, view: "byAuthor")
    /// ```
    ///
    /// Each gets a read-only handle of that transaction, valid only during
    /// the call. They run where a transaction is given: `update(with:)` and
    /// `changes(for:in:)` (`changes(for:)` without one throws `.misuse`).
    /// Without one, `hasChanges` treats every group as shown and
    /// `update(with:snapshot:)` shows every group in byte order. A row they
    /// read is not a dependency: the groups are found again at each update
    /// or changeset, not when that row changes.
    public init(filter: @escaping (ReadTransaction, String) throws -> Bool,
                sortedBy areInIncreasingOrder: @escaping (ReadTransaction, String, String) throws -> Bool,
                view viewName: String) {
        func needed() -> YDBError {
            YDBError(.misuse, "these mappings' group filter and sort read the transaction: give one (update(with:), changes(for:in:))")
        }
        self.viewName = viewName
        self.groupSource = .dynamic(DynamicGroups(
            filter: { running, group in
                guard let running else { throw needed() }
                return try CallbackTransaction.lend(running) { try filter($0, group) }
            },
            areInIncreasingOrder: { running, a, b in
                guard let running else { throw needed() }
                return try CallbackTransaction.lend(running) { try areInIncreasingOrder($0, a, b) }
            },
            readsTransaction: true))
    }

    /// Dynamic groups for a binding's callbacks, which take the transaction
    /// when there is one (a read-only handle of it) and nil otherwise.
    package init(filterReading filter: @escaping (ReadTransaction?, String) throws -> Bool,
                 sortedBy areInIncreasingOrder: @escaping (ReadTransaction?, String, String) throws -> Bool,
                 view viewName: String) {
        func lend<T>(_ running: ReadTransaction?, _ body: (ReadTransaction?) throws -> T) rethrows -> T {
            guard let running else { return try body(nil) }
            return try CallbackTransaction.lend(running) { try body($0) }
        }
        self.viewName = viewName
        self.groupSource = .dynamic(DynamicGroups(
            filter: { running, group in try lend(running) { try filter($0, group) } },
            areInIncreasingOrder: { running, a, b in try lend(running) { try areInIncreasingOrder($0, a, b) } },
            readsTransaction: true))
    }

    /// True when the group list is recomputed from the view at every update.
    public var hasDynamicGroups: Bool {
        if case .dynamic = groupSource { return true }
        return false
    }

    /// The mappings' groups, visible or not: the static list, or for dynamic groups
    /// those found at the last update (empty before the first update).
    public var allGroups: [String] {
        switch groupSource {
        case .fixed(let groups): return groups
        case .dynamic: return layout?.allGroups ?? []
        }
    }

    /// Caches the group list (dynamic groups), counts and range windows of `contents`
    /// and records `snapshot`. Call once before using the mappings, and again
    /// whenever the reader moves to another snapshot without asking for a changeset.
    ///
    /// Fixed ranges are recomputed from their options (a window cut short by a
    /// small group grows back to its length). A flexible range cannot follow its rows
    /// without the commit logs, so it keeps its offset from its pin and its length,
    /// cut to the rows the group has from that offset (as YapDatabase's
    /// `updateWithTransaction:` does; max/min length are applied by changesets);
    /// a flexible range on a group it has never been placed on starts at its options.
    ///
    /// Dynamic groups whose filter and sort read the transaction need
    /// `update(with: transaction)`: here they get none (see
    /// `init(filter:sortedBy:view:)`).
    public func update(with contents: any ViewContents, snapshot: UInt64) {
        let groups = (try? groups(in: contents, reading: nil)) ?? contents.groupNames
        update(with: contents, snapshot: snapshot, groups: groups)
    }

    /// `update(with:snapshot:)` with the groups already found in `contents`.
    func update(with contents: any ViewContents, snapshot: UInt64, groups: [String]) {
        var counts: NameMap<Int> = [:]
        for group in groups { counts[group] = contents.count(inGroup: group) }
        for (group, options) in ranges where options.isFlexible {
            let count = counts[group] ?? 0    // a group the view no longer has has no rows
            if let state = flexibleStates[group] {
                flexibleStates[group] = state.clipped(count: count)
            } else {
                flexibleStates[group] = options.initialFlexibleState(count: count)
            }
        }
        layout = makeLayout(allGroups: groups, counts: counts)
        lastSnapshot = snapshot
        lastContents = contents
    }

    /// The mappings' groups as found in `contents`, which `transaction` (if
    /// any) reads: dynamic groups' callbacks get it.
    func groups(in contents: any ViewContents, reading transaction: ReadTransaction?) throws -> [String] {
        switch groupSource {
        case .fixed(let groups):
            return groups
        case .dynamic(let source):
            return try contents.groupNames.filter { try source.filter(transaction, $0) }
                .sorted { try source.areInIncreasingOrder(transaction, $0, $1) }
        }
    }

    /// Whether the groups found in `before` are `cached` (a check that
    /// changes were not asked for from the wrong snapshot). Groups found by
    /// reading a transaction cannot be found again at an older snapshot:
    /// they are taken as cached.
    func groupsMatch(in before: any ViewContents, cached: [String]) throws -> Bool {
        if case .dynamic(let source) = groupSource, source.readsTransaction { return true }
        return try groups(in: before, reading: nil) == cached
    }

    func groupIsDynamic(_ group: String) -> Bool {
        dynamicSectionsPerGroup[group] ?? dynamicSectionsForAllGroups
    }

    /// The window each group shows for the given counts, from the range options and
    /// the current flexible states.
    func window(forGroup group: String, count: Int, flexibleStates: NameMap<FlexibleState>) -> GroupWindow {
        guard let options = ranges[group] else { return GroupWindow(lower: 0, upper: count) }
        if options.isFixed { return options.fixedWindow(count: count) }
        let state = flexibleStates[group] ?? options.initialFlexibleState(count: count)
        return options.window(of: state, count: count)
    }

    func makeLayout(allGroups: [String], counts: NameMap<Int>,
                    flexibleStates: NameMap<FlexibleState>? = nil) -> MappingsLayout {
        let states = flexibleStates ?? self.flexibleStates
        var windows: NameMap<GroupWindow> = [:]
        for group in allGroups {
            windows[group] = window(forGroup: group, count: counts[group] ?? 0, flexibleStates: states)
        }
        return MappingsLayout(allGroups: allGroups, counts: counts, windows: windows,
                              reversed: reversedGroups.intersection(allGroups),
                              isDynamic: groupIsDynamic,
                              consolidationThreshold: consolidationThreshold,
                              consolidatedGroupName: consolidationName)
    }

    /// Recomputes the layout from the cached counts after a configuration change,
    /// so getters reflect the new configuration at once.
    func refreshLayout() {
        guard let current = layout else { return }
        layout = makeLayout(allGroups: current.allGroups, counts: current.counts)
    }
}
