//! The filter grammar of the spec (RSQL):
//!
//! ```text
//! or         = and { ("or" | ",") and }
//! and        = primary { ("and" | ";") primary }
//! primary    = "(" or ")" | comparison
//! comparison = selector operator argument
//! operator   = "==" | "!=" | "<" | "<=" | ">" | ">=" | "=in=" | "=out=" | "=lt=" | "=le=" | "=gt=" | "=ge=" | "=ne=" | "=eq="
//! argument   = value | "(" value { ("or" | ",") value } ")"      (lists only after =in= / =out=)
//! value      = 'single quoted' | "double quoted" | unreserved run
//! ```
//!
//! Pure and bounded: the input length, nesting depth, number of comparisons and list lengths are
//! capped, so hostile input costs at most linear time and never overflows the stack.

use std::fmt;

/// Longest filter accepted, in bytes.
pub const MAX_FILTER_LEN: usize = 64 * 1024;
/// Deepest nesting of parentheses.
pub const MAX_DEPTH: usize = 32;
/// Most comparisons in one filter.
pub const MAX_COMPARISONS: usize = 1000;
/// Most values in one `=in=` list.
pub const MAX_LIST_LEN: usize = 1000;
/// Most values in one filter, lists included: every value is a bound parameter, and a statement
/// binds at most 32766 (SQLite) or 65535 (PostgreSQL), with room left for the query's own.
pub const MAX_VALUES: usize = 10_000;
/// Longest value: longer ones are no customer's data, and SQLite refuses patterns beyond 50,000
/// bytes ("LIKE or GLOB pattern too complex").
pub const MAX_VALUE_LEN: usize = 4096;

/// A parsed filter.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    And(Vec<Node>),
    Or(Vec<Node>),
    Cmp(Comparison),
}

/// `selector operator argument(s)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub selector: String,
    pub op: Op,
    pub args: Vec<String>,
}

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Out,
}

impl Op {
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::In => "=in=",
            Op::Out => "=out=",
        }
    }
}

/// Where and why a filter could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based character position.
    pub position: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid filter at character {}: {}", self.position, self.message)
    }
}

fn is_reserved(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\'' | '"' | '(' | ')' | ';' | ',' | '=' | '!' | '~' | '<' | '>')
}

/// Parses a filter expression.
pub fn parse(input: &str) -> Result<Node, ParseError> {
    if input.len() > MAX_FILTER_LEN {
        return Err(ParseError { position: 1, message: format!("longer than {MAX_FILTER_LEN} bytes") });
    }
    if let Some(at) = input.chars().position(|c| c == '\0') {
        return Err(ParseError { position: at + 1, message: "the NUL character (U+0000) cannot appear in a filter".into() });
    }
    let mut p = Parser { chars: input.chars().collect(), pos: 0, comparisons: 0, values: 0 };
    p.skip_ws();
    if p.at_end() {
        return Err(p.error("the filter is empty"));
    }
    let node = p.or(0)?;
    p.skip_ws();
    if !p.at_end() {
        return Err(p.error(&format!("unexpected '{}'", p.chars[p.pos])));
    }
    Ok(node)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    comparisons: usize,
    values: usize,
}

