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
/// ```
///
/// A value is immutable; mappings keep their own copy and the window's current
/// position is read with `Mappings.rangePosition(forGroup:)`.
public struct RangeOptions: Hashable, Sendable {
    /// Fixed or flexible.
    public enum Kind: Hashable, Sendable {
        case fixed
        case flexible
    }

    /// Fixed or flexible.
    public let kind: Kind
    /// The (starting, for a flexible range) number of rows shown. Always > 0.
    public let length: Int
    /// How many rows lie between the pin and the window. Always >= 0.
    public let offset: Int
    /// The end of the group `offset` is measured from.
    public let pin: RangePin
    /// The most rows a flexible range may show; equals `length` for a fixed range;
    /// `Int.max` means unbounded.
    public let maxLength: Int
    /// The fewest rows a flexible range keeps shown when the group has them; 0 for a fixed range.
    public let minLength: Int
    /// Where a flexible range grows on an insert at its edge; `.pinSide` for a fixed range.
    public let growOptions: RangeGrowOptions

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
        self.maxLength = maxLength
        self.minLength = minLength
        self.growOptions = growOptions
    }

    /// A fixed range of `length` rows, `offset` rows away from `pin`.
    /// - Throws: `YDBError` (`.invalidArgument`, with its `reason`) when `length < 1` or `offset < 0`.
    public static func fixed(length: Int, offset: Int = 0, from pin: RangePin) throws -> RangeOptions {
        guard length > 0 else { throw YDBError(.lengthNotPositive(length)) }
        guard offset >= 0 else { throw YDBError(.negativeOffset(offset)) }
        return RangeOptions(kind: .fixed, length: length, offset: offset, pin: pin,
                            maxLength: length, minLength: 0, growOptions: .pinSide)
    }

    /// A flexible range that starts with `length` rows, `offset` rows away from `pin`.
    /// - Parameters:
    ///   - maxLength: rows beyond this are trimmed from the side away from the pin (`Int.max`: no limit).
    ///   - minLength: when fewer rows are shown and the group has more, rows are pulled
    ///     back in, first from the pin side.
    ///   - grow: which edges accept rows inserted exactly at them.
    /// - Throws: `YDBError` (`.invalidArgument`, with its `reason`) for a length < 1, a negative offset or minimum,
    ///   a maximum < 1, or a minimum above the maximum.
    public static func flexible(length: Int, offset: Int = 0, from pin: RangePin,
                                maxLength: Int = .max, minLength: Int = 0,
                                grow: RangeGrowOptions = .pinSide) throws -> RangeOptions {
        guard length > 0 else { throw YDBError(.lengthNotPositive(length)) }
        guard offset >= 0 else { throw YDBError(.negativeOffset(offset)) }
        guard minLength >= 0 else { throw YDBError(.negativeMinLength(minLength)) }
        guard maxLength > 0 else { throw YDBError(.maxLengthNotPositive(maxLength)) }
        guard minLength <= maxLength else {
            throw YDBError(.minLengthAboveMaxLength(min: minLength, max: maxLength))
        }
        return RangeOptions(kind: .flexible, length: length, offset: offset, pin: pin,
                            maxLength: maxLength, minLength: minLength, growOptions: grow)
    }

    /// The same options measured from the other end: how a range set on a reversed
    /// group is stored in view order, and read back in display order.
    func withPinFlipped() -> RangeOptions {
        RangeOptions(kind: kind, length: length, offset: offset, pin: pin.flipped,
                     maxLength: maxLength, minLength: minLength, growOptions: growOptions)
    }
}

/// Where a group's window stands inside the whole group, in display order
/// (swapped for a reversed group). `offsetFromBeginning + length + offsetFromEnd`
/// always equals the group's row count.
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
