package import Foundation
package import HTTPTypes
package import OpenAPIRuntime

/// Sends an access token (from `POST /auth/dev`, `/auth/apple` or `/auth/refresh`) as
/// `Authorization: Bearer …` on every request.
package struct BearerAuthentication: ClientMiddleware {
    private let accessToken: String

    package init(accessToken: String) {
        self.accessToken = accessToken
    }

    package func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(accessToken)"
        return try await next(request, body, baseURL)
    }
}
