// SPDX-License-Identifier: Apache-2.0
/// A JSON value with object keys kept in insertion order, so encoded lines read the same way
/// every time (and match docs/protocol.md's examples field for field).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The value at `key` of an object; nil for other values or a missing key.
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// The string, if this is one.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    /// The boolean, if this is one.
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    /// The object, if this is one.
    public var objectValue: JSONObject? { if case .object(let o) = self { return o } else { return nil } }
    /// The array, if this is one.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    /// Any JSON number as a Double.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
    /// A JSON number that is a whole number, as an Int64.
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }

    /// The JSON type name, for error messages ("expected number, got string").
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

/// An ordered JSON object.
public struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// The members in insertion order.
    public private(set) var entries: [(key: String, value: JSONValue)] = []

    /// An empty object.
    public init() {}
    /// An object with the literal's members, in order (a repeated key keeps its first place, last value).
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        for (k, v) in elements { self[k] = v }
    }

    /// The keys in order.
    public var keys: [String] { entries.map(\.key) }
    /// True with no members.
    public var isEmpty: Bool { entries.isEmpty }

    /// Gets a member; setting nil removes it, setting a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get { entries.first(where: { $0.key == key })?.value }
        set {
            if let i = entries.firstIndex(where: { $0.key == key }) {
                if let v = newValue { entries[i].value = v } else { entries.remove(at: i) }
            } else if let v = newValue {
                entries.append((key, v))
            }
        }
    }

    /// Same members in the same order.
    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        a.entries.count == b.entries.count
            && zip(a.entries, b.entries).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral
{
    /// A string.
    public init(stringLiteral v: String) { self = .string(v) }
    /// An integer.
    public init(integerLiteral v: Int64) { self = .int(v) }
    /// A number.
    public init(floatLiteral v: Double) { self = .double(v) }
    /// A boolean.
    public init(booleanLiteral v: Bool) { self = .bool(v) }
    /// An array.
    public init(arrayLiteral v: JSONValue...) { self = .array(v) }
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue {
    /// Convenience for numbers that may be missing: nil becomes absent, not null (see `JSONObject`).
    public static func number(_ d: Double) -> JSONValue { d.isFinite ? .double(d) : .null }
}
