import Testing

@testable import OrbitMigrations

@Suite("SQL scripts are cut into statements at the right places")
struct SQLScriptTests {
    @Test("plain statements, with the line each starts on")
    func plainStatements() {
        let script = SQLScript("CREATE TABLE a (x int);\n\n-- comment; not a statement\nINSERT INTO a VALUES (1);\n")
        #expect(
            script.statements == [
                .init(text: "CREATE TABLE a (x int)", line: 1),
                .init(text: "INSERT INTO a VALUES (1)", line: 4),
            ])
    }

    @Test("semicolons inside strings, identifiers, comments and dollar quotes do not end a statement")
    func quotedSemicolons() {
        let source = """
            SELECT 'a;b', "c;d", E'it\\'s;', 'don''t;' /* x; /* nested; */ y; */ ;
            CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $body$
            BEGIN
                RETURN 1; -- inside the body
            END
            $body$;
            DO $$ BEGIN PERFORM 1; END $$;
            SELECT $1::int
            """
        let statements = SQLScript(source).statements
        #expect(statements.count == 4)
        #expect(statements.map(\.line) == [1, 2, 7, 8])
        #expect(statements[1].text.hasSuffix("$body$"))
        #expect(statements[3].text == "SELECT $1::int")
    }

    @Test("a file of comments only has no statements")
    func onlyComments() {
        #expect(SQLScript("-- nothing\n/* here */\n\n").statements.isEmpty)
    }

    @Test("a server position inside a statement maps to the file's line")
    func positionToLine() {
        let statement = SQLScript("\n\nSELECT 1,\n  nosuchcolumn\nFROM t;").statements[0]
        #expect(statement.line == 3)
        let position = Array(statement.text.unicodeScalars).firstIndex(of: "n")! + 1
        #expect(SQLScript.line(ofPosition: position, in: statement) == 4)
        #expect(SQLScript.line(ofPosition: 1, in: statement) == 3)
    }
}
