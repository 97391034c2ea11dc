import Foundation
public import Logging

/// One JSON object per line on standard error: time, level, label, message and metadata
/// (request id, user id, route, status…). Nothing logs headers, bodies or tokens.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String

    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            object[key] = value.description
        }
        object["time"] = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
        object["level"] = event.level.rawValue
        object["label"] = label
        object["message"] = event.message.description
        // A [String: String] always encodes.
        guard var line = try? ResponseJSONEncoder.encode(object) else { return }
        line.append(0x0A)
        FileHandle.standardError.write(Data(line))
    }
}
