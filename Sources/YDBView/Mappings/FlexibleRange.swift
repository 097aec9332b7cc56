/// The rows of one group a mappings shows, in view order: indexes `[lower, upper)`.
struct GroupWindow: Equatable {
    var lower: Int
    var upper: Int
    var length: Int { upper - lower }

    func contains(_ index: Int) -> Bool { index >= lower && index < upper }

    /// The part of the window inside a group of `count` rows (empty at the
    /// group's end when the window lies past it).
    func clipped(to count: Int) -> GroupWindow {
        let lower = min(max(self.lower, 0), count)
        return GroupWindow(lower: lower, upper: min(max(upper, lower), count))
    }
}

/// The live state of a flexible range: its current offset from its (view-order)
/// pin and its current length. Fixed ranges have no state — their window is a
/// function of the options and the group's count.
struct FlexibleState: Equatable {
    var offset: Int
    var length: Int
}

extension RangeOptions {
    /// The window a fixed range shows in a group of `count` rows: rows
    /// `[offset, offset + length)` counted from the pin, clipped to the group.
    /// Recomputed from the options every time, so a window cut short by a
    /// shrinking group grows back to `length` when the group grows again.
    func fixedWindow(count: Int) -> GroupWindow {
        switch pin {
        case .beginning:
            return GroupWindow(lower: min(offset, count), upper: min(offset.addingClamped(length), count))
        case .end:
            let upper = max(count - offset, 0)
            return GroupWindow(lower: max(upper - length, 0), upper: upper)
        }
    }

    /// Where a flexible range first lands in a group of `count` rows, as
    /// YapDatabase places it: at its offset from the pin, with its length cut to
    /// the rows there are (none when the offset lies past the end of the group).
    /// `maxLength` and `minLength` are not applied yet: they are applied by
    /// changesets ("the changeset processing will automatically adjust").
    func initialFlexibleState(count: Int) -> FlexibleState {
        FlexibleState(offset: offset, length: length).clipped(count: count)
    }

    /// The window of a flexible range in its current state, clipped to the group.
    func window(of state: FlexibleState, count: Int) -> GroupWindow {
        unclippedWindow(of: state, count: count).clipped(to: count)
    }

    /// The window of a flexible range's state in view indexes, not clipped: for
    /// a range pinned to the beginning whose offset lies past the end of the
    /// group, a window past the end (it then follows the rows before it, as
    /// YapDatabase's does); for one pinned to the end, the empty window at 0.
    func unclippedWindow(of state: FlexibleState, count: Int) -> GroupWindow {
        switch pin {
        case .beginning:
            return GroupWindow(lower: state.offset, upper: state.offset.addingClamped(state.length))
        case .end:
            guard state.offset < count else { return GroupWindow(lower: 0, upper: 0) }
            let upper = count - state.offset
            return GroupWindow(lower: max(upper - state.length, 0), upper: upper)
        }
    }

    /// The state that shows `window` (unclipped view indexes) in a group of `count` rows.
    func state(showing window: GroupWindow, count: Int) -> FlexibleState {
        FlexibleState(offset: pin == .beginning ? window.lower : max(count - window.upper, 0),
                      length: window.length)
    }

    /// Applies `maxLength` then `minLength` to a flexible range's state at the end
    /// of a changeset, as YapDatabase does.
    ///
    /// Max trims rows from the side away from the pin; min (only when the window
    /// shows fewer rows than the group has) pulls rows back in, first from the pin
    /// side, then from the other side, as far as the group allows. A window past
    /// the end of the group is first brought back to it, so that only rows that
    /// exist are pulled in.
    func boundedState(_ state: FlexibleState, count: Int) -> FlexibleState {
        var window = unclippedWindow(of: state, count: count)
        if window.length > maxLength {
            switch pin {
            case .beginning: window.upper = window.lower + maxLength
            case .end: window.lower = window.upper - maxLength
            }
        } else if window.length < minLength && window.length < count {
            window = window.clipped(to: count)
            var missing = minLength - window.length
            let fromBelow = { (wanted: Int) -> Int in min(wanted, window.lower) }
            let fromAbove = { (wanted: Int) -> Int in min(wanted, count - window.upper) }
            switch pin {
            case .beginning:
                let pinSide = fromBelow(missing); window.lower -= pinSide; missing -= pinSide
                window.upper += fromAbove(missing)
            case .end:
                let pinSide = fromAbove(missing); window.upper += pinSide; missing -= pinSide
                window.lower -= fromBelow(missing)
            }
        }
        return self.state(showing: window, count: count)
    }
}

extension FlexibleState {
    /// The state with its length cut to the rows the group has from its offset
    /// on (what YapDatabase's `updateWithTransaction:` does to a range).
    func clipped(count: Int) -> FlexibleState {
        FlexibleState(offset: offset, length: min(length, max(count - offset, 0)))
    }
}

/// Follows a flexible range's window through one changeset's view operations,
/// in the order they happened (docs/behaviour.md, "Flexible range").
///
/// Indexes are view indexes of the group at the moment of each operation, so the
/// tracker needs nothing but the operations themselves (and the group's count,
/// which a reset empties).
struct FlexibleWindowTracker {
    private(set) var window: GroupWindow
    private(set) var count: Int
    let pin: RangePin
    let grow: RangeGrowOptions
    /// Set once the window has been empty during this changeset: from then on
    /// both of its edges accept rows inserted exactly at them — with no row
    /// shown there is no telling the pin side from the other (YapDatabase's rule:
    /// a range over an empty group takes every row the changeset inserts, up to
    /// its maximum length).
    private var wasEmpty: Bool

    init(window: GroupWindow, count: Int, options: RangeOptions) {
        self.window = window
        self.count = count
        self.pin = options.pin
        self.grow = options.growOptions
        wasEmpty = window.length == 0
    }

    /// A row left the group at `index`: before the window it shifts the window;
    /// inside it shrinks it; after it changes nothing.
    mutating func delete(at index: Int) {
        if index < window.lower { window.lower -= 1 }
        if index < window.upper { window.upper -= 1 }
        count -= 1
        wasEmpty = wasEmpty || window.length == 0
    }

    /// A row entered the group at `index`. Strictly inside, it joins the window;
    /// before it, it shifts it; exactly at an edge it joins only if that edge may
    /// grow.
    mutating func insert(at index: Int) {
        if mayGrow(atLowerEdge: true) ? index < window.lower : index <= window.lower { window.lower += 1 }
        if mayGrow(atLowerEdge: false) ? index <= window.upper : index < window.upper { window.upper += 1 }
        count += 1
        wasEmpty = wasEmpty || window.length == 0
    }

    /// Every row left the view: as if each row of the group were deleted.
    mutating func reset() {
        window.lower -= min(max(window.lower, 0), count)
        window.upper -= min(max(window.upper, 0), count)
        count = 0
        wasEmpty = true
    }

    private func mayGrow(atLowerEdge: Bool) -> Bool {
        if wasEmpty { return true }
        let isPinSide = atLowerEdge == (pin == .beginning)
        switch grow {
        case .bothSides: return true
        case .pinSide: return isPinSide
        case .nonPinSide: return !isPinSide
        }
    }
}

extension Int {
    /// `self + other` without overflowing past `Int.max` (lengths may be `Int.max`).
    func addingClamped(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
