import YDBView

/// A scenario's rules as engine callbacks. Each callback declares the
/// smallest flavour that covers what its rules read, so the engine skips
/// re-grouping and re-sorting exactly as it would for a user's callbacks.
extension ScenarioView {
    var engineView: View {
        View(grouping: grouping, sorting: sorting, versionTag: versionTag,
             isPersistent: isPersistent, allowedCollections: collections)
    }

    var groupingFlavour: ViewFlavour {
        switch group {
        case .field: return .object
        case .metadataField: return .metadata
        case .constant, .collection: return .key
        }
    }

    var sortingFlavour: ViewFlavour {
        let readsObject = sort.contains { if case .field = $0.source { return true } else { return false } }
        let readsMetadata = sort.contains { if case .metadataField = $0.source { return true } else { return false } }
        switch (readsObject, readsMetadata) {
        case (true, true): return .row
        case (true, false): return .object
        case (false, true): return .metadata
        case (false, false): return .key
        }
    }

    var grouping: ViewGrouping {
        let rule = group
        return ViewGrouping(flavour: groupingFlavour) { row in
            let value: JSONValue?
            switch rule {
            case .constant(let name): return name
            case .collection: return row.collection
            case .field(let field): value = try decoded(row.object)?[field]
            case .metadataField(let field): value = try decoded(row.metadata)?[field]
            }
            return try groupName(of: value)
        }
    }

    var sorting: ViewSorting {
        let rules = sort
        return ViewSorting(flavour: sortingFlavour) { _, left, right in
            let needsObject = rules.contains { if case .field = $0.source { return true } else { return false } }
            let needsMetadata = rules.contains { if case .metadataField = $0.source { return true } else { return false } }
            let leftObject = needsObject ? try decoded(left.object) : nil
            let rightObject = needsObject ? try decoded(right.object) : nil
            let leftMetadata = needsMetadata ? try decoded(left.metadata) : nil
            let rightMetadata = needsMetadata ? try decoded(right.metadata) : nil
            for rule in rules {
                let order: ViewOrder
                switch rule.source {
                case .field(let field): order = compareValues(leftObject?[field], rightObject?[field])
                case .metadataField(let field): order = compareValues(leftMetadata?[field], rightMetadata?[field])
                case .key: order = compareScalars(left.key, right.key)
                }
                if order != .same { return rule.descending ? order.flipped : order }
            }
            let byCollection = compareScalars(left.collection, right.collection)
            return byCollection != .same ? byCollection : compareScalars(left.key, right.key)
        }
    }
}

struct CallbackError: Error, CustomStringConvertible {
    let description: String
}

/// The JSON value stored as `bytes` (nil when there are none).
func decoded(_ bytes: [UInt8]?) throws -> JSONValue? {
    guard let bytes else { return nil }
    do {
        return try JSONValue.parse(bytes)
    } catch {
        throw CallbackError(description: "stored value is not JSON")
    }
}

/// A grouping rule's result: strings as they are, numbers in their shortest
/// decimal form, anything else (missing, null, booleans, arrays, objects)
/// leaves the row out of the view.
func groupName(of value: JSONValue?) throws -> String? {
    switch value {
    case .string(let string):
        if string.unicodeScalars.contains("\0") {
            throw CallbackError(description: "group name \(JSONValue.string(string).compactText) contains NUL")
        }
        return string
    case .int(let number): return String(number)
    case .double(let number): return number.isFinite ? JSONValue.numberText(number) : nil
    default: return nil
    }
}

extension ViewOrder {
    var flipped: ViewOrder {
        switch self {
        case .ascending: return .descending
        case .descending: return .ascending
        case .same: return .same
        }
    }
}

/// Missing/null < numbers (numerically) < strings (by Unicode scalar values)
/// < anything else (booleans, arrays, objects, compared by their JSON text).
func compareValues(_ left: JSONValue?, _ right: JSONValue?) -> ViewOrder {
    let leftRank = rank(left), rightRank = rank(right)
    if leftRank != rightRank { return leftRank < rightRank ? .ascending : .descending }
    switch (left, right) {
    case let (.int(a)?, .int(b)?): return a < b ? .ascending : a == b ? .same : .descending
    case let (.string(a)?, .string(b)?): return compareScalars(a, b)
    default:
        if leftRank == 1 {
            let a = numericValue(left), b = numericValue(right)
            return a < b ? .ascending : a == b ? .same : .descending
        }
        if leftRank == 3 { return compareScalars(left?.compactText ?? "", right?.compactText ?? "") }
        return .same
    }
}

private func rank(_ value: JSONValue?) -> Int {
    switch value {
    case nil, .null?: return 0
    case .int?, .double?: return 1
    case .string?: return 2
    default: return 3
    }
}

private func numericValue(_ value: JSONValue?) -> Double {
    switch value {
    case .int(let number)?: return Double(number)
    case .double(let number)?: return number
    default: return 0
    }
}

/// Orders strings by their Unicode scalar values (not by Swift's
/// canonical-equivalence order), as the scenario format specifies.
func compareScalars(_ left: String, _ right: String) -> ViewOrder {
    var leftScalars = left.unicodeScalars.makeIterator()
    var rightScalars = right.unicodeScalars.makeIterator()
    while true {
        switch (leftScalars.next(), rightScalars.next()) {
        case (nil, nil): return .same
        case (nil, _): return .ascending
        case (_, nil): return .descending
        case let (a?, b?):
            if a != b { return a.value < b.value ? .ascending : .descending }
        }
    }
}
