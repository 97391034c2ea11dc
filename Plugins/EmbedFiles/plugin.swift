import Foundation
import PackagePlugin

/// Builds files of the package into the target that uses it, so an installed `orbitctl` needs
/// no files beside it: `migrations/` and `sql/` into OrbitMigrations (`EmbeddedSQLFiles`),
/// `openapi.yaml` into OrbitAPI (`EmbeddedAPIFiles`), and the catalogs of `catalogs/` (the
/// notifications' texts per language) into OrbitCore (`EmbeddedCatalogs`).
@main
struct EmbedFiles: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let root = context.package.directoryURL
        let typeName: String
        let inputs: [URL]
        switch target.name {
        case "OrbitAPI":
            typeName = "EmbeddedAPIFiles"
            inputs = [root.appending(path: "openapi.yaml").standardizedFileURL]
        case "OrbitCore":
            typeName = "EmbeddedCatalogs"
            inputs = try files(under: root.appending(path: "catalogs"), extension: "json")
        default:
            typeName = "EmbeddedSQLFiles"
            inputs = try ["migrations", "sql"].flatMap { try files(under: root.appending(path: $0), extension: "sql") }
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "\(typeName).swift")
        let relativePaths = inputs.map { String($0.path.dropFirst(root.path.count + 1)) }
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) files into \(target.name)",
                executable: try context.tool(named: "embed-files").url,
                arguments: [root.path, output.path, typeName] + relativePaths,
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }

    /// Every file with the extension below `directory` (sub-folders too, such as `sql/seed/`), in a stable order.
    private func files(under directory: URL, extension pathExtension: String) throws -> [URL] {
        guard let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else {
            return []
        }
        return enumerator.compactMap { $0 as? URL }
            .filter { $0.pathExtension == pathExtension }
            .map { $0.standardizedFileURL }
            .sorted { $0.path < $1.path }
    }
}
