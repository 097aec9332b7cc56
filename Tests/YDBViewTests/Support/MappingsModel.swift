@testable import YDBView

/// One configuration call, so a configuration can be replayed on fresh mappings
/// and interpreted independently by `MappingsModel`.
enum ConfigStep: CustomStringConvertible {
    case dynamicAll(Bool)
    case dynamic(String, Bool)
    case reversed(String, Bool)
    case range(String, RangeOptions?)
    case dependencies(String, Set<Int>)
    case consolidate(Int, String)

    func apply(to mappings: Mappings) {
        switch self {
        case .dynamicAll(let value): mappings.setIsDynamicSectionForAllGroups(value)
        case .dynamic(let group, let value): mappings.setIsDynamicSection(value, forGroup: group)
        case .reversed(let group, let value): mappings.setIsReversed(value, forGroup: group)
        case .range(let group, let options): mappings.setRangeOptions(options, forGroup: group)
        case .dependencies(let group, let offsets): mappings.setCellDrawingDependencyOffsets(offsets, forGroup: group)
        case .consolidate(let threshold, let name): mappings.setAutoConsolidateGroups(threshold: threshold, name: name)
        }
    }

    var description: String {
        switch self {
        case .dynamicAll(let v): return "dynamicAll(\(v))"
        case .dynamic(let g, let v): return "dynamic(\(g), \(v))"
        case .reversed(let g, let v): return "reversed(\(g), \(v))"
        case .range(let g, let o):
            guard let o else { return "range(\(g), nil)" }
            return "range(\(g), \(o.kind) len \(o.length) off \(o.offset) \(o.pin) max \(o.maxLength == .max ? -1 : o.maxLength) min \(o.minLength) \(o.growOptions))"
        case .dependencies(let g, let o): return "deps(\(g), \(o.sorted()))"
        case .consolidate(let t, let n): return "consolidate(\(t), \(n))"
        }
    }
}

/// A mappings configuration: groups (static or dynamic) plus the configuration calls in order.
struct MappingsConfig: CustomStringConvertible {
    var staticGroups: [String]?          // nil: dynamic groups (all view groups, ascending)
    var steps: [ConfigStep]

    func make(view: String = "view") -> Mappings {
        let mappings = staticGroups.map { Mappings(groups: $0, view: view) }
            ?? Mappings(filter: { !$0.hasPrefix("x") }, sortedBy: <, view: view)
        for step in steps { step.apply(to: mappings) }
        return mappings
    }

    var hasFlexibleRange: Bool {
        steps.contains { if case .range(_, let o?) = $0 { return o.isFlexible } else { return false } }
    }

    var description: String {
        "groups \(staticGroups.map { "\($0)" } ?? "dynamic(!x*)") steps \(steps)"
    }
}

/// An independent, deliberately plain computation of what mappings configured by
/// `config` and updated once with `contents` must show: window index lists per
/// group, visible groups, consolidation, and the resulting table.
struct MappingsModel {
    var groups: [String] = []
    var counts: [String: Int] = [:]
    var shown: [String: [Int]] = [:]          // view indexes shown, in display order
    var windowIndexes: [String: [Int]] = [:]  // view indexes shown, ascending
    /// Ranges placed past the end of their group: the offset, and whether it
    /// counts from the beginning in display order.
    var pastTheEnd: [String: (offset: Int, fromDisplayBeginning: Bool)] = [:]
    var reversed: Set<String> = []
    var visible: [String] = []
    var consolidatedName: String?
    var table = Table(groups: [], sections: [])

    init(config: MappingsConfig, contents: FakeContents) {
        groups = config.staticGroups ?? contents.groupNames.filter { !$0.hasPrefix("x") }.sorted()
        // Interpret the steps the way the reference describes, tracking reversal at each step.
        var dynamicAll = false
        var dynamicPer: [String: Bool] = [:]
        var ranges: [String: (options: RangeOptions, flippedPin: Bool)] = [:]
        var threshold = 0
        var name: String?
        for step in config.steps {
            switch step {
            case .dynamicAll(let v): dynamicAll = v; dynamicPer = [:]
            case .dynamic(let g, let v): dynamicPer[g] = v
            case .reversed(let g, let v): if v { reversed.insert(g) } else { reversed.remove(g) }
            case .range(let g, let o): ranges[g] = o.map { ($0, reversed.contains(g)) }
            case .dependencies: break
            case .consolidate(let t, let n): threshold = max(t, 0); name = n
            }
        }
        reversed = reversed.intersection(groups)
        var tableSections: [[Int64]] = []
        for group in groups {
            let n = contents.count(inGroup: group)
            counts[group] = n
            var indexes = Array(0..<n)
            if let (options, flipped) = ranges[group] {
                let fromBeginning = (options.pin == .beginning) != flipped
                indexes = Self.window(options, count: n, fromBeginning: fromBeginning)
                if options.offset > n {
                    pastTheEnd[group] = (options.offset, fromBeginning != reversed.contains(group))
                }
            }
            windowIndexes[group] = indexes
            shown[group] = reversed.contains(group) ? indexes.reversed() : indexes
            let isDynamic = dynamicPer[group] ?? dynamicAll
            if !isDynamic || !indexes.isEmpty { visible.append(group) }
        }
        let total = visible.reduce(0) { $0 + shown[$1]!.count }
        if threshold > 0, let name, !groups.contains(name), total < threshold { consolidatedName = name }
        for group in visible {
            tableSections.append(shown[group]!.map { contents.rowid(at: $0, inGroup: group)! })
        }
        if let consolidatedName {
            table = Table(groups: [consolidatedName], sections: [tableSections.flatMap { $0 }])
        } else {
            table = Table(groups: visible, sections: tableSections)
        }
    }

    /// The view indexes a range shows right after being placed, ascending: the
    /// rows `offset ..< offset + length` counted from the pin that exist. Fixed and
    /// flexible alike — a flexible range's max and min length wait for changesets.
    static func window(_ options: RangeOptions, count n: Int, fromBeginning: Bool) -> [Int] {
        // Count positions from the pin: position p is view index p (beginning) or n-1-p (end).
        func index(_ p: Int) -> Int { fromBeginning ? p : n - 1 - p }
        var positions: [Int] = []
        var p = options.offset
        while p < n && positions.count < options.length { positions.append(p); p += 1 }
        return positions.map(index).sorted()
    }
}
