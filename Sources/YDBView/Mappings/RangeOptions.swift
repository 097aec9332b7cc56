/// Which end of a group a range is measured from.
public enum RangePin: Hashable, Sendable {
    /// Offsets count from index 0 of the group.
    case beginning
    /// Offsets count back from the last index of the group.
    case end

    /// The other end.
    var flipped: RangePin { self == .beginning ? .end : .beginning }
}

/// Where a flexible range may grow when a row is inserted exactly at one of its edges.
/// Rows inserted strictly inside the window always join it.
public enum RangeGrowOptions: Hashable, Sendable {
    /// Only on the pinned side (the default).
    case pinSide
    /// Only on the side away from the pin.
    case nonPinSide
    /// On both sides.
    case bothSides
}

/// A window onto one group of a view: show only `length` rows starting `offset`
/// rows away from one end (the pin) of the group — like SQL `LIMIT`/`OFFSET`.
///
/// A **fixed** range always shows rows `[offset, offset + length)` counted from its
/// pin, clipped to the group; rows shifted in or out by changes elsewhere come out
/// of changesets as inserts and deletes. A **flexible** range starts the same way
/// and then follows the rows it shows: it grows and shrinks as rows are inserted
/// into or deleted from it, its offset changes so that the same rows stay shown,
/// and `maxLength` / `minLength` bound its length.
///
/// ```swift
/// // The 20 best sellers, kept up to date:
/// let top20 = try RangeOptions.fixed(length: 20, offset: 0, from: .beginning)
/// // A conversation: the newest 50 messages, growing as messages arrive, at most 300.
/// let chat = try RangeOptions.flexible(length: 50, offset: 0, from: .end,
///                                      maxLength: 300, minLength: 20)
/// mappings.setRangeOptions(chat, forGroup: conversationID)
/// // Later: show 50 older messages too, from where the range is now.
/// let now = mappings.rangeOptions(forGroup: conversationID)!
/// mappings.setRangeOptions(try now.copy(withNewLength: now.length + 50), forGroup: conversationID)
/// ```
///
/// A value: mappings keep their own copy, so changing a value (`maxLength`,
/// `minLength`, `growOptions`, or a `copy(with…)`) changes no range until it is
/// set again with `Mappings.setRangeOptions(_:forGroup:)`.
/// `Mappings.rangeOptions(forGroup:)` gives back the range's *current* `length`
/// and `offset` (as YapDatabase's `rangeOptionsForGroup:` does), so setting what it
/// returns, changed or not, continues from where the range stands.
public struct RangeOptions: Hashable, Sendable {
    /// Fixed or flexible.
    public enum Kind: Hashable, Sendable {
        case fixed
        case flexible
    }

    /// Fixed or flexible.
    public let kind: Kind
    /// The number of rows shown. As made (or copied), the length wanted: always > 0
    /// for a fixed range, the starting length for a flexible one. As read back from
    /// `Mappings.rangeOptions(forGroup:)` after an update, the current length, which
    /// may be 0: for a fixed range at most `maxLength` (the length as set; less when
    /// the group is too short), for a flexible range as grown and shrunk so far.
    public private(set) var length: Int
    /// How many rows lie between the pin and the window. Always >= 0. As read back
    /// from a flexible range after an update, the current offset (it changes as rows
    /// come and go between the window and the pin); a fixed range's never changes.
    public private(set) var offset: Int
    /// The end of the group `offset` is measured from.
    public let pin: RangePin
    private var storedMaxLength: Int
    private var storedMinLength: Int
    private var storedGrowOptions: RangeGrowOptions

    /// The most rows a flexible range may show (`Int.max`: unbounded). Setting a
    /// value below `minLength` (or below 1) sets `minLength` (or 1) instead, as in
    /// YapDatabase.
    ///
    /// For a fixed range, the length as set (YapDatabase: "always equals the length
    /// originally specified"): the length the window has whenever the group is long
    /// enough. Setting it is `copy(withNewLength:)` (values below 1 count as 1).
    public var maxLength: Int {
        get { storedMaxLength }
        set {
            switch kind {
            case .fixed:
                storedMaxLength = max(newValue, 1)
                length = storedMaxLength
            case .flexible:
                storedMaxLength = max(newValue, storedMinLength, 1)
            }
        }
    }

