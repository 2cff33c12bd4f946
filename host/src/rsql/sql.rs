//! Translation of a parsed filter into a parameterised SQL condition on typed columns. Values are
//! only ever bound, never spliced into the SQL text, and every `?` in the text is a placeholder.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};

use super::parse::{Comparison, Node, Op};
use crate::values::value::parse_iso_timestamp;
use crate::values::{FieldType, Formats, Value};

/// The SQL engine the condition is written for (they differ in pattern matching).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// What a selector names: its column expression and its type.
pub trait Selectors {
    fn lookup(&self, selector: &str) -> Option<(String, FieldType)>;
}

/// A `WHERE` condition and its bound values, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub sql: String,
    pub binds: Vec<Value>,
}

/// Why a filter cannot be applied.
#[derive(Debug, Clone, PartialEq)]
pub enum FilterError {
    /// The selector does not exist (the spec's 422).
    UnknownSelector(String),
    /// The expression is malformed or a value does not fit its field (400).
    Invalid(String),
}

/// Translates `node` for `selectors`, reading dates in the instance's `formats`.
pub fn compile(node: &Node, selectors: &dyn Selectors, formats: &Formats, dialect: Dialect) -> Result<Condition, FilterError> {
    let mut c = Compiler { selectors, formats, dialect, sql: String::new(), binds: Vec::new() };
    c.node(node)?;
    Ok(Condition { sql: c.sql, binds: c.binds })
}

struct Compiler<'a> {
    selectors: &'a dyn Selectors,
    formats: &'a Formats,
    dialect: Dialect,
    sql: String,
    binds: Vec<Value>,
}

