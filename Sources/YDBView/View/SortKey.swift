#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
    public private(set) var bytes: [UInt8]

    public init() { bytes = [] }

    /// Raw bytes, compared as they are.
    public init(bytes: [UInt8]) { self.bytes = bytes }

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

    /// A byte string, ordered like text.
    public mutating func append(bytes value: [UInt8], descending: Bool = false) {
        append(escaping: value, descending)
    }

    /// Bytes as they are, with no end marker: for a key built elsewhere in
    /// an order-preserving form, or as the last part of a tuple.
    public mutating func append(raw value: [UInt8]) {
        bytes.append(contentsOf: value)
    }

    /// Big-endian, in one append instead of eight.
    private mutating func append(fixed value: UInt64, _ descending: Bool) {
        let encoded = (descending ? ~value : value).bigEndian
        withUnsafeBytes(of: encoded) { bytes.append(contentsOf: $0) }
    }

    /// 0x00 becomes 0x00 0xFF and the value ends with 0x00 0x01: byte order
    /// is kept and no encoded value is a prefix of another, so the next
    /// value of a tuple never decides before this one has. Descending
    /// inverts every byte of that (which reverses the order of
    /// prefix-free strings).
    private mutating func append<Bytes: Collection<UInt8>>(escaping value: Bytes, _ descending: Bool) {
        let mask: UInt8 = descending ? 0xFF : 0
        // Ascending text with no zero byte (all text from C, most text) is
        // copied in one append, after one growth to the size needed.
        let copied = value.withContiguousStorageIfAvailable { buffer -> Bool in
            guard !descending, !buffer.contains(0) else { return false }
            bytes.reserveCapacity(bytes.count + buffer.count + 2)
            bytes.append(contentsOf: buffer)
            return true
        }
        if copied != true {
            bytes.reserveCapacity(bytes.count + value.count + 2)
            for byte in value {
                bytes.append(byte ^ mask)
                if byte == 0 { bytes.append(0xFF ^ mask) }
            }
        }
        bytes.append(0x00 ^ mask)
        bytes.append(0x01 ^ mask)
    }

    public static func < (lhs: SortKey, rhs: SortKey) -> Bool { compare(lhs.bytes, rhs.bytes) < 0 }

    /// The first 8 bytes as a big-endian integer, zeros past the end. Two
    /// keys whose prefixes differ compare as their prefixes do (a shorter
    /// key that runs out first is also the smaller); equal prefixes need
    /// `compare`.
    var prefix: UInt64 {
        bytes.withUnsafeBufferPointer { buffer in
            var value: UInt64 = 0
            for index in 0 ..< 8 { value = value << 8 | UInt64(index < buffer.count ? buffer[index] : 0) }
            return value
        }
    }

    /// memcmp order: negative, zero or positive.
    static func compare(_ lhs: [UInt8], _ rhs: [UInt8]) -> Int {
        lhs.withUnsafeBufferPointer { a in
            rhs.withUnsafeBufferPointer { b in
                let common = min(a.count, b.count)
                if common > 0, let x = a.baseAddress, let y = b.baseAddress {
                    let order = memcmp(x, y, common)
                    if order != 0 { return Int(order) }
                }
                return a.count - b.count
            }
        }
    }

    public var description: String {
        let digits = Array("0123456789abcdef")
        return "SortKey(" + String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }) + ")"
    }
}
