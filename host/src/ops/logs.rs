//! The server's log lines on standard error, as text (the default) or JSON (`--log-format json`).
//!
//! Text lines are `key=value` pairs after the message. Values come from callers and guests too
//! (a request id, a path, a guest's failure reason), so a value that is not plain (letters,
//! digits and `-_.:/@+`) is written quoted, with quotes, backslashes and control characters
//! escaped: no value can end its field early and forge another (`x" level=ERROR fake="1`), nor
//! start a new line. The message is Herald's own text; its control characters are escaped too.
//!
//! In JSON lines every field has its own key; a guest's text is logged under a name of its own
//! (such as `monitor_message`), never as `message`, which is the server's.

use std::fmt;

use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::EnvFilter;

/// Installs the process's log subscriber on standard error.
pub fn init(json: bool, ansi: bool) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    let logs = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if json {
        // The span of a call (its request id, method and path) goes on each of its lines.
        logs.json().with_current_span(true).with_span_list(false).init();
    } else {
        logs.fmt_fields(QuotedFields).with_ansi(ansi).init();
    }
}

/// The text format's fields, each value quoted unless it is plain.
pub struct QuotedFields;

impl<'writer> FormatFields<'writer> for QuotedFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'writer>, fields: R) -> fmt::Result {
        let mut visitor = Quoting { writer, result: Ok(()), first: true };
        fields.record(&mut visitor);
        visitor.result
    }
}

struct Quoting<'writer> {
    writer: Writer<'writer>,
    result: fmt::Result,
    first: bool,
}

impl Quoting<'_> {
    fn write(&mut self, field: &Field, value: &str) {
        if self.result.is_err() {
            return;
        }
        let separator = if self.first { "" } else { " " };
        self.first = false;
        self.result = if field.name() == "message" {
            self.writer.write_str(separator).and_then(|_| write_escaped(&mut self.writer, value, false))
        } else {
            let name = [separator, field.name(), "="].into_iter().try_for_each(|part| self.writer.write_str(part));
            // A plain value (most: ids, paths, methods) has nothing to escape.
            name.and_then(|_| if is_plain(value) { self.writer.write_str(value) } else { write_escaped(&mut self.writer, value, true) })
        };
    }
}

impl Visit for Quoting<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.write(field, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        use std::fmt::Write as _;
        // Formatted into a buffer of the thread's, not a new string per field (a request's span
        // records three at every call).
        thread_local! {
            static FORMATTED: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
        }
        FORMATTED.with(|buffer| match buffer.try_borrow_mut() {
            Ok(mut text) => {
                text.clear();
                let _ = write!(text, "{value:?}");
                self.write(field, &text);
            }
            // A value whose formatting logs (re-entered): a string of its own.
            Err(_) => self.write(field, &format!("{value:?}")),
        });
    }
}

fn is_plain(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:/@+,[]()".contains(&b))
}

/// `value`, quoted or not, with quotes (when quoted), backslashes and control characters escaped.
fn write_escaped(out: &mut impl fmt::Write, value: &str, quoted: bool) -> fmt::Result {
    if quoted {
        out.write_char('"')?;
    }
    // Runs of characters that need no escape are written whole.
    let mut plain_from = 0;
    for (at, c) in value.char_indices() {
        let escaped = match c {
            '"' if quoted => "\\\"",
            '\\' if quoted => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            c if c.is_control() => "",
            _ => continue,
        };
        out.write_str(&value[plain_from..at])?;
        if escaped.is_empty() {
            write!(out, "\\u{{{:x}}}", c as u32)?;
        } else {
            out.write_str(escaped)?;
        }
        plain_from = at + c.len_utf8();
    }
    out.write_str(&value[plain_from..])?;
    if quoted {
        out.write_char('"')?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    #[test]
    fn escapes_land_between_whole_runs_of_plain_text() {
        let mut out = String::new();
        write_escaped(&mut out, "é 1\u{1}x\"y\\z\n", true).unwrap();
        assert_eq!(out, "\"é 1\\u{1}x\\\"y\\\\z\\n\"");
        out.clear();
        write_escaped(&mut out, "plain\ttab \"kept\"", false).unwrap();
        assert_eq!(out, "plain\\ttab \"kept\"");
    }

    use tracing_subscriber::fmt::MakeWriter;

    use super::*;

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Buffer {
        type Writer = Buffer;
        fn make_writer(&'a self) -> Buffer {
            self.clone()
        }
    }

    fn logged(f: impl FnOnce()) -> String {
        let buffer = Buffer::default();
        let subscriber = tracing_subscriber::fmt().fmt_fields(QuotedFields).with_ansi(false).with_writer(buffer.clone()).finish();
        tracing::subscriber::with_default(subscriber, f);
        let bytes = buffer.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn a_value_cannot_forge_a_field_or_a_line() {
        let forged = "q\" level=ERROR fake=\"1";
        let text = logged(|| {
            let span = tracing::info_span!("request", request_id = %forged, path = "/recipients/1");
            let _in = span.enter();
            tracing::warn!(reason = %"line one\nfake line", plain = "demo", "extension failed");
        });
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains(r#"request_id="q\" level=ERROR fake=\"1""#), "{text}");
        assert!(text.contains(r#"reason="line one\nfake line""#), "{text}");
        assert!(text.contains("plain=demo") && text.contains("path=/recipients/1") && text.contains("extension failed"), "{text}");
    }

    #[test]
    fn the_message_has_its_control_characters_escaped() {
        let text = logged(|| tracing::info!("{}", "two\nlines"));
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains(r"two\nlines"), "{text}");
    }
}
