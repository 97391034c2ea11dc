package import Foundation
package import OpenAPIRuntime
import OpenAPIURLSession

extension Client {
    /// A client of the OrbitCove API at `serverURL` over URLSession, signed in when given an
    /// access token. Timestamps are RFC 3339 with milliseconds, as the server writes them.
    package init(serverURL: URL, accessToken: String? = nil) {
        self.init(
            serverURL: serverURL,
            configuration: Configuration(dateTranscoder: .iso8601WithFractionalSeconds),
            transport: URLSessionTransport(),
            middlewares: accessToken.map { [BearerAuthentication(accessToken: $0)] } ?? []
        )
    }
}
