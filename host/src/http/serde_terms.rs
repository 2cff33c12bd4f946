//! Reading JSON bodies and query strings with messages in the customer's terms: where the problem
//! is (the member or parameter, by name) and what was expected, in words a client's developer
//! uses ("true or false", "a whole number"), never a library's ("Failed to deserialize query
//! string", "invalid type: string ... expected a boolean", "EOF while parsing").

use serde::de::DeserializeOwned;

/// `body` read as JSON into `T`, or what is wrong with it.
pub fn json<T: DeserializeOwned>(body: &[u8]) -> Result<T, String> {
    let mut reader = serde_json::Deserializer::from_slice(body);
    match serde_path_to_error::deserialize(&mut reader) {
        // Nothing but white space may follow the value.
        Ok(value) => reader.end().map(|_| value).map_err(|e| json_problem("", &e)),
        Err(e) => Err(json_problem(&e.path().to_string(), e.inner())),
    }
}

fn json_problem(path: &str, e: &serde_json::Error) -> String {
    let place = format!("line {}, column {}", e.line(), e.column());
    match e.classify() {
        serde_json::error::Category::Eof => format!("the body is not valid JSON: it ends before its value does ({place})"),
        serde_json::error::Category::Syntax => {
            format!("the body is not valid JSON at {place}: {}", syntax(&without_position(&e.to_string())))
        }
        _ => at(path, &expected(&without_position(&e.to_string())), "member"),
    }
}

/// `query` (without the `?`) read into `T`, or what is wrong with it.
pub fn query<T: DeserializeOwned>(query: &str) -> Result<T, String> {
    let reader = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(reader).map_err(|e| at(&e.path().to_string(), &expected(&e.inner().to_string()), "parameter"))
}

/// A message placed at `path` (serde_path_to_error's form; `.` is the whole).
fn at(path: &str, message: &str, what: &str) -> String {
    if path.is_empty() || path == "." {
        message.to_string()
    } else {
        format!("{what} '{path}': {message}")
    }
}

/// serde_json appends ` at line N column M`; the caller says where in its own words.
fn without_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

/// serde's data messages in the customer's terms.
fn expected(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("invalid type: ").or_else(|| message.strip_prefix("invalid value: ")) {
        let (found, wanted) = rest.split_once(", expected ").unwrap_or((rest, "another value"));
        return format!("{} is given where {} is expected", found_words(found), wanted_words(wanted));
    }
    if let Some(name) = between(message, "missing field `", "`") {
        return format!("'{name}' is required");
    }
    if let Some(name) = between(message, "unknown field `", "`") {
        let known = message.split_once("expected ").map(|(_, k)| k.replace('`', "'")).unwrap_or_default();
        return if known.is_empty() {
            format!("'{name}' is not known here")
        } else {
            format!("'{name}' is not known here (known: {known})")
        };
    }
    if let Some(name) = between(message, "unknown variant `", "`") {
        let known = message.split_once("expected ").map(|(_, k)| k.replace('`', "'")).unwrap_or_default();
        return format!("'{name}' is not one of {known}");
    }
    if let Some(name) = between(message, "duplicate field `", "`") {
        return format!("'{name}' is given twice");
    }
    if message.contains("invalid digit") || message.contains("cannot parse integer") {
        return "a whole number (digits only) is expected".into();
    }
    if message.contains("number too large") || message.contains("number too small") {
        return "the number is out of range".into();
    }
    if message.contains("provided string was not `true` or `false`") {
        return "true or false is expected".into();
    }
    if message.contains("invalid float literal") {
        return "a number is expected".into();
    }
    message.replace('`', "'")
}

/// serde_json's syntax messages in plain words.
fn syntax(message: &str) -> String {
    match message {
        "expected value" => "a value is expected (a string, number, object, array, true, false or null)".into(),
        "trailing characters" => "something follows the JSON value".into(),
        "key must be a string" => "an object's member names are strings in double quotes".into(),
        "trailing comma" => "a comma is followed by nothing".into(),
        other => other.replace('`', "'"),
    }
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let rest = &text[text.find(start)? + start.len()..];
    Some(&rest[..rest.find(end)?])
}

/// What serde says it found ("string \"x\"", "integer `-1`", "map") as a client would say it.
fn found_words(found: &str) -> String {
    let found = found.replace('`', "");
    for (serde, words) in [
        ("string ", "the text "),
        ("integer ", "the number "),
        ("floating point ", "the number "),
        ("boolean ", ""),
        ("unit value", "null"),
        ("null", "null"),
        ("map", "an object"),
        ("sequence", "a list"),
    ] {
        if let Some(rest) = found.strip_prefix(serde) {
            return format!("{words}{rest}");
        }
    }
    found
}

/// What serde expected (a Rust type's name, often) as a client would say it.
fn wanted_words(wanted: &str) -> String {
    let wanted = wanted.trim();
    match wanted {
        "a boolean" => "true or false".into(),
        "a string" => "a text".into(),
        "a sequence" => "a list".into(),
        "a map" => "an object".into(),
        "f64" | "f32" => "a number".into(),
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number of 0 or more".into(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".into(),
        w if w.starts_with("struct ") || w.starts_with("a map") => "an object".into(),
        w if w.starts_with("enum ") => "one of the values this member takes".into(),
        w if w.starts_with("a sequence") || w.starts_with("a tuple") => "a list".into(),
        w if w.starts_with("a string") => "a text".into(),
        w => w.replace('`', "'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Query {
        flag: Option<bool>,
        limit: Option<u32>,
        name: Option<String>,
    }

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Body {
        items: Vec<Item>,
    }

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Item {
        on: bool,
    }

    fn no_library_words(message: &str) {
        for word in ["Failed to deserialize", "invalid type", "EOF while parsing", "expected a boolean", "u32", "struct "] {
            assert!(!message.contains(word), "{word} in: {message}");
        }
    }

    #[test]
    fn query_messages_name_the_parameter_and_say_what_it_takes() {
        let e = query::<Query>("flag=yes").unwrap_err();
        assert!(e.contains("'flag'") && e.contains("true or false"), "{e}");
        no_library_words(&e);
        let e = query::<Query>("limit=-1").unwrap_err();
        assert!(e.contains("'limit'") && e.contains("whole number"), "{e}");
        no_library_words(&e);
        let e = query::<Query>("other=1").unwrap_err();
        assert!(e.contains("'other' is not known here"), "{e}");
        no_library_words(&e);
        assert_eq!(query::<Query>("flag=true&limit=3").unwrap().limit, Some(3));
    }

    #[test]
    fn json_messages_say_where_and_what_in_plain_words() {
        let e = json::<Body>(b"{\"items\": [").unwrap_err();
        assert!(e.contains("ends before its value does") && e.contains("line 1"), "{e}");
        no_library_words(&e);
        let e = json::<Body>(br#"{"items": [{"on": "yes"}]}"#).unwrap_err();
        assert!(e.contains("'items[0].on'") && e.contains("the text \"yes\" is given where true or false is expected"), "{e}");
        no_library_words(&e);
        let e = json::<Body>(b"{}").unwrap_err();
        assert_eq!(e, "'items' is required");
        let e = json::<Body>(b"{\"items\": []} x").unwrap_err();
        assert!(e.contains("something follows the JSON value"), "{e}");
        let e = json::<Body>(b"\"items\"").unwrap_err();
        assert!(e.contains("the text \"items\" is given where an object is expected"), "{e}");
        no_library_words(&e);
        assert!(json::<Body>(br#"{"items": [{"on": true}]}"#).is_ok());
    }
}
