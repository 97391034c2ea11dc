extension RecurrenceRule {
    /// `text` as a service takes it from a client (an event's, a chore's or a feed's series): a
    /// rule that cannot be parsed is invalid input naming its part (`recurrence_rule.BYDAY`).
    static func parsed(_ text: String) throws -> RecurrenceRule {
        do {
            return try RecurrenceRule(parsing: text)
        } catch let error as RecurrenceError {
            throw ServiceError.invalidInput(field: "recurrence_rule.\(error.part)", reason: error.reason)
        }
    }
}