    /// The fewest rows a flexible range keeps shown when the group has them. Setting
    /// a negative value sets 0, a value above `maxLength` sets `maxLength`, as in
    /// YapDatabase. Always 0 for a fixed range (setting it changes nothing).
    public var minLength: Int {
        get { storedMinLength }
        set {
            guard kind == .flexible else { return }
            storedMinLength = min(max(newValue, 0), storedMaxLength)
        }
    }

    /// Where a flexible range grows on an insert at its edge. Always `.pinSide` for a
    /// fixed range (setting it changes nothing).
    public var growOptions: RangeGrowOptions {
        get { storedGrowOptions }
        set {
            guard kind == .flexible else { return }
            storedGrowOptions = newValue
        }
    }

    /// True for a fixed range.
    public var isFixed: Bool { kind == .fixed }
    /// True for a flexible range.
    public var isFlexible: Bool { kind == .flexible }

    private init(kind: Kind, length: Int, offset: Int, pin: RangePin,
                 maxLength: Int, minLength: Int, growOptions: RangeGrowOptions) {
        self.kind = kind
        self.length = length
        self.offset = offset
        self.pin = pin
        self.storedMaxLength = maxLength
        self.storedMinLength = minLength
        self.storedGrowOptions = growOptions
    }

    /// A fixed range of `length` rows, `offset` rows away from `pin`.
    /// - Throws: `YDBError` (`.invalidArgument`, with its `reason`) when `length < 1`, `offset < 0`
    ///   or `offset > maximumOffset`.
    public static func fixed(length: Int, offset: Int = 0, from pin: RangePin) throws -> RangeOptions {
        guard length > 0 else { throw YDBError(.lengthNotPositive(length)) }
        try checkOffset(offset)
        return RangeOptions(kind: .fixed, length: length, offset: offset, pin: pin,
                            maxLength: length, minLength: 0, growOptions: .pinSide)
    }

    /// A flexible range that starts with `length` rows, `offset` rows away from `pin`.
    /// - Parameters:
    ///   - length: the rows shown at first (at least 1).
    ///   - offset: how many rows lie between `pin`'s end of the group and the range.
    ///   - pin: the end of the group the range is measured from.
    ///   - maxLength: rows beyond this are trimmed from the side away from the pin (`Int.max`: no limit).
    ///   - minLength: when fewer rows are shown and the group has more, rows are pulled
    ///     back in, first from the pin side.
    ///   - grow: which edges accept rows inserted exactly at them.
    /// - Throws: `YDBError` (`.invalidArgument`, with its `reason`) for a length < 1, a negative offset or
    ///   minimum, an offset above `maximumOffset`,
    ///   a maximum < 1, or a minimum above the maximum.
    public static func flexible(length: Int, offset: Int = 0, from pin: RangePin,
                                maxLength: Int = .max, minLength: Int = 0,
                                grow: RangeGrowOptions = .pinSide) throws -> RangeOptions {
        guard length > 0 else { throw YDBError(.lengthNotPositive(length)) }
        try checkOffset(offset)
        guard minLength >= 0 else { throw YDBError(.negativeMinLength(minLength)) }
        guard maxLength > 0 else { throw YDBError(.maxLengthNotPositive(maxLength)) }
        guard minLength <= maxLength else {
            throw YDBError(.minLengthAboveMaxLength(min: minLength, max: maxLength))
        }
        return RangeOptions(kind: .flexible, length: length, offset: offset, pin: pin,
                            maxLength: maxLength, minLength: minLength, growOptions: grow)
    }

