/// A SQL file cut into its statements, each with the line it starts on, so that a failure can
/// name the line. Understands `--` and nested `/* */` comments, '…' strings (with '' and, in
/// E'…' strings, backslash escapes), "…" identifiers and $tag$…$tag$ bodies. A `;` outside
/// those ends a statement. (SQL-standard `BEGIN ATOMIC … END` function bodies, which contain
/// bare semicolons, are not supported; write such functions with a $$ body.)
package struct SQLScript: Sendable {
    package struct Statement: Sendable, Equatable {
        /// The statement's text, from its first token to its terminating `;` (excluded).
        package var text: String
        /// The 1-based line of the file where `text` starts.
        package var line: Int
    }

    package let statements: [Statement]

    package init(_ source: String) {
        var statements: [Statement] = []
        let scalars = Array(source.unicodeScalars)
        var index = 0
        var line = 1
        var start: Int?  // index of the current statement's first token
        var startLine = 1

        func isIdentifierScalar(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "_" || scalar == "$" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
        }
        func finishStatement(at end: Int) {
            if let first = start {
                var text = String(String.UnicodeScalarView(scalars[first..<end]))
                while let last = text.unicodeScalars.last, last.properties.isWhitespace { text.unicodeScalars.removeLast() }
                statements.append(Statement(text: text, line: startLine))
            }
            start = nil
        }
        func markStart() {
            if start == nil {
                start = index
                startLine = line
            }
        }
        /// Advances over scalars up to and including `count`, counting newlines.
        func advance(_ count: Int = 1) {
            for _ in 0..<count where index < scalars.count {
                if scalars[index] == "\n" { line += 1 }
                index += 1
            }
        }
        func peek(_ offset: Int) -> Unicode.Scalar? {
            index + offset < scalars.count ? scalars[index + offset] : nil
        }

        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "-" where peek(1) == "-":
                while index < scalars.count, scalars[index] != "\n" { advance() }
            case "/" where peek(1) == "*":
                var depth = 0
                repeat {
                    if scalars[index] == "/", peek(1) == "*" {
                        depth += 1
                        advance(2)
                    } else if scalars[index] == "*", peek(1) == "/" {
                        depth -= 1
                        advance(2)
                    } else {
                        advance()
                    }
                } while depth > 0 && index < scalars.count
            case ";":
                finishStatement(at: index)
                advance()
            case "'":
                markStart()
                let backslashEscapes =
                    index > 0 && (scalars[index - 1] == "E" || scalars[index - 1] == "e")
                    && (index < 2 || !isIdentifierScalar(scalars[index - 2]))
                advance()
                while index < scalars.count {
                    if backslashEscapes, scalars[index] == "\\" {
                        advance(2)
                    } else if scalars[index] == "'" {
                        if peek(1) == "'" { advance(2) } else { advance(); break }
                    } else {
                        advance()
                    }
                }
            case "\"":
                markStart()
                advance()
                while index < scalars.count {
                    if scalars[index] == "\"" {
                        if peek(1) == "\"" { advance(2) } else { advance(); break }
                    } else {
                        advance()
                    }
                }
            case "$" where index == 0 || !isIdentifierScalar(scalars[index - 1]):
                markStart()
                // $tag$ where tag is empty or an identifier not starting with a digit ($1 is a parameter).
                var end = index + 1
                while end < scalars.count, scalars[end] != "$", isIdentifierScalar(scalars[end]) { end += 1 }
                let tagBody = scalars[(index + 1)..<min(end, scalars.count)]
                guard end < scalars.count, scalars[end] == "$",
                    tagBody.first.map({ !("0"..."9").contains($0) }) ?? true
                else {
                    advance()
                    continue
                }
                let tag = Array(scalars[index...end])
                advance(tag.count)
                while index < scalars.count {
                    if scalars[index] == "$", index + tag.count <= scalars.count, Array(scalars[index..<(index + tag.count)]) == tag {
                        advance(tag.count)
                        break
                    }
                    advance()
                }
            default:
                if !scalar.properties.isWhitespace { markStart() }
                advance()
            }
        }
        finishStatement(at: scalars.count)
        self.statements = statements
    }

    /// The file line of character `position` (1-based, as PostgreSQL reports it) of `statement`.
    package static func line(ofPosition position: Int, in statement: Statement) -> Int {
        let prefix = statement.text.unicodeScalars.prefix(max(position - 1, 0))
        return statement.line + prefix.reduce(0) { $0 + ($1 == "\n" ? 1 : 0) }
    }
}
