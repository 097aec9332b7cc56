import FoundationEssentials

/// Swift conveniences: objects and metadata as `Data`, or as `Codable`
/// values stored as JSON. The engine itself only ever sees bytes.
///
/// ```swift
/// struct Book: Codable { var title: String; var rank: Int }
/// try connection.readWrite { try $0.setValue(Book(title: "Dune", rank: 1), forKey: "b1", inCollection: "books") }
/// let book = try connection.read { try $0.value(Book.self, forKey: "b1", inCollection: "books") }
/// ```
extension ReadTransaction {
    public func data(forKey key: String, inCollection collection: String) throws -> Data? {
        try object(forKey: key, inCollection: collection).map { Data($0) }
    }

    /// The object decoded from JSON, or nil when the row does not exist.
    /// Throws `.invalidArgument` when the stored bytes are not a `T`.
    public func value<T: Decodable>(_ type: T.Type, forKey key: String, inCollection collection: String) throws -> T? {
        guard let bytes = try object(forKey: key, inCollection: collection) else { return nil }
        return try decodeJSON(type, bytes, "object \(collection)/\(key)")
    }

    /// The metadata decoded from JSON, or nil when the row or its metadata does not exist.
    public func metadataValue<T: Decodable>(_ type: T.Type, forKey key: String,
                                            inCollection collection: String) throws -> T? {
        guard let bytes = try metadata(forKey: key, inCollection: collection) else { return nil }
        return try decodeJSON(type, bytes, "metadata of \(collection)/\(key)")
    }
}

extension ReadWriteTransaction {
    public func setData(_ object: Data, forKey key: String, inCollection collection: String,
                        metadata: Data? = nil) throws {
        try setObject(Array(object), forKey: key, inCollection: collection, metadata: metadata.map { Array($0) })
    }

    /// Stores `value` (and `metadata`) as JSON.
    public func setValue<T: Encodable>(_ value: T, forKey key: String, inCollection collection: String) throws {
        try setObject(encodeJSON(value), forKey: key, inCollection: collection, metadata: nil)
    }

    public func setValue<T: Encodable, M: Encodable>(_ value: T, forKey key: String, inCollection collection: String,
                                                     metadata: M) throws {
        try setObject(encodeJSON(value), forKey: key, inCollection: collection, metadata: encodeJSON(metadata))
    }
}

func encodeJSON<T: Encodable>(_ value: T) throws -> [UInt8] {
    do {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Array(try encoder.encode(value))
    } catch {
        throw YDBError(.invalidArgument, "cannot encode \(T.self) as JSON: \(error)")
    }
}

func decodeJSON<T: Decodable>(_ type: T.Type, _ bytes: [UInt8], _ what: String) throws -> T {
    do {
        return try JSONDecoder().decode(type, from: Data(bytes))
    } catch {
        throw YDBError(.invalidArgument, "\(what) is not a JSON \(T.self): \(error)")
    }
}
