/// Configuration. Every setter may be called before or after the first update;
/// after it, getters reflect the change at once (from the cached counts). A setting
/// may name a group the mappings do not (yet) have; it applies if the group appears.
///
/// Ranges and dependencies are stored in view order; the getters give them back
/// in the group's current display order, so `rangeOptions(forGroup:)` has the pin
/// that was set as long as the group's reversal has not changed since.
extension Mappings {
    // MARK: Dynamic sections

    /// Makes `group` dynamic (its section disappears while it shows no rows) or
    /// static (always shown). Overrides the all-groups setting for this group.
    public func setIsDynamicSection(_ isDynamic: Bool, forGroup group: String) {
        dynamicSectionsPerGroup[group] = isDynamic
        refreshLayout()
    }

    /// Whether `group`'s section is dynamic (per-group setting, else the all-groups one).
    public func isDynamicSection(forGroup group: String) -> Bool {
        groupIsDynamic(group)
    }

    /// Sets every group — including groups that appear later — dynamic or static,
    /// and forgets the per-group settings made so far.
    public func setIsDynamicSectionForAllGroups(_ isDynamic: Bool) {
        dynamicSectionsPerGroup.removeAll()
        dynamicSectionsForAllGroups = isDynamic
        refreshLayout()
    }

    /// The all-groups dynamic-section setting (false until set).
    public var isDynamicSectionForAllGroups: Bool { dynamicSectionsForAllGroups }

    // MARK: Ranges

    /// Shows only a window of `group` (nil removes the range). On a reversed group
    /// the options are read in display order: `.beginning` then means the end of
    /// the view.
    ///
    /// Setting options on a group that already has a range replaces it: the window
    /// is placed afresh from the given `length` and `offset`, as for a new range (as
    /// YapDatabase's `setRangeOptions:forGroup:` does). After the first update that
    /// happens at once, from the cached count, and getters reflect it; no changeset
    /// describes the move, so reload the table. Setting the options
    /// `rangeOptions(forGroup:)` returns, unchanged, leaves the window where it is;
    /// changed with `copy(withNewLength:)`, `copy(withNewOffset:)` or new
    /// `maxLength` / `minLength` / `growOptions`, it continues from there.
    /// A fixed range's window length is its `maxLength` (its length as set).
    public func setRangeOptions(_ options: RangeOptions?, forGroup group: String) {
        guard let options = options?.asSet() else { return removeRangeOptions(forGroup: group) }
        ranges[group] = reversedGroups.contains(group) ? options.withPinFlipped() : options
        flexibleStates[group] = nil
        if options.isFlexible, let count = layout?.counts[group] {
            flexibleStates[group] = ranges[group]!.initialFlexibleState(count: count)
        }
        refreshLayout()
    }

    /// The range options of `group` in the group's current display order, or nil.
    ///
    /// As YapDatabase's reference promises, `length` and `offset` are the range's
    /// **current** ones as of the last update or changeset (or configuration change
    /// since): a flexible range's length as grown and shrunk, and its offset from
    /// its pin as rows came and went between the window and the pin; a fixed range's
    /// length clipped to the group (its length as set is `maxLength`), its offset as
    /// set. On a reversed group the pin is flipped (display order), and the offset is
    /// counted from that pin. Kind, pin, `maxLength`, `minLength` and `growOptions`
    /// are as set. Before the first update — and for a group the mappings do not
    /// have at the last update — the options are returned as set.
    /// `rangePosition(forGroup:)` gives the same window as offsets from both ends.
    public func rangeOptions(forGroup group: String) -> RangeOptions? {
        guard var options = ranges[group] else { return nil }
        if let window = layout?.windows[group] {
            if options.isFlexible, let state = flexibleStates[group] {
                options = options.current(offset: state.offset, length: state.length)
            } else {
                options = options.current(offset: options.offset, length: window.length)
            }
        }
        return reversedGroups.contains(group) ? options.withPinFlipped() : options
    }

    /// Shows all of `group` again.
    public func removeRangeOptions(forGroup group: String) {
        ranges[group] = nil
        flexibleStates[group] = nil
        refreshLayout()
    }

    // MARK: Cell drawing dependencies

    /// Declares that each cell of `group` is drawn using the cell `offset` rows away
    /// (-1: the one above). Changesets then also reload a row whose neighbour at
    /// that offset changed, with exactly the `.dependency` flag when that is its
    /// only reason. 0 is ignored. On a reversed group the offset is in display order.
    public func setCellDrawingDependency(offset: Int, forGroup group: String) {
        setCellDrawingDependencyOffsets([offset], forGroup: group)
    }

    /// Like `setCellDrawingDependency(offset:forGroup:)` with several offsets;
    /// replaces the group's previous offsets (an empty set removes them).
    public func setCellDrawingDependencyOffsets(_ offsets: Set<Int>, forGroup group: String) {
        let sign = reversedGroups.contains(group) ? -1 : 1
        let stored = Set(offsets.filter { $0 != 0 }.map { $0 * sign })
        dependencyOffsets[group] = stored.isEmpty ? nil : stored
    }

    /// The dependency offsets of `group` in its current display order.
    public func cellDrawingDependencyOffsets(forGroup group: String) -> Set<Int> {
        let sign = reversedGroups.contains(group) ? -1 : 1
        return Set((dependencyOffsets[group] ?? []).map { $0 * sign })
    }

    // MARK: Reverse

    /// Shows `group` bottom-up. A range already set keeps its window and is only
    /// flipped; ranges and dependencies set afterwards are read in the reversed order.
    public func setIsReversed(_ isReversed: Bool, forGroup group: String) {
        if isReversed { reversedGroups.insert(group) } else { reversedGroups.remove(group) }
        refreshLayout()
    }

    /// Whether `group` is shown in reverse.
    public func isReversed(forGroup group: String) -> Bool { reversedGroups.contains(group) }

    // MARK: Auto-consolidation

    /// While the visible groups together show fewer than `threshold` rows, show them
    /// all as one section named `name`, in group order. A threshold of 0 (or less)
    /// disables it; so does — for as long as it lasts — a group of the mappings
    /// named `name`.
    public func setAutoConsolidateGroups(threshold: Int, name: String) {
        consolidationThreshold = max(threshold, 0)
        consolidationName = name
        refreshLayout()
    }

    /// The consolidation threshold as set (0: disabled).
    public var autoConsolidateGroupsThreshold: Int { consolidationThreshold }

    /// The consolidated section's name as set, or nil if never set.
    public var consolidatedGroupName: String? { consolidationName }
}