impl Parser {
    fn error(&self, message: &str) -> ParseError {
        ParseError { position: self.pos + 1, message: message.to_string() }
    }

    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars().enumerate().all(|(i, c)| self.chars.get(self.pos + i) == Some(&c))
    }

    /// Consumes the keyword `word` (any case) when it stands alone: followed by white space,
    /// a parenthesis, a quote or the end of the filter.
    fn keyword(&mut self, word: &str) -> bool {
        let n = word.chars().count();
        if self.pos + n > self.chars.len() {
            return false;
        }
        let candidate: String = self.chars[self.pos..self.pos + n].iter().collect();
        if !candidate.eq_ignore_ascii_case(word) {
            return false;
        }
        match self.chars.get(self.pos + n) {
            None => {
                self.pos += n;
                true
            }
            Some(c) if c.is_whitespace() || matches!(c, '(' | '\'' | '"') => {
                self.pos += n;
                true
            }
            _ => false,
        }
    }

    fn or(&mut self, depth: usize) -> Result<Node, ParseError> {
        let mut items = vec![self.and(depth)?];
        loop {
            self.skip_ws();
            if self.peek() == Some(',') {
                self.pos += 1;
            } else if !self.keyword("or") {
                break;
            }
            items.push(self.and(depth)?);
        }
        Ok(if items.len() == 1 { items.pop().unwrap() } else { Node::Or(items) })
    }

    fn and(&mut self, depth: usize) -> Result<Node, ParseError> {
        let mut items = vec![self.primary(depth)?];
        loop {
            self.skip_ws();
            if self.peek() == Some(';') {
                self.pos += 1;
            } else if !self.keyword("and") {
                break;
            }
            items.push(self.primary(depth)?);
        }
        Ok(if items.len() == 1 { items.pop().unwrap() } else { Node::And(items) })
    }

    fn primary(&mut self, depth: usize) -> Result<Node, ParseError> {
        self.skip_ws();
        if self.peek() == Some('(') {
            if depth >= MAX_DEPTH {
                return Err(self.error(&format!("parentheses nested deeper than {MAX_DEPTH}")));
            }
            self.pos += 1;
            let node = self.or(depth + 1)?;
            self.skip_ws();
            if self.peek() != Some(')') {
                return Err(self.error("expected ')'"));
            }
            self.pos += 1;
            return Ok(node);
        }
        self.comparison().map(Node::Cmp)
    }

    fn comparison(&mut self) -> Result<Comparison, ParseError> {
        self.comparisons += 1;
        if self.comparisons > MAX_COMPARISONS {
            return Err(self.error(&format!("more than {MAX_COMPARISONS} comparisons")));
        }
        let start = self.pos;
        while self.peek().is_some_and(|c| !is_reserved(c)) {
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error(match self.peek() {
                None => "expected a selector, found the end of the filter",
                Some(_) => "expected a selector",
            }));
        }
        let selector: String = self.chars[start..self.pos].iter().collect();
        self.skip_ws();
        let op = self.operator()?;
        self.skip_ws();
        let args = if matches!(op, Op::In | Op::Out) { self.list()? } else { vec![self.value()?] };
        Ok(Comparison { selector, op, args })
    }

    fn operator(&mut self) -> Result<Op, ParseError> {
        const OPERATORS: [(&str, Op); 14] = [
            ("==", Op::Eq),
            ("!=", Op::Ne),
            ("<=", Op::Le),
            (">=", Op::Ge),
            ("<", Op::Lt),
            (">", Op::Gt),
            ("=in=", Op::In),
            ("=out=", Op::Out),
            ("=lt=", Op::Lt),
            ("=le=", Op::Le),
            ("=gt=", Op::Gt),
            ("=ge=", Op::Ge),
            ("=ne=", Op::Ne),
            ("=eq=", Op::Eq),
        ];
        for (text, op) in OPERATORS {
            if self.starts_with(text) {
                self.pos += text.chars().count();
                return Ok(op);
            }
        }
        Err(self.error("expected an operator (==, !=, <, <=, >, >=, =in=)"))
    }

    fn list(&mut self) -> Result<Vec<String>, ParseError> {
        if self.peek() != Some('(') {
            return Err(self.error("expected '(' opening the list of values"));
        }
        self.pos += 1;
        let mut values = Vec::new();
        loop {
            self.skip_ws();
            values.push(self.value()?);
            if values.len() > MAX_LIST_LEN {
                return Err(self.error(&format!("more than {MAX_LIST_LEN} values in a list")));
            }
            self.skip_ws();
            if self.peek() == Some(')') {
                self.pos += 1;
                return Ok(values);
            }
            if self.peek() == Some(',') {
                self.pos += 1;
            } else if !self.keyword("or") {
                return Err(self.error("expected ',', 'or' or ')' in the list of values"));
            }
        }
    }

    /// One value, counted against the filter's bounds.
    fn value(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        let value = self.raw_value()?;
        self.values += 1;
        if self.values > MAX_VALUES {
            return Err(self.error(&format!("more than {MAX_VALUES} values")));
        }
        if value.len() > MAX_VALUE_LEN {
            self.pos = start;
            return Err(self.error(&format!("a value longer than {MAX_VALUE_LEN} bytes")));
        }
        Ok(value)
    }

    fn raw_value(&mut self) -> Result<String, ParseError> {
        match self.peek() {
            Some(q @ ('\'' | '"')) => {
                let open = self.pos;
                self.pos += 1;
                let mut out = String::new();
                loop {
                    match self.peek() {
                        None => {
                            self.pos = open;
                            return Err(self.error("unterminated quoted value"));
                        }
                        Some('\\') if self.chars.get(self.pos + 1).is_some() => {
                            out.push(self.chars[self.pos + 1]);
                            self.pos += 2;
                        }
                        Some(c) if c == q => {
                            self.pos += 1;
                            break;
                        }
                        Some(c) => {
                            out.push(c);
                            self.pos += 1;
                        }
                    }
                }
                if out.is_empty() {
                    self.pos = open;
                    return Err(self.error("the value is empty"));
                }
                Ok(out)
            }
            _ => {
                let start = self.pos;
                while self.peek().is_some_and(|c| !is_reserved(c)) {
                    self.pos += 1;
                }
                if self.pos == start {
                    return Err(self.error("expected a value"));
                }
                Ok(self.chars[start..self.pos].iter().collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(selector: &str, op: Op, args: &[&str]) -> Node {
        Node::Cmp(Comparison { selector: selector.into(), op, args: args.iter().map(|s| s.to_string()).collect() })
    }

    #[test]
    fn valid_shapes_of_the_spec() {
        let table: Vec<(&str, Node)> = vec![
            (r#"CITY=="Paris""#, cmp("CITY", Op::Eq, &["Paris"])),
            ("AGE>=18 and AGE<30", Node::And(vec![cmp("AGE", Op::Ge, &["18"]), cmp("AGE", Op::Lt, &["30"])])),
            ("CITY=in=(Paris or Lyon)", cmp("CITY", Op::In, &["Paris", "Lyon"])),
            ("CITY=in=('Paris','Lyon')", cmp("CITY", Op::In, &["Paris", "Lyon"])),
            (
                "(CITY==Paris or CITY==Lyon) and AGE>18",
                Node::And(vec![
                    Node::Or(vec![cmp("CITY", Op::Eq, &["Paris"]), cmp("CITY", Op::Eq, &["Lyon"])]),
                    cmp("AGE", Op::Gt, &["18"]),
                ]),
            ),
            ("EMAIL==*@example.com", cmp("EMAIL", Op::Eq, &["*@example.com"])),
            ("CREATED_AT>'2024-01-01T00:00:00Z'", cmp("CREATED_AT", Op::Gt, &["2024-01-01T00:00:00Z"])),
            (
                "a==1;b==2,c==3",
                Node::Or(vec![Node::And(vec![cmp("a", Op::Eq, &["1"]), cmp("b", Op::Eq, &["2"])]), cmp("c", Op::Eq, &["3"])]),
            ),
            ("NAME=='O\\'Brien'", cmp("NAME", Op::Eq, &["O'Brien"])),
            ("  AGE =gt= 5  ", cmp("AGE", Op::Gt, &["5"])),
            ("VILLE==Zürich", cmp("VILLE", Op::Eq, &["Zürich"])),
        ];
        for (input, expected) in table {
            assert_eq!(parse(input), Ok(expected), "{input}");
        }
    }

    #[test]
    fn and_binds_tighter_than_or() {
        let n = parse("a==1 or b==2 and c==3").unwrap();
        assert_eq!(n, Node::Or(vec![cmp("a", Op::Eq, &["1"]), Node::And(vec![cmp("b", Op::Eq, &["2"]), cmp("c", Op::Eq, &["3"])])]));
    }

    #[test]
    fn invalid_shapes_say_where() {
        let table: Vec<(&str, usize)> = vec![
            ("", 1),
            ("CITY", 5),
            ("CITY==", 7),
            ("CITY=='Paris", 7),
            ("(CITY==Paris", 13),
            ("CITY==Paris)", 12),
            ("==Paris", 1),
            ("CITY=~Paris", 5),
            ("CITY=in=Paris", 9),
            ("CITY=in=(a b)", 12),
            ("CITY==''", 7),
            ("a==1 and", 9),
            ("a==1 xor b==2", 6),
        ];
        for (input, position) in table {
            let err = parse(input).expect_err(input);
            assert_eq!(err.position, position, "{input}: {err}");
        }
    }

    #[test]
    fn hostile_input_is_bounded() {
        let deep = format!("{}a==1{}", "(".repeat(100), ")".repeat(100));
        assert!(parse(&deep).unwrap_err().message.contains("nested"));
        let long = "a==1 or ".repeat(2000) + "a==1";
        assert!(parse(&long).unwrap_err().message.contains("comparisons"));
        assert!(parse(&"x".repeat(MAX_FILTER_LEN + 1)).is_err());
        // Lists within their own bound can still add up to more values than a statement binds.
        let list = format!("a=in=({})", vec!["1"; MAX_LIST_LEN].join(","));
        let many = [list.as_str(); MAX_VALUES / MAX_LIST_LEN + 1].join(";");
        assert!(parse(&many).unwrap_err().message.contains("values"), "total values are bounded");
        let huge = format!("a=='{}'", "x".repeat(MAX_VALUE_LEN + 1));
        let err = parse(&huge).unwrap_err();
        assert!(err.message.contains("longer than") && err.position == 4, "{err}");
    }
}
