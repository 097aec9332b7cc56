/// A row's place in its group's order, as bytes: rows sort by comparing
/// their keys byte by byte (`memcmp`, a shorter key first when it is a
/// prefix of the longer). The sort-key form of `ViewSorting` asks for one
/// key per row instead of comparing rows two at a time, so the engine can
/// keep the keys in memory, sort a population natively and place a
/// changed row without calling back.
///
/// Build keys with the `append` methods, which encode values so that byte
/// order is value order, and append several for a tuple: the first value
/// decides, the next breaks ties, and so on. Each encoding is
/// self-delimiting, so `("ab", 2)` and `("a", 9)` still sort by the text
/// first. Every key of one view should append the same kinds of values in
/// the same order; mixing kinds in one position gives a consistent but
/// meaningless order. The encodings are the same in C (`ydb_sort_key_*`)
/// and Python (`ydbview.sort_key`), and are stored in the database: they
/// will not change within a schema version.
///
/// ```swift
/// var key = SortKey()
/// key.append(Int64(pinned ? 0 : 1))      // pinned first
/// key.append(date, descending: true)     // then newest first
/// key.append(title)                      // then by title
/// ```
public struct SortKey: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Up to `Inline.capacity` bytes are kept in the value itself, longer
    /// keys in an array. Most keys are short (a number or two, a short
    /// text), and a view keeps one per row: inline, such a key costs no
    /// allocation, no reference counting when a tree leaf holding it is
    /// copied, and 32 bytes where an array cost 8 plus a 48–64-byte block.
    /// A key is inline exactly when it fits, so equal bytes are equal
    /// storage.
    private var storage: Storage

    private enum Storage {
        case inline(Inline)
        case array([UInt8])
    }

    /// Bytes in memory order, the unused ones zero (so whole words compare
    /// as the bytes do, see `compare`).
    private struct Inline {
        static let capacity = 24
        var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var count: UInt8 = 0
    }

    public init() { storage = .inline(Inline()) }

    /// Raw bytes, compared as they are.
    public init(bytes: [UInt8]) {
        self.init()
        if bytes.count <= Inline.capacity {
            bytes.withUnsafeBytes { append(contentsOf: $0) }
        } else {
            storage = .array(bytes)
        }
    }

    /// Raw bytes, compared as they are: a key read back from storage.
    package init(copying buffer: UnsafeRawBufferPointer) {
        self.init()
        append(contentsOf: buffer)
    }

    /// The key's bytes.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    var count: Int {
        switch storage {
        case .inline(let inline): return Int(inline.count)
        case .array(let array): return array.count
        }
    }

    /// The first eight bytes as a big-endian integer, zeros past the end:
    /// keys whose prefixes differ compare as their prefixes do
    /// (`KeyOrder`).
    var prefix: UInt64 {
        switch storage {
        case .inline(let inline):
            // The unused bytes of an inline key are zero.
            return UInt64(bigEndian: inline.words.0)
        case .array(let array):
            var prefix: UInt64 = 0
            for index in 0 ..< 8 { prefix = prefix << 8 | UInt64(index < array.count ? array[index] : 0) }
            return prefix
        }
    }

    /// Calls `body` with the key's bytes, without copying them.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        switch storage {
        case .inline(var inline):
            let count = Int(inline.count)
            return try Swift.withUnsafeBytes(of: &inline.words) { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        case .array(let array):
            return try array.withUnsafeBytes(body)
        }
    }

    /// Appends bytes as they are; the one place the storage grows.
    private mutating func append(contentsOf buffer: UnsafeRawBufferPointer) {
        guard let source = buffer.baseAddress, buffer.count > 0 else { return }
        switch storage {
        case .inline(var inline):
            let count = Int(inline.count)
            if count + buffer.count <= Inline.capacity {
                Swift.withUnsafeMutableBytes(of: &inline.words) {
                    $0.baseAddress!.advanced(by: count).copyMemory(from: source, byteCount: buffer.count)
                }
                inline.count += UInt8(buffer.count)
                storage = .inline(inline)
            } else {
                var array = [UInt8]()
                array.reserveCapacity(count + buffer.count + 16)
                Swift.withUnsafeBytes(of: &inline.words) { array.append(contentsOf: $0[..<count]) }
                array.append(contentsOf: buffer)
                storage = .array(array)
            }
        case .array(var array):
            storage = .inline(Inline())   // the array's only reference is `array`: appended in place
            array.append(contentsOf: buffer)
            storage = .array(array)
        }
    }

    /// An integer: 8 bytes, big-endian, sign bit flipped (so negative
    /// numbers come first).
    public mutating func append(_ value: Int64, descending: Bool = false) {
        append(fixed: UInt64(bitPattern: value) ^ (1 << 63), descending)
    }

    /// A double: 8 bytes in IEEE order (-infinity < … < -0.0 = 0.0 < … <
    /// +infinity < NaN). -0.0 is stored as 0.0, and every NaN as one NaN.
    public mutating func append(_ value: Double, descending: Bool = false) {
        let normal = value == 0 ? 0.0 : value.isNaN ? Double.nan : value
        let bits = normal.bitPattern
        append(fixed: bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63), descending)
    }

    /// Text, by its UTF-8 bytes (Unicode code point order, not a locale's
    /// collation; two spellings of "é" are two keys). A shorter text that is
    /// a prefix of a longer one comes first.
    public mutating func append(_ value: String, descending: Bool = false) {
        append(escaping: value.utf8, descending)
    }

    /// Text given as its UTF-8 bytes, which the caller has checked: the
    /// same encoding as `append(_: String)` (for the C layer, which appends
    /// a C string in place).
    package mutating func append(utf8 value: UnsafeRawBufferPointer, descending: Bool = false) {
        append(escaping: value, descending)
    }

    /// A byte string, ordered like text.
    public mutating func append(bytes value: [UInt8], descending: Bool = false) {
        append(escaping: value, descending)
    }

    /// Bytes as they are, with no end marker: for a key built elsewhere in
    /// an order-preserving form, or as the last part of a tuple.
    public mutating func append(raw value: [UInt8]) {
        value.withUnsafeBytes { append(contentsOf: $0) }
    }

    /// Big-endian, in one append instead of eight.
    private mutating func append(fixed value: UInt64, _ descending: Bool) {
        let encoded = (descending ? ~value : value).bigEndian
        Swift.withUnsafeBytes(of: encoded) { append(contentsOf: $0) }
    }

    /// 0x00 becomes 0x00 0xFF and the value ends with 0x00 0x01: byte order
    /// is kept and no encoded value is a prefix of another, so the next
    /// value of a tuple never decides before this one has. Descending
    /// inverts every byte of that (which reverses the order of
    /// prefix-free strings).
    private mutating func append<Bytes: Collection<UInt8>>(escaping value: Bytes, _ descending: Bool) {
        let mask: UInt8 = descending ? 0xFF : 0
        // Ascending text with no zero byte (all text from C, most text) is
        // copied in one append.
        let copied = value.withContiguousStorageIfAvailable { buffer -> Bool in
            guard !descending, !buffer.contains(0) else { return false }
            append(contentsOf: UnsafeRawBufferPointer(buffer))
            return true
        }
        if copied != true {
            var escaped: [UInt8] = []
            escaped.reserveCapacity(value.count + 2)
            for byte in value {
                escaped.append(byte ^ mask)
                if byte == 0 { escaped.append(0xFF ^ mask) }
            }
            escaped.withUnsafeBytes { append(contentsOf: $0) }
        }
        // The terminator, in one append.
        Swift.withUnsafeBytes(of: (0x00 ^ mask, 0x01 ^ mask)) { append(contentsOf: $0) }
    }

    public static func < (lhs: SortKey, rhs: SortKey) -> Bool { compare(lhs, rhs) < 0 }

    public static func == (lhs: SortKey, rhs: SortKey) -> Bool { compare(lhs, rhs) == 0 }

    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// memcmp order: negative, zero or positive. Two inline keys compare a
    /// word at a time: their unused bytes are zero, so words that differ
    /// differ where the bytes do, and equal words leave the shorter key first.
    static func compare(_ lhs: SortKey, _ rhs: SortKey) -> Int {
        if case .inline(let a) = lhs.storage, case .inline(let b) = rhs.storage {
            if a.words.0 != b.words.0 { return UInt64(bigEndian: a.words.0) < UInt64(bigEndian: b.words.0) ? -1 : 1 }
            if a.words.1 != b.words.1 { return UInt64(bigEndian: a.words.1) < UInt64(bigEndian: b.words.1) ? -1 : 1 }
            if a.words.2 != b.words.2 { return UInt64(bigEndian: a.words.2) < UInt64(bigEndian: b.words.2) ? -1 : 1 }
            return Int(a.count) - Int(b.count)
        }
        return compareBytes(lhs, rhs)
    }

    /// Kept out of `compare`: inlined, it made the word-wise path every
    /// comparison takes slower.
    @inline(never)
    private static func compareBytes(_ lhs: SortKey, _ rhs: SortKey) -> Int {
        lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in YDBView.compareBytes(a, b) } }
    }

    public var description: String {
        let digits = Array("0123456789abcdef")
        return "SortKey(" + String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }) + ")"
    }
}
