/// The rows of one group a mappings shows, in view order: indexes `[lower, upper)`.
struct GroupWindow: Equatable {
    var lower: Int
    var upper: Int
    var length: Int { upper - lower }

    func contains(_ index: Int) -> Bool { index >= lower && index < upper }
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

    /// Where a flexible range first lands in a group of `count` rows: like a fixed
    /// range, except that an offset past the end of the group is pulled back to the
    /// group's end (an empty window at the edge, which then grows on both sides),
    /// then `maxLength`/`minLength` are applied.
    func initialFlexibleState(count: Int) -> FlexibleState {
        let offset = min(self.offset, count)
        let length = min(self.length, count - offset)
        return flexibleState(for: window(of: FlexibleState(offset: offset, length: length), count: count),
                             count: count)
    }

    /// The window of a flexible range in its current state, clipped to the group.
    func window(of state: FlexibleState, count: Int) -> GroupWindow {
        switch pin {
        case .beginning:
            let lower = min(state.offset, count)
            return GroupWindow(lower: lower, upper: min(lower + state.length, count))
        case .end:
            let upper = max(count - state.offset, 0)
            return GroupWindow(lower: max(upper - state.length, 0), upper: upper)
        }
    }

    /// Applies `maxLength` then `minLength` to a flexible window and returns the
    /// state (offset from the pin, length) that shows it.
    ///
    /// Max trims rows from the side away from the pin; min pulls rows back in,
    /// first from the pin side, then from the other side, as far as the group allows.
    func flexibleState(for window: GroupWindow, count: Int) -> FlexibleState {
        var lower = window.lower
        var upper = window.upper
        if upper - lower > maxLength {
            switch pin {
            case .beginning: upper = lower + maxLength
            case .end: lower = upper - maxLength
            }
        } else if upper - lower < minLength {
            var missing = minLength - (upper - lower)
            let fromBelow = { (wanted: Int) -> Int in min(wanted, lower) }
            let fromAbove = { (wanted: Int) -> Int in min(wanted, count - upper) }
            switch pin {
            case .beginning:
                let pinSide = fromBelow(missing); lower -= pinSide; missing -= pinSide
                upper += fromAbove(missing)
            case .end:
                let pinSide = fromAbove(missing); upper += pinSide; missing -= pinSide
                lower -= fromBelow(missing)
            }
        }
        let offset = pin == .beginning ? lower : count - upper
        return FlexibleState(offset: offset, length: upper - lower)
    }
}

/// Follows a flexible range's window through one changeset's view operations,
/// in the order they happened (docs/behaviour.md, "Flexible range").
///
/// Indexes are view indexes of the group at the moment of each operation, so the
/// tracker needs nothing but the operations themselves.
struct FlexibleWindowTracker {
    private(set) var window: GroupWindow
    let pin: RangePin
    let grow: RangeGrowOptions

    init(window: GroupWindow, options: RangeOptions) {
        self.window = window
        self.pin = options.pin
        self.grow = options.growOptions
    }

    /// A row left the group at `index`: before the window it shifts the window;
    /// inside it shrinks it; after it changes nothing.
    mutating func delete(at index: Int) {
        if index < window.lower {
            window.lower -= 1
            window.upper -= 1
        } else if index < window.upper {
            window.upper -= 1
        }
    }

    /// A row entered the group at `index`. Strictly inside, it joins the window;
    /// exactly at an edge it joins only if that edge may grow (an empty window
    /// grows on both sides); before the window it shifts it.
    mutating func insert(at index: Int) {
        if window.length == 0 && index == window.lower {
            window.upper += 1
        } else if index == window.lower {
            if mayGrow(atLowerEdge: true) {
                window.upper += 1
            } else {
                window.lower += 1
                window.upper += 1
            }
        } else if index < window.lower {
            window.lower += 1
            window.upper += 1
        } else if index < window.upper {
            window.upper += 1
        } else if index == window.upper, mayGrow(atLowerEdge: false) {
            window.upper += 1
        }
    }

    /// Every row left the view.
    mutating func reset() {
        window = GroupWindow(lower: 0, upper: 0)
    }

    private func mayGrow(atLowerEdge: Bool) -> Bool {
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
