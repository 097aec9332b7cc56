/// A row's (collection, key). Equal and hashed by bytes: two spellings of
/// "é" are two rows, as they are to SQLite (see `Name`).
public struct RowKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let collection: String
    public let key: String
    public init(collection: String, key: String) {
        self.collection = collection
        self.key = key
    }
    public static func == (lhs: RowKey, rhs: RowKey) -> Bool {
        bytesEqual(lhs.key, rhs.key) && bytesEqual(lhs.collection, rhs.collection)
    }
    public func hash(into hasher: inout Hasher) {
        hashBytes(collection, into: &hasher)
        hashBytes(key, into: &hasher)
    }
    /// By collection, then key, each as UTF-8 bytes (SQLite's BINARY order).
    public static func < (lhs: RowKey, rhs: RowKey) -> Bool {
        bytesEqual(lhs.collection, rhs.collection)
            ? lhs.key.utf8.lexicographicallyPrecedes(rhs.key.utf8)
            : lhs.collection.utf8.lexicographicallyPrecedes(rhs.collection.utf8)
    }
    public var description: String { "\(collection)/\(key)" }
}
