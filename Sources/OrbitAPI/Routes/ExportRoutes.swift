import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    /// Export: the community's money as CSV or JSON (docs/money.md, "Export").
    func addExportRoutes(to router: RouterGroup<APIContext>) {
        // The community's money as RFC 4180 CSV (default) or JSON, amounts as decimals.
        router.get("communities/:community_id/export") { request, context in
            let format = request.query("format") ?? "csv"
            guard format == "csv" || format == "json" else { throw APIProblem.validation(field: "format", "format must be csv or json.") }
            let export = try await services.exports.export(
                in: try context.id("community_id"), from: try request.query("from").map { try CivilDate.parse($0, field: "from") },
                to: try request.query("to").map { try CivilDate.parse($0, field: "to") }, as: try context.requireUser())
            if format == "json" { return try APIJSON.response(export, status: .ok) }
            return Response(
                status: .ok,
                headers: [
                    .contentType: "text/csv; charset=utf-8; header=present",
                    .contentDisposition: "attachment; filename=\"orbitcove-\(export.communityID).csv\"",
                ],
                body: ResponseBody(byteBuffer: ByteBuffer(data: try export.csv())))
        }
    }
}
