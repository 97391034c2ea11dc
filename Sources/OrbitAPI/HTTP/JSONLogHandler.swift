import Foundation
package import Logging

/// One JSON object per line on standard error: time, level, label, message and metadata
/// (request id, user id, route, status…). Nothing logs headers, bodies or tokens.
package struct JSONLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .info
    private let label: String

    package init(label: String) {
        self.label = label
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
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
