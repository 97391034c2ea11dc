import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl device register|list|remove --as U`: a user's APNs device tokens, as the app
/// registers them over HTTP.
struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "A user's APNs device tokens (where their pushes go).", subcommands: [Register.self, List.self, Remove.self])

    struct Register: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register (or refresh) a device token for the acting user; a token another user had moves to them.")
        @Argument(help: "The APNs device token, in hex.") var token: String
        @Option(help: "sandbox (development builds) or production (TestFlight, App Store).") var environment: APNsEnvironment
        @Option(help: "The app's bundle id (the pushes' apns-topic).") var bundleID: String
        @Option(help: "The device's language, e.g. en-US.") var locale: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Device {
            try await services.devices.register(
                token: token, environment: environment, bundleID: bundleID, locale: locale, as: actor)
        }

        func tell(_ device: Device) {
            print("Registered device \(device.token) (\(device.environment)).")
        }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "The acting user's devices, newest first.")
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> [Device] {
            try await services.devices.list(as: actor)
        }

        func tell(_ devices: [Device]) {
            printTable(
                ["TOKEN", "ENVIRONMENT", "BUNDLE", "LOCALE", "UPDATED"],
                devices.map { [$0.token, $0.environment.rawValue, $0.bundleID, $0.locale ?? "", show($0.updatedAt)] })
        }
    }

    struct Remove: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Remove one of the acting user's device tokens.")
        @Argument(help: "The APNs device token, in hex.") var token: String
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            try await services.devices.remove(token: token, as: actor)
            return DoneOutput(id: token, removed: true)
        }

        func tell(_ done: DoneOutput) {
            print("Removed device \(token).")
        }
    }
}
