/// What kind of failure a `YDBError` reports. The raw values are the C ABI's
/// status codes (`include/ydbview.h`), so the two never drift apart.
public enum YDBErrorCode: Int32, Sendable {
    case error = 1
    /// The API was used in a way it does not allow (a transaction used after
    /// it ended, a write inside a read transaction, nested transactions).
    case misuse = 2
    case invalidArgument = 3
    case notFound = 4
    case closed = 5
    case busy = 6
    case sqlite = 7
    /// A user callback (grouping, sorting, find, filter) reported failure.
    case callbackFailed = 8
    /// Mappings and notifications are not at matching snapshots.
    case mismatch = 9
    case corrupt = 10
    /// A value (object, metadata, key, collection) is longer than SQLite
    /// stores (its length limit, SQLITE_LIMIT_LENGTH). Nothing was written.
    case tooBig = 11
    /// A connection fell more than `Database.maxCommitsBehind` commits
    /// behind: its notifications were dropped; it must reload.
    case reloadRequired = 12
    /// The database file cannot be opened or created (missing directory,
    /// permissions, a directory in its place); the message names the path
    /// and the system's reason.
    case cantOpen = 13
    /// An asynchronous view registration was cancelled (`cancel()`, or a
    /// later registration or unregistration of the same name) and
    /// installed nothing.
    case cancelled = 14
}

/// The one error type the engine throws: a kind (`code`), a message for
/// people, and the facts a program may branch on (`sqliteCode`, `reason`).
public struct YDBError: Error, CustomStringConvertible, Sendable {
    public let code: YDBErrorCode
    public let message: String
    /// SQLite's extended result code when SQLite reported the failure
    /// (e.g. 13 SQLITE_FULL, 10 | 3<<8 SQLITE_IOERR_WRITE), else nil: a full
    /// disk and an I/O error are told apart without reading the message.
    public let sqliteCode: Int32?
    /// For mappings and range options: exactly what was wrong.
    public let reason: Reason?

    public init(_ code: YDBErrorCode, _ message: String, sqliteCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.sqliteCode = sqliteCode
        reason = nil
    }

    /// The error for `reason`: its code and message follow from it.
    public init(_ reason: Reason) {
        code = reason.code
        message = reason.message
        sqliteCode = nil
        self.reason = reason
    }

    public var description: String { "YDBError(\(code)): \(message)" }
}

extension YDBError {
    /// The facts behind a mappings mismatch or a refused range option.
    public enum Reason: Equatable, Sendable {
        /// The mappings are not at the snapshot the first notification starts
        /// from (or were never updated), the notifications are not one chain
        /// of commits, or the mappings' state does not match the first one's
        /// `before` view. The mappings are left unchanged. (`.mismatch`)
        case mismatchedMappingsAndNotifications(mappingsSnapshot: UInt64?, logsStart: UInt64)
        /// A notification's view log is for another view than the
        /// mappings'. (`.mismatch`)
        case wrongView(expected: String, found: String)
        /// A range length must be at least 1. (`.invalidArgument`, likewise below)
        case lengthNotPositive(Int)
        /// A flexible range's length (`RangeOptions.copy(withNewLength:)`) must not be negative.
        case negativeLength(Int)
        case negativeOffset(Int)
        /// An offset above `RangeOptions.maximumOffset` (2^53 − 1).
        case offsetTooLarge(Int)
        case negativeMinLength(Int)
        case maxLengthNotPositive(Int)
        case minLengthAboveMaxLength(min: Int, max: Int)

        var code: YDBErrorCode {
            switch self {
            case .mismatchedMappingsAndNotifications, .wrongView: .mismatch
            default: .invalidArgument
            }
        }

        var message: String {
            switch self {
            case .mismatchedMappingsAndNotifications(let mappingsSnapshot, let logsStart):
                let at = mappingsSnapshot.map { "at snapshot \($0)" } ?? "never updated"
                return "mismatched mappings and notifications: the mappings are \(at), the notifications start "
                    + "from snapshot \(logsStart) (update the mappings with a transaction at that snapshot, "
                    + "or pass every notification since their last update)"
            case .wrongView(let expected, let found):
                return "mismatched mappings and notifications: the mappings read view '\(expected)', "
                    + "the notifications are for view '\(found)'"
            case .lengthNotPositive(let length): return "length must be at least 1 (got \(length))"
            case .negativeLength(let length): return "length must not be negative (got \(length))"
            case .negativeOffset(let offset): return "offset must not be negative (got \(offset))"
            case .offsetTooLarge(let offset):
                return "offset must be at most \(RangeOptions.maximumOffset) (2^53 - 1; got \(offset))"
            case .negativeMinLength(let min): return "min_length must not be negative (got \(min))"
            case .maxLengthNotPositive(let max): return "max_length must be at least 1, or 0 for no limit (got \(max))"
            case .minLengthAboveMaxLength(let min, let max): return "min_length \(min) is above max_length \(max)"
            }
        }
    }
}

/// Names (collections, keys, views, groups) are data: any Unicode is fine,
/// but NUL cannot cross the C boundary, so it is refused everywhere.
func validateName(_ name: String, _ what: String) throws {
    if name.utf8.contains(0) {
        throw YDBError(.invalidArgument, "\(what) contains a NUL character")
    }
}
