import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Corrections: an expense's time of day and its receipt image")
struct CorrectionTests {
    @Test("an expense takes a time of day and an uploaded image as its receipt; edits change or clear them; history records them")
    func timeAndReceipt() async throws {
        try await withMediaServices { services, _ in
            let cast = try await Cast.make(services)
            let jpeg = Data([0xFF, 0xD8, 0xFF, 0x00, 0x01])
            let receipt = try await services.media.upload(
                to: cast.community, filename: "receipt.jpg", mimeType: "image/jpeg", data: jpeg, width: 600, height: 800, as: cast.member)
            let pdf = try await services.media.upload(
                to: cast.community, filename: "rules.pdf", mimeType: "application/pdf", data: Data("%PDF-1.7".utf8), as: cast.member)
            let other = try await services.communities.create(name: "Elsewhere", as: cast.member).id
            let elsewhere = try await services.media.upload(
                to: other, filename: "theirs.jpg", mimeType: "image/jpeg", data: jpeg, width: 10, height: 10, as: cast.member)

            let dinner = try await services.expenses.addExpense(
                in: cast.community, description: "Dinner", total: try dollars("60.00"), split: .equal([cast.admin, cast.member]),
                time: "19:30", receiptMedia: receipt.id, as: cast.member)
            #expect(dinner.transactionTime == "19:30" && dinner.receiptMediaID == receipt.id)
            #expect(try await services.expenses.expense(dinner.id, as: cast.admin).receiptMediaID == receipt.id)

            // Not a time; a file that is not an image; an image of another community.
            for bad in ["7:30", "24:00", "19:60", "19:30:00", "ab:cd"] {
                let error = await serviceError { try await services.expenses.updateExpense(dinner.id, time: .some(bad), as: cast.member) }
                #expect(error?.code == .invalidInput && error?.field == "transaction_time", "\(bad): \(String(describing: error))")
            }
            let notImage = await serviceError { try await services.expenses.updateExpense(dinner.id, receiptMedia: .some(pdf.id), as: cast.member) }
            #expect(notImage?.code == .notFound, "\(String(describing: notImage))")
            let foreign = await serviceError {
                try await services.expenses.addExpense(
                    in: cast.community, description: "Taxi", total: try dollars("10.00"), split: .equal([cast.member]),
                    receiptMedia: elsewhere.id, as: cast.member)
            }
            #expect(foreign?.code == .notFound, "\(String(describing: foreign))")

            // An edit changes the time and keeps the receipt; another clears both.
            let later = try await services.expenses.updateExpense(dinner.id, time: .some("21:05"), as: cast.member)
            #expect(later.transactionTime == "21:05" && later.receiptMediaID == receipt.id)
            let cleared = try await services.expenses.updateExpense(dinner.id, time: .some(nil), receiptMedia: .some(nil), as: cast.admin)
            #expect(cleared.transactionTime == nil && cleared.receiptMediaID == nil)
            let history = try await services.expenses.history(in: cast.community, transaction: dinner.id, as: cast.member).items
            #expect(history.contains { $0.before?.transactionTime == "19:30" && $0.after?.transactionTime == "21:05" }, "\(history)")
            #expect(history.contains { $0.before?.receiptMediaID == receipt.id && $0.after?.receiptMediaID == nil })
        }
    }
}
