#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A name — collection, key, group or view — compared, hashed and ordered
/// as its UTF-8 bytes, the way SQLite, the C API and Python see it.
///
/// Swift's `String` equality follows Unicode canonical equivalence: "é" as
/// U+00E9 and as "e" + U+0301 are `==`. To SQLite they are two different
/// names, so the engine never compares or hashes names as `String`s: two
/// spellings of "é" are two groups, two rows, two views. (Byte order is
/// also Unicode scalar order, SQLite's BINARY collation and Python's `str`
/// order.)
struct Name: Hashable, Comparable, Sendable, CustomStringConvertible {
    let value: String

    init(_ value: String) { self.value = value }
    init(value: String) { self.value = value }

    static func == (lhs: Name, rhs: Name) -> Bool { bytesEqual(lhs.value, rhs.value) }

    static func < (lhs: Name, rhs: Name) -> Bool { bytesPrecede(lhs.value, rhs.value) }

    func hash(into hasher: inout Hasher) { hashBytes(value, into: &hasher) }

    var description: String { value }
}

/// Whether two strings are the same bytes (not merely canonically equivalent).
@inline(__always)
func bytesEqual(_ lhs: String, _ rhs: String) -> Bool {
    guard lhs.utf8.count == rhs.utf8.count else { return false }
    if let equal = withUTF8(lhs, rhs, { compareBytes($0, $1) == 0 }) { return equal }
    return lhs.utf8.elementsEqual(rhs.utf8)
}

/// Whether `lhs`'s bytes order before `rhs`'s (a shorter prefix first):
/// SQLite's BINARY order, and Unicode scalar order.
@inline(__always)
package func bytesPrecede(_ lhs: String, _ rhs: String) -> Bool {
    if let ordered = withUTF8(lhs, rhs, { compareBytes($0, $1) < 0 }) { return ordered }
    return lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
}

/// `body` over both strings' UTF-8 where it is, or nil when either is not
/// stored contiguously (never for a string the engine made). Comparing the
/// views element by element instead cost several hundred instructions for
/// a short name, and a commit compares names on every lookup of a group
/// or a view.
@inline(__always)
private func withUTF8<T>(_ lhs: String, _ rhs: String,
                         _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> T) -> T? {
    lhs.utf8.withContiguousStorageIfAvailable { a in
        rhs.utf8.withContiguousStorageIfAvailable { b in body(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b)) }
    } ?? nil
}

/// memcmp order of two byte strings, a prefix before what it begins:
/// negative, zero or positive.
@inline(__always)
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let common = min(a.count, b.count)
    if common > 0, let x = a.baseAddress, let y = b.baseAddress {
        let order = memcmp(x, y, common)
        if order != 0 { return Int(order) }
    }
    return a.count - b.count
}

/// Feeds a string's UTF-8 bytes to `hasher` (one call when they are contiguous).
@inline(__always)
func hashBytes(_ string: String, into hasher: inout Hasher) {
    var copy = string
    copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    hasher.combine(string.utf8.count)
}

/// Group names are names (the view's group trees are keyed by them).
typealias GroupName = Name

/// A dictionary keyed by names compared as bytes, used like `[String: Value]`.
struct NameMap<Value>: Sequence, ExpressibleByDictionaryLiteral {
    private(set) var storage: [Name: Value] = [:]

    init() {}
    init(dictionaryLiteral elements: (String, Value)...) {
        for (key, value) in elements { storage[Name(key)] = value }
    }
    init<S: Sequence>(uniqueKeysWithValues pairs: S) where S.Element == (String, Value) {
        for (key, value) in pairs { storage[Name(key)] = value }
    }

    subscript(key: String) -> Value? {
        get { storage[Name(key)] }
        set { storage[Name(key)] = newValue }
    }
    subscript(key: String, default value: @autoclosure () -> Value) -> Value {
        get { storage[Name(key), default: value()] }
        set { storage[Name(key)] = newValue }
    }

    var keys: [String] { storage.keys.map(\.value) }
    var values: Dictionary<Name, Value>.Values { storage.values }
    var isEmpty: Bool { storage.isEmpty }
    var count: Int { storage.count }
    @discardableResult
    mutating func removeValue(forKey key: String) -> Value? { storage.removeValue(forKey: Name(key)) }
    mutating func removeAll() { storage.removeAll() }

    func makeIterator() -> AnyIterator<(key: String, value: Value)> {
        var inner = storage.makeIterator()
        return AnyIterator { inner.next().map { (key: $0.key.value, value: $0.value) } }
    }
}

/// A set of names compared as bytes, used like `Set<String>`.
struct NameSet: Sequence, ExpressibleByArrayLiteral {
    private(set) var storage: Set<Name> = []

    init() {}
    init(arrayLiteral elements: String...) { storage = Set(elements.map { Name($0) }) }
    init<S: Sequence>(_ names: S) where S.Element == String { storage = Set(names.map { Name($0) }) }

    func contains(_ name: String) -> Bool { storage.contains(Name(name)) }
    @discardableResult
    mutating func insert(_ name: String) -> (inserted: Bool, memberAfterInsert: String) {
        let result = storage.insert(Name(name))
        return (result.inserted, result.memberAfterInsert.value)
    }
    @discardableResult
    mutating func remove(_ name: String) -> String? { storage.remove(Name(name))?.value }
    func intersection<S: Sequence>(_ names: S) -> NameSet where S.Element == String {
        var result = NameSet()
        result.storage = storage.intersection(names.map { Name($0) })
        return result
    }
    func union<S: Sequence>(_ names: S) -> NameSet where S.Element == String {
        var result = self
        for name in names { result.insert(name) }
        return result
    }
    var isEmpty: Bool { storage.isEmpty }
    var count: Int { storage.count }

    func makeIterator() -> AnyIterator<String> {
        var inner = storage.makeIterator()
        return AnyIterator { inner.next()?.value }
    }
}

extension Sequence where Element == String {
    /// Whether `name` is among these, comparing bytes.
    func containsName(_ name: String) -> Bool { contains { bytesEqual($0, name) } }
}

extension Array where Element == String {
    /// Index of the first element that is `name`'s bytes.
    func firstIndexOfName(_ name: String) -> Int? { firstIndex { bytesEqual($0, name) } }
}

extension NameMap: Equatable where Value: Equatable {}