impl Compiler<'_> {
    fn node(&mut self, node: &Node) -> Result<(), FilterError> {
        match node {
            Node::And(items) => self.join(items, " AND "),
            Node::Or(items) => self.join(items, " OR "),
            Node::Cmp(cmp) => self.comparison(cmp),
        }
    }

    /// `(a GLUE b GLUE ...)` as a balanced tree of parenthesised halves. Databases parse a flat
    /// chain as a left-deep tree, one level per operand: SQLite refuses a tree deeper than 1000
    /// ("Expression tree is too large") and PostgreSQL recurses once per level. Halving keeps the
    /// depth at log2 of the operands, whatever the parser admits.
    fn join(&mut self, items: &[Node], glue: &str) -> Result<(), FilterError> {
        self.sql.push('(');
        match items {
            [] => self.sql.push_str(if glue == " AND " { "1=1" } else { "1=0" }),
            [one] => self.node(one)?,
            [a, b] => {
                self.node(a)?;
                self.sql.push_str(glue);
                self.node(b)?;
            }
            _ => {
                let (left, right) = items.split_at(items.len() / 2);
                self.join(left, glue)?;
                self.sql.push_str(glue);
                self.join(right, glue)?;
            }
        }
        self.sql.push(')');
        Ok(())
    }

    fn comparison(&mut self, cmp: &Comparison) -> Result<(), FilterError> {
        let (column, ty) = self.selectors.lookup(&cmp.selector).ok_or_else(|| FilterError::UnknownSelector(cmp.selector.clone()))?;
        let has_wildcard = |a: &String| a.contains('*') || a.contains('?');
        if ty == FieldType::String && cmp.args.iter().any(has_wildcard) {
            if cmp.op != Op::Eq {
                return Err(FilterError::Invalid(format!(
                    "wildcards (* and ?) work only with == (field {}, operator {})",
                    cmp.selector,
                    cmp.op.symbol()
                )));
            }
            self.pattern(&column, &cmp.args[0]);
            return Ok(());
        }
        let mut values = Vec::with_capacity(cmp.args.len());
        for arg in &cmp.args {
            values.push(self.argument(&cmp.selector, ty, arg)?);
        }
        match cmp.op {
            Op::In | Op::Out => {
                let negate = cmp.op == Op::Out;
                let values: Vec<Value> = values.into_iter().filter_map(|a| a.exact(ty)).collect();
                if values.is_empty() {
                    self.sql.push_str(if negate { "1=1" } else { "1=0" });
                    return Ok(());
                }
                let marks = vec!["?"; values.len()].join(", ");
                if negate {
                    self.sql.push_str(&format!("({column} NOT IN ({marks}) OR {column} IS NULL)"));
                } else {
                    self.sql.push_str(&format!("{column} IN ({marks})"));
                }
                self.binds.extend(values);
            }
            op => {
                let arg = values.pop().expect("one argument");
                match arg.bound(op, ty) {
                    Bound::Const(true) => self.sql.push_str("1=1"),
                    Bound::Const(false) => self.sql.push_str("1=0"),
                    Bound::Compare(op, value) => {
                        let sql = match op {
                            Op::Ne => format!("({column} <> ? OR {column} IS NULL)"),
                            op => format!("{column} {} ?", sql_operator(op)),
                        };
                        self.sql.push_str(&sql);
                        self.binds.push(value);
                    }
                }
            }
        }
        Ok(())
    }

    /// `==` with wildcards: `*` any run, `?` one character; everything else literal.
    fn pattern(&mut self, column: &str, arg: &str) {
        match self.dialect {
            Dialect::Sqlite => {
                // GLOB is case-sensitive like `==`; only `[` needs escaping besides * and ?.
                let pattern: String = arg.chars().map(|c| if c == '[' { "[[]".to_string() } else { c.to_string() }).collect();
                self.sql.push_str(&format!("{column} GLOB ?"));
                self.binds.push(Value::Text(pattern));
            }
            Dialect::Postgres => {
                let mut pattern = String::new();
                for c in arg.chars() {
                    match c {
                        '*' => pattern.push('%'),
                        '?' => pattern.push('_'),
                        '%' | '_' | '\\' => {
                            pattern.push('\\');
                            pattern.push(c);
                        }
                        c => pattern.push(c),
                    }
                }
                self.sql.push_str(&format!("{column} LIKE ? ESCAPE '\\'"));
                self.binds.push(Value::Text(pattern));
            }
        }
    }

    fn argument(&self, selector: &str, ty: FieldType, arg: &str) -> Result<Argument, FilterError> {
        let invalid = |what: &str| FilterError::Invalid(format!("the value '{arg}' for {selector} is not {what}"));
        Ok(match ty {
            FieldType::String => Argument::Plain(Value::Text(arg.to_string())),
            FieldType::Number => {
                Argument::Plain(Value::Number(arg.parse::<f64>().ok().filter(|f| f.is_finite()).ok_or_else(|| invalid("a NUMBER"))?))
            }
            FieldType::Boolean => match arg.to_ascii_lowercase().as_str() {
                "true" => Argument::Plain(Value::Bool(true)),
                "false" => Argument::Plain(Value::Bool(false)),
                _ => return Err(invalid("a BOOLEAN (true or false)")),
            },
            FieldType::Date | FieldType::Timestamp => {
                let ts = parse_filter_instant(arg, ty, self.formats).ok_or_else(|| {
                    invalid(&format!(
                        "a date-time (RFC 3339, e.g. 2024-01-31T00:00:00Z, or '{}')",
                        if ty == FieldType::Date { self.formats.date.source() } else { self.formats.timestamp.source() }
                    ))
                })?;
                Argument::Instant(ts)
            }
        })
    }
}

/// Reads a date-time filter argument: the instance's own format first (the spec's rule for a
/// format that conflicts with RFC 3339), then RFC 3339 (`Z` or an offset), then ISO dates.
pub fn parse_filter_instant(arg: &str, ty: FieldType, formats: &Formats) -> Option<NaiveDateTime> {
    let own = match ty {
        FieldType::Date => formats.date.parse_date(arg).map(|d| d.and_time(NaiveTime::MIN)),
        _ => formats.timestamp.parse_timestamp(arg),
    };
    own.or_else(|| parse_iso_timestamp(arg))
        .or_else(|| formats.date.parse_date(arg).map(|d| d.and_time(NaiveTime::MIN)))
        .or_else(|| NaiveDate::parse_from_str(arg, "%Y-%m-%d").ok().map(|d| d.and_time(NaiveTime::MIN)))
}

