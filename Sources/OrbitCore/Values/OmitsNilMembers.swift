/// A value whose nil members are left out of its JSON instead of written as `null`.
///
/// A resource writes every key, `null` when empty (docs/api.md), and the API's encoder
/// (`ResponseJSONEncoder`) does that for every synthesized `Encodable`: no type writes its own
/// `encode(to:)` for it. The exceptions conform here: a problem's optional members, the keys a
/// stored document leaves unset (a poll's `closesAt`, community settings), a live event's keys
/// of other types, and `orbitctl`'s summaries.
package protocol OmitsNilMembers: Encodable {}
