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
}

/// The one error type the engine throws.
public struct YDBError: Error, CustomStringConvertible, Sendable {
    public let code: YDBErrorCode
    public let message: String
    /// SQLite's extended result code when SQLite reported the failure
    /// (e.g. 13 SQLITE_FULL, 10 | 3<<8 SQLITE_IOERR_WRITE), else nil: a full
    /// disk and an I/O error are told apart without reading the message.
    public let sqliteCode: Int32?

    public init(_ code: YDBErrorCode, _ message: String, sqliteCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.sqliteCode = sqliteCode
    }

    public var description: String { "YDBError(\(code)): \(message)" }
}

/// Names (collections, keys, views, groups) are data: any Unicode is fine,
/// but NUL cannot cross the C boundary, so it is refused everywhere.
func validateName(_ name: String, _ what: String) throws {
    if name.utf8.contains(0) {
        throw YDBError(.invalidArgument, "\(what) contains a NUL character")
    }
}