fn sql_operator(op: Op) -> &'static str {
    match op {
        Op::Eq => "=",
        Op::Ne => "<>",
        Op::Lt => "<",
        Op::Le => "<=",
        Op::Gt => ">",
        Op::Ge => ">=",
        Op::In | Op::Out => unreachable!("lists are compiled apart"),
    }
}

enum Argument {
    Plain(Value),
    Instant(NaiveDateTime),
}

enum Bound {
    Const(bool),
    Compare(Op, Value),
}

impl Argument {
    /// The value to compare a column of type `ty` with, for `op`. A DATE column compared with an
    /// instant that is not midnight is compared with its day, so that `BIRTHDATE < 2000-01-01T12:00Z`
    /// includes 1 January 2000, and `==` can never hold.
    fn bound(self, op: Op, ty: FieldType) -> Bound {
        match self {
            Argument::Plain(v) => Bound::Compare(op, v),
            Argument::Instant(ts) if ty == FieldType::Timestamp => Bound::Compare(op, Value::Timestamp(ts)),
            Argument::Instant(ts) => {
                let day = Value::Date(ts.date());
                if ts.time() == NaiveTime::MIN {
                    return Bound::Compare(op, day);
                }
                match op {
                    Op::Eq => Bound::Const(false),
                    Op::Ne => Bound::Const(true),
                    Op::Lt | Op::Le => Bound::Compare(Op::Le, day),
                    Op::Gt | Op::Ge => Bound::Compare(Op::Gt, day),
                    Op::In | Op::Out => unreachable!("lists are compiled apart"),
                }
            }
        }
    }