    /// The largest offset a range may be set with: 2^53 − 1, far beyond any
    /// group SQLite can hold (and exact as a JSON or Python number). A window
    /// follows its rows by counting inserts and deletes before it, so an
    /// offset near `Int.max` would overflow; one this large shows an empty
    /// window, as any offset past the group's end does.
    public static let maximumOffset = (1 << 53) - 1

    private static func checkOffset(_ offset: Int) throws {
        guard offset >= 0 else { throw YDBError(.negativeOffset(offset)) }
        guard offset <= maximumOffset else { throw YDBError(.offsetTooLarge(offset)) }
    }

    /// The same options with another length (YapDatabase's `copyWithNewLength:`).
    /// For a fixed range this is a new length as set: `maxLength` becomes `length`
    /// too. A flexible range may be given 0 (what an empty window reads back as;
    /// it grows when rows are inserted at its edge); `maxLength` and `minLength`
    /// apply when the options are set.
    /// - Throws: `YDBError` (`.invalidArgument`, with its `reason`) for a negative
    ///   length, or a length < 1 for a fixed range.
    public func copy(withNewLength newLength: Int) throws -> RangeOptions {
        try copy(withNewLength: newLength, newOffset: offset)
    }

    /// The same options with another offset from the pin (YapDatabase's `copyWithNewOffset:`).
    /// - Throws: `YDBError` (`.invalidArgument`, with its `reason`) for a negative offset, or one
    ///   above `maximumOffset`.
    public func copy(withNewOffset newOffset: Int) throws -> RangeOptions {
        try Self.checkOffset(newOffset)
        var copy = self
        copy.offset = newOffset
        return copy
    }

    /// The same options with another length and offset (YapDatabase's
    /// `copyWithNewLength:newOffset:`); see `copy(withNewLength:)`.
    public func copy(withNewLength newLength: Int, newOffset: Int) throws -> RangeOptions {
        switch kind {
        case .fixed: guard newLength > 0 else { throw YDBError(.lengthNotPositive(newLength)) }
        case .flexible: guard newLength >= 0 else { throw YDBError(.negativeLength(newLength)) }
        }
        var copy = try self.copy(withNewOffset: newOffset)
        copy.length = newLength
        if kind == .fixed { copy.storedMaxLength = newLength }
        return copy
    }

    /// The same options measured from the other end: how a range set on a reversed
    /// group is stored in view order, and read back in display order.
    func withPinFlipped() -> RangeOptions {
        RangeOptions(kind: kind, length: length, offset: offset, pin: pin.flipped,
                     maxLength: maxLength, minLength: minLength, growOptions: growOptions)
    }

    /// The options as mappings store them: a fixed range's `length` is its length
    /// as set (`maxLength`), whatever length it was read back with.
    func asSet() -> RangeOptions {
        guard kind == .fixed else { return self }
        var stored = self
        stored.length = storedMaxLength
        return stored
    }

    /// These options (as stored, in view order) with a range's current offset and
    /// length: a flexible range's state, or a fixed range's offset as set (YapDatabase:
    /// "for a fixed range, the offset never changes") with its window's length.
    func current(offset: Int, length: Int) -> RangeOptions {
        var current = self
        current.offset = offset
        current.length = length
        return current
    }
}

/// Where a group's window stands inside the whole group, in display order
/// (swapped for a reversed group). `offsetFromBeginning + length + offsetFromEnd`
/// equals the group's row count, except for a range whose offset lies past the
/// end of the group (see `Mappings.rangePosition(forGroup:)`).
public struct RangePosition: Hashable, Sendable {
    /// Rows of the group before the first shown row.
    public let offsetFromBeginning: Int
    /// Rows of the group after the last shown row.
    public let offsetFromEnd: Int
    /// Rows shown.
    public let length: Int

    public init(offsetFromBeginning: Int, offsetFromEnd: Int, length: Int) {
        self.offsetFromBeginning = offsetFromBeginning
        self.offsetFromEnd = offsetFromEnd
        self.length = length
    }
}
