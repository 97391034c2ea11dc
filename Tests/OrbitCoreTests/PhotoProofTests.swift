import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Photo proof: a completion carries a photo, from a child's device too; a chore may require one", .serialized)
struct PhotoProofTests {
    @Test(
        "a child uploads a photo on their device and marks the chore done with it; the parent sees it before approving; a chore that needs one refuses none"
    )
    func photoProof() async throws {
        try await withMediaServices { services, _ in
            let family = try await Cast.Household.make(services)
            let chores = services.chores
            let mia = try await services.signedInChild(family.mia, in: family.home, guardian: family.mum)
            let nina = try await services.signedInChild(family.nina, in: family.next, guardian: family.neighbour)
            let jpeg = Data([0xFF, 0xD8, 0xFF, 0x00, 0x01])
            let room = try await chores.create(
                .init(title: "Tidy your room", points: 20, assignees: [family.mia.uuid], requiresPhoto: true), in: family.home, as: family.mum)
            #expect(room.requiresPhoto)

            // Without a photo: refused, naming the field.
            let none = await serviceError { try await chores.complete(room.id, as: mia) }
            #expect(none?.code == .conflict && none?.field == "photo_media_id", "\(String(describing: none))")

            // Mia uploads on her device: recorded as her parent's upload, with her id.
            let photo = try await services.media.upload(
                to: family.home, filename: "room.jpg", mimeType: "image/jpeg", data: jpeg, width: 800, height: 600, as: mia)
            #expect(photo.uploadedBy == family.mum && photo.familyMemberID == family.mia)
            // Only images, only in her device's community.
            let pdf = await serviceError {
                try await services.media.upload(to: family.home, filename: "a.pdf", mimeType: "application/pdf", data: Data("%PDF-1.7".utf8), as: mia)
            }
            #expect(pdf?.field == "mime_type")
            let elsewhere = await serviceError {
                try await services.media.upload(to: family.next, filename: "x.jpg", mimeType: "image/jpeg", data: jpeg, as: mia)
            }
            #expect(elsewhere?.code == .notFound)

            // Someone else's image, or one of another community, is no proof.
            let neighbours = try await services.media.upload(
                to: family.next, filename: "n.jpg", mimeType: "image/jpeg", data: jpeg, width: 10, height: 10, as: family.neighbour)
            let foreign = await serviceError { try await chores.complete(room.id, photo: neighbours.id, as: mia) }
            #expect(foreign?.code == .notFound, "\(String(describing: foreign))")

            let done = try await chores.complete(room.id, note: "All clean", photo: photo.id, as: mia)
            #expect(done.status == .pending && done.photoMediaID == photo.id)
            // The parents see it waiting, with the photo, and open the file before approving.
            let waiting = try await chores.completions(in: family.home, pendingOnly: true, as: .user(family.dad)).items
            #expect(waiting.map(\.photoMediaID) == [photo.id])
            let file = try await services.media.file(photo.id, as: family.dad)
            #expect(file.localPath.map { FileManager.default.contents(atPath: $0) } == jpeg)
            #expect(try await chores.review(done.id, approve: true, as: family.dad).photoMediaID == photo.id)

            // Mia sees her own upload; another child, the neighbour, and Mia another's upload, do not.
            #expect(try await services.media.file(photo.id, as: mia).media.id == photo.id)
            let other = await serviceError { try await services.media.file(photo.id, as: nina) }
            #expect(other?.code == .notFound)
            let neighbour = await serviceError { try await services.media.file(photo.id, as: family.neighbour) }
            #expect(neighbour?.code == .notFound)
            let dadsPhoto = try await services.media.upload(
                to: family.home, filename: "d.jpg", mimeType: "image/jpeg", data: jpeg, width: 10, height: 10, as: family.dad)
            let notHers = await serviceError { try await services.media.file(dadsPhoto.id, as: mia) }
            #expect(notHers?.code == .notFound)

            // A chore that needs none takes one all the same; the need is changed with the chore.
            let bins = try await chores.create(.init(title: "Bins", points: 5, assignees: [family.mia.uuid]), in: family.home, as: family.mum)
            #expect(try await chores.complete(bins.id, as: mia).photoMediaID == nil)
            let changed = try await chores.update(room.id, .init(requiresPhoto: false), as: family.mum)
            #expect(!changed.requiresPhoto)
        }
    }

    @Test(
        "a family member's avatar by upload: an image their parent uploaded, or they did on their device; not another's, not a PDF, only by the parent"
    )
    func avatars() async throws {
        try await withMediaServices { services, database in
            let family = try await Cast.Household.make(services)
            let mia = try await services.signedInChild(family.mia, in: family.home, guardian: family.mum)
            let jpeg = Data([0xFF, 0xD8, 0xFF, 0x00, 0x01])
            func image(as principal: Principal) async throws -> Media {
                try await services.media.upload(
                    to: family.home, filename: "face.jpg", mimeType: "image/jpeg", data: jpeg, width: 64, height: 64, as: principal)
            }
            let mums = try await image(as: .user(family.mum))
            let before = try await services.family.member(family.mia, as: family.mum)
            let set = try await services.family.setAvatar(family.mia, to: mums.id, as: family.mum)
            #expect(
                set.avatarMediaID == mums.id && set.avatarURL?.contains(mums.id.description) == true && set.updatedAt > before.updatedAt, "\(set)")
            // Mia's own photo from her device is her parent's upload: it may be her avatar too.
            let selfie = try await image(as: mia)
            #expect(try await services.family.setAvatar(family.mia, to: selfie.id, as: family.mum).avatarMediaID == selfie.id)
            // Dad's image, a PDF, or Dad setting Mia's avatar: refused.
            let dads = try await image(as: .user(family.dad))
            let notMums = await serviceError { try await services.family.setAvatar(family.mia, to: dads.id, as: family.mum) }
            #expect(notMums?.code == .conflict && notMums?.field == "media_id")
            let pdf = try await services.media.upload(
                to: family.home, filename: "a.pdf", mimeType: "application/pdf", data: Data("%PDF-1.7".utf8), as: family.mum)
            let document = await serviceError { try await services.family.setAvatar(family.mia, to: pdf.id, as: family.mum) }
            #expect(document?.field == "media_id")
            let byDad = await serviceError { try await services.family.setAvatar(family.mia, to: dads.id, as: family.dad) }
            #expect(byDad?.code == .notFound)
            // The database refuses another's image whoever writes.
            let direct = await #expect(throws: PostgresError.self) {
                try await database.withConnection { connection in
                    try await connection.query("UPDATE family_members SET avatar_media_id = \(dads.id) WHERE id = \(family.mia)")
                }
            }
            #expect(direct?.constraint == "family_members_avatar_media")
            let cleared = try await services.family.setAvatar(family.mia, to: nil, as: family.mum)
            #expect(cleared.avatarMediaID == nil && cleared.avatarURL == nil)
        }
    }
}