    /// The value for list membership: an instant that is not a whole day cannot equal a DATE.
    fn exact(self, ty: FieldType) -> Option<Value> {
        match self {
            Argument::Plain(v) => Some(v),
            Argument::Instant(ts) if ty == FieldType::Timestamp => Some(Value::Timestamp(ts)),
            Argument::Instant(ts) => (ts.time() == NaiveTime::MIN).then(|| Value::Date(ts.date())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rsql::parse;

    struct Fields;
    impl Selectors for Fields {
        fn lookup(&self, s: &str) -> Option<(String, FieldType)> {
            let ty = match s {
                "CITY" | "EMAIL" => FieldType::String,
                "AGE" => FieldType::Number,
                "OPTIN" => FieldType::Boolean,
                "BIRTHDATE" => FieldType::Date,
                "CREATED_AT" => FieldType::Timestamp,
                _ => return None,
            };
            Some((format!("\"{s}\""), ty))
        }
    }

    fn sql(filter: &str, dialect: Dialect) -> Result<Condition, FilterError> {
        let formats = Formats::new("dd.MM.yyyy", "dd.MM.yyyy HH:mm:ss").unwrap();
        compile(&parse(filter).unwrap(), &Fields, &formats, dialect)
    }

    /// The deepest parenthesis nesting and the most AND/OR operators directly inside one pair of
    /// parentheses: a database's parse tree is about as deep as their product.
    fn shape(sql: &str) -> (usize, usize) {
        let (mut deepest, mut widest, mut glue_per_level) = (0, 0, vec![0usize]);
        for token in sql.split(' ') {
            if token == "AND" || token == "OR" {
                *glue_per_level.last_mut().unwrap() += 1;
                widest = widest.max(*glue_per_level.last().unwrap());
            }
            for c in token.chars() {
                match c {
                    '(' => glue_per_level.push(0),
                    ')' => {
                        glue_per_level.pop();
                    }
                    _ => {}
                }
                deepest = deepest.max(glue_per_level.len() - 1);
            }
        }
        (deepest, widest)
    }

    #[test]
    fn long_chains_compile_to_shallow_trees() {
        let c = sql(&vec!["AGE==1"; 1000].join(" and "), Dialect::Sqlite).unwrap();
        assert_eq!(c.binds.len(), 1000);
        let (deep, wide) = shape(&c.sql);
        assert!(deep <= 11 && wide == 1, "depth {deep}, widest {wide}");
        assert_eq!(shape(&format!("({})", ["x"; 5].join(" AND "))), (1, 4), "the measure sees a flat chain");
    }

    #[test]
    fn binds_never_splices() {
        let c = sql("CITY=='x\\' OR 1=1 --' and AGE>=18", Dialect::Sqlite).unwrap();
        assert_eq!(c.sql, "(\"CITY\" = ? AND \"AGE\" >= ?)");
        assert_eq!(c.binds, vec![Value::Text("x' OR 1=1 --".into()), Value::Number(18.0)]);
    }

    #[test]
    fn wildcards_per_dialect() {
        let c = sql("EMAIL==*_1%@ex[a]mple.com", Dialect::Sqlite).unwrap();
        assert_eq!(c.sql, "\"EMAIL\" GLOB ?");
        assert_eq!(c.binds, vec![Value::Text("*_1%@ex[[]a]mple.com".into())]);
        let c = sql("EMAIL==a?_%*", Dialect::Postgres).unwrap();
        assert_eq!(c.sql, "\"EMAIL\" LIKE ? ESCAPE '\\'");
        assert_eq!(c.binds, vec![Value::Text("a_\\_\\%%".into())]);
        assert!(matches!(sql("EMAIL!=*x", Dialect::Sqlite), Err(FilterError::Invalid(_))));
        assert!(matches!(sql("EMAIL=in=(a*,b)", Dialect::Sqlite), Err(FilterError::Invalid(_))));
    }

    #[test]
    fn types_are_checked() {
        assert_eq!(sql("NOPE==1", Dialect::Sqlite), Err(FilterError::UnknownSelector("NOPE".into())));
        match sql("AGE==abc", Dialect::Sqlite) {
            Err(FilterError::Invalid(m)) => assert!(m.contains("AGE") && m.contains("NUMBER"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(sql("OPTIN==yes", Dialect::Sqlite), Err(FilterError::Invalid(_))));
        assert!(matches!(sql("BIRTHDATE<'soon'", Dialect::Sqlite), Err(FilterError::Invalid(_))));
    }

    #[test]
    fn dates_and_instants() {
        let c = sql("CREATED_AT>'2024-01-01T02:00:00+02:00'", Dialect::Sqlite).unwrap();
        let midnight = NaiveDate::from_ymd_opt(2024, 1, 1).unwrap().and_time(NaiveTime::MIN);
        assert_eq!(c.binds, vec![Value::Timestamp(midnight)]);
        let c = sql("BIRTHDATE<'2000-01-01T12:00:00Z'", Dialect::Sqlite).unwrap();
        assert_eq!(c.sql, "\"BIRTHDATE\" <= ?");
        let c = sql("BIRTHDATE=='2000-01-01T12:00:00Z'", Dialect::Sqlite).unwrap();
        assert_eq!(c.sql, "1=0");
        let c = sql("BIRTHDATE=='24.12.1990'", Dialect::Sqlite).unwrap();
        assert_eq!(c.binds, vec![Value::Date(NaiveDate::from_ymd_opt(1990, 12, 24).unwrap())]);
    }

    #[test]
    fn not_equal_includes_empty_fields() {
        let c = sql("CITY!=Paris", Dialect::Sqlite).unwrap();
        assert_eq!(c.sql, "(\"CITY\" <> ? OR \"CITY\" IS NULL)");
        let c = sql("CITY=out=(Paris,Lyon)", Dialect::Sqlite).unwrap();
        assert_eq!(c.sql, "(\"CITY\" NOT IN (?, ?) OR \"CITY\" IS NULL)");
    }
}
