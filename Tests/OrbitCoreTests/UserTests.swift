import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Users: names and emails, a co-member's public profile")
struct UserTests {
    @Test(
        "names and emails are validated",
        arguments: [
            ("display_name", String(repeating: "x", count: 101)), ("display_name", "bell\u{7}"), ("display_name", "   "),
            ("email", "no-at-sign"), ("email", "a@b"), ("email", "two words@example.com"),
        ])
    func invalidUsers(field: String, value: String) async throws {
        try await withServices { services, _ in
            let error = await serviceError {
                field == "email"
                    ? try await services.users.create(email: value, displayName: "Valid")
                    : try await services.users.create(email: "valid@example.com", displayName: value)
            }
            #expect(error?.code == .invalidInput && error?.field == field)
        }
    }

    @Test("a co-member's public profile shows name and avatar, never the email; strangers see nothing")
    func profile() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let profile = try await services.users.profile(cast.member, as: cast.admin)
            #expect(profile.displayName == "Max Member")
            let json = String(decoding: try JSONEncoder().encode(profile), as: UTF8.self)
            #expect(!json.contains("@example.com"))
            let stranger = await serviceError { try await services.users.profile(cast.member, as: cast.outsider) }
            #expect(stranger?.code == .notFound)
        }
    }
}
