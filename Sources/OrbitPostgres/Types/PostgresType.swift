/// A PostgreSQL data type, identified by its OID (`pg_type.oid`).
///
/// Only the built-in types this client encodes or decodes have names here; any other OID
/// (an enum, a domain, an extension type) is still carried and printed as `oid <n>`.
public struct PostgresType: Hashable, Sendable, CustomStringConvertible {
    public let oid: UInt32

    public init(oid: UInt32) { self.oid = oid }

    /// Lets the server infer the parameter's type from where it is used (libpq's `0`).
    public static let unspecified = PostgresType(oid: 0)
    public static let bool = PostgresType(oid: 16)
    public static let bytea = PostgresType(oid: 17)
    public static let char = PostgresType(oid: 18)
    public static let name = PostgresType(oid: 19)
    public static let int8 = PostgresType(oid: 20)
    public static let int2 = PostgresType(oid: 21)
    public static let int4 = PostgresType(oid: 23)
    public static let text = PostgresType(oid: 25)
    public static let oidType = PostgresType(oid: 26)
    public static let json = PostgresType(oid: 114)
    public static let xml = PostgresType(oid: 142)
    public static let float4 = PostgresType(oid: 700)
    public static let float8 = PostgresType(oid: 701)
    public static let unknown = PostgresType(oid: 705)
    public static let bpchar = PostgresType(oid: 1042)
    public static let varchar = PostgresType(oid: 1043)
    public static let date = PostgresType(oid: 1082)
    public static let time = PostgresType(oid: 1083)
    public static let timestamp = PostgresType(oid: 1114)
    public static let timestamptz = PostgresType(oid: 1184)
    public static let interval = PostgresType(oid: 1186)
    public static let numeric = PostgresType(oid: 1700)
    public static let uuid = PostgresType(oid: 2950)
    public static let jsonb = PostgresType(oid: 3802)
    /// The result of a function that returns nothing.
    public static let void = PostgresType(oid: 2278)

    public static let boolArray = PostgresType(oid: 1000)
    public static let byteaArray = PostgresType(oid: 1001)
    public static let int2Array = PostgresType(oid: 1005)
    public static let int4Array = PostgresType(oid: 1007)
    public static let textArray = PostgresType(oid: 1009)
    public static let varcharArray = PostgresType(oid: 1015)
    public static let int8Array = PostgresType(oid: 1016)
    public static let float4Array = PostgresType(oid: 1021)
    public static let float8Array = PostgresType(oid: 1022)
    public static let timestampArray = PostgresType(oid: 1115)
    public static let dateArray = PostgresType(oid: 1182)
    public static let timestamptzArray = PostgresType(oid: 1185)
    public static let numericArray = PostgresType(oid: 1231)
    public static let uuidArray = PostgresType(oid: 2951)
    public static let jsonArray = PostgresType(oid: 199)
    public static let jsonbArray = PostgresType(oid: 3807)

    /// Types created by initdb have OIDs below this; enums, domains and extension types created
    /// in a database have OIDs from it on.
    static let firstNormalOID: UInt32 = 16_384

    private static let names: [UInt32: String] = [
        0: "unspecified", 16: "boolean", 17: "bytea", 18: "\"char\"", 19: "name", 20: "bigint",
        21: "smallint", 23: "integer", 25: "text", 26: "oid", 114: "json", 142: "xml", 700: "real",
        701: "double precision", 705: "unknown", 1042: "character", 1043: "character varying",
        1082: "date", 1083: "time", 1114: "timestamp", 1184: "timestamptz", 1186: "interval",
        1700: "numeric", 2278: "void", 2950: "uuid", 3802: "jsonb", 1000: "boolean[]", 1001: "bytea[]",
        1005: "smallint[]", 1007: "integer[]", 1009: "text[]", 1015: "character varying[]",
        1016: "bigint[]", 1021: "real[]", 1022: "double precision[]", 1115: "timestamp[]",
        1182: "date[]", 1185: "timestamptz[]", 1231: "numeric[]", 2951: "uuid[]", 199: "json[]",
        3807: "jsonb[]", 1002: "\"char\"[]", 1003: "name[]", 1014: "character[]", 1028: "oid[]", 1183: "time[]",
        1187: "interval[]", 143: "xml[]",
    ]

    /// The element type of a built-in array type, or `nil` if this is not one of them.
    public var arrayElementType: PostgresType? {
        switch oid {
        case 1000: .bool
        case 1001: .bytea
        case 1002: .char
        case 1003: .name
        case 1014: .bpchar
        case 1028: .oidType
        case 1183: .time
        case 1187: .interval
        case 143: .xml
        case 1005: .int2
        case 1007: .int4
        case 1009: .text
        case 1015: .varchar
        case 1016: .int8
        case 1021: .float4
        case 1022: .float8
        case 1115: .timestamp
        case 1182: .date
        case 1185: .timestamptz
        case 1231: .numeric
        case 2951: .uuid
        case 199: .json
        case 3807: .jsonb
        default: nil
        }
    }

    public var description: String { Self.names[oid] ?? "oid \(oid)" }
}

/// How a value travels: PostgreSQL's text form, or its binary wire form.
public enum PostgresFormat: Int32, Sendable {
    case text = 0
    case binary = 1
}
