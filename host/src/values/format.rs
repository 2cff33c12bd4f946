//! Date and timestamp patterns in the platform's notation (`dd.MM.yyyy HH:mm:ss`, Java style),
//! translated once into chrono's strftime notation.

use chrono::{NaiveDate, NaiveDateTime};

/// A validated date or timestamp pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    source: String,
    strftime: String,
}

impl Pattern {
    /// Translates a Java-style pattern. Supported letters: `yyyy yy MM dd HH mm ss SSS`; text in
    /// single quotes is literal; any other character is literal.
    pub fn parse(source: &str) -> Result<Pattern, String> {
        let mut strftime = String::new();
        let chars: Vec<char> = source.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '\'' {
                let end =
                    chars[i + 1..].iter().position(|&q| q == '\'').ok_or_else(|| format!("unterminated quote in pattern '{source}'"))?;
                for &l in &chars[i + 1..i + 1 + end] {
                    push_literal(&mut strftime, l);
                }
                i += end + 2;
                continue;
            }
            if !c.is_ascii_alphabetic() {
                push_literal(&mut strftime, c);
                i += 1;
                continue;
            }
            let run = chars[i..].iter().take_while(|&&d| d == c).count();
            let spec = match (c, run) {
                ('y', 4) => "%Y",
                ('y', 2) => "%y",
                ('M', 2) => "%m",
                ('d', 2) => "%d",
                ('H', 2) => "%H",
                ('m', 2) => "%M",
                ('s', 2) => "%S",
                ('S', 3) => "%3f",
                _ => {
                    return Err(format!(
                        "unsupported element '{}' in pattern '{source}' (use yyyy, yy, MM, dd, HH, mm, ss, SSS)",
                        c.to_string().repeat(run)
                    ))
                }
            };
            strftime.push_str(spec);
            i += run;
        }
        Ok(Pattern { source: source.to_string(), strftime })
    }

    /// The pattern as the operator wrote it.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The date in this pattern. A pattern with time elements cannot show a date (chrono's
    /// formatter fails, and `to_string` would panic): such a date is shown in ISO 8601 instead.
    /// Models only give date patterns to dates (`is_date_only`); this keeps any other use safe.
    pub fn format_date(&self, date: NaiveDate) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        match write!(out, "{}", date.format(&self.strftime)) {
            Ok(()) => out,
            Err(_) => date.format("%Y-%m-%d").to_string(),
        }
    }

    pub fn format_timestamp(&self, ts: NaiveDateTime) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        match write!(out, "{}", ts.format(&self.strftime)) {
            Ok(()) => out,
            Err(_) => ts.format("%Y-%m-%dT%H:%M:%S").to_string(),
        }
    }

    pub fn parse_date(&self, text: &str) -> Option<NaiveDate> {
        NaiveDate::parse_from_str(text, &self.strftime).ok()
    }

    pub fn parse_timestamp(&self, text: &str) -> Option<NaiveDateTime> {
        NaiveDateTime::parse_from_str(text, &self.strftime).ok()
    }

    /// A regular expression (ECMA 262, as JSON Schema's `pattern`) that the pattern's texts match:
    /// what a client may send and what Herald writes.
    pub fn regex(&self) -> String {
        let mut out = String::from("^");
        let mut chars = self.strftime.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                // Only the metacharacters: ECMA 262's unicode mode refuses other escapes.
                if "\\^$.|?*+()[]{}/".contains(c) {
                    out.push('\\');
                }
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('Y') => out.push_str("[0-9]{4}"),
                Some('3') => {
                    chars.next();
                    out.push_str("[0-9]{3}");
                }
                Some('%') => out.push('%'),
                _ => out.push_str("[0-9]{2}"),
            }
        }
        out.push('$');
        out
    }

    /// True when the pattern only holds date elements (used to check `date_format`).
    pub fn is_date_only(&self) -> bool {
        !["%H", "%M", "%S", "%3f"].iter().any(|s| self.strftime.contains(s))
    }
}

fn push_literal(out: &mut String, c: char) {
    if c == '%' {
        out.push_str("%%");
    } else {
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_formats_round_trip() {
        let d = Pattern::parse("dd.MM.yyyy").unwrap();
        let date = d.parse_date("31.01.2024").unwrap();
        assert_eq!(date, NaiveDate::from_ymd_opt(2024, 1, 31).unwrap());
        assert_eq!(d.format_date(date), "31.01.2024");
        assert!(d.is_date_only());
        let t = Pattern::parse("dd.MM.yyyy HH:mm:ss").unwrap();
        let ts = t.parse_timestamp("01.02.2024 13:04:05").unwrap();
        assert_eq!(t.format_timestamp(ts), "01.02.2024 13:04:05");
        assert!(!t.is_date_only());
    }

    #[test]
    fn the_regex_matches_what_the_pattern_writes() {
        assert_eq!(Pattern::parse("dd.MM.yyyy").unwrap().regex(), "^[0-9]{2}\\.[0-9]{2}\\.[0-9]{4}$");
        assert_eq!(
            Pattern::parse("yyyy-MM-dd'T'HH:mm:ss.SSS'%'").unwrap().regex(),
            "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}%$"
        );
    }

    #[test]
    fn quoted_literals_and_percent() {
        let p = Pattern::parse("yyyy-MM-dd'T'HH:mm:ss'%'").unwrap();
        let ts = p.parse_timestamp("2024-03-04T05:06:07%").unwrap();
        assert_eq!(p.format_timestamp(ts), "2024-03-04T05:06:07%");
    }

    #[test]
    fn rejects_unknown_letters_and_bad_dates() {
        assert!(Pattern::parse("dd.MMM.yyyy").is_err());
        assert!(Pattern::parse("EEE dd").is_err());
        assert!(Pattern::parse("'open").is_err());
        let d = Pattern::parse("dd.MM.yyyy").unwrap();
        assert!(d.parse_date("31.02.2024").is_none());
        assert!(d.parse_date("2024-01-31").is_none());
    }
}
