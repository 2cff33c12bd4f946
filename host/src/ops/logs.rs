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
use tracing::span::{Attributes, Id};
use tracing::Subscriber;
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FormatFields, FormattedFields, MakeWriter};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

/// Installs the process's log subscriber on standard error.
pub fn init(json: bool, ansi: bool) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    if json {
        // The span of a call (its request id, method and path) goes on each of its lines.
        let logs = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
        logs.json().with_current_span(true).with_span_list(false).init();
    } else {
        text(filter, ansi, std::io::stderr).init();
    }
}

/// The text format's subscriber: `filter`, then each span's fields formatted at once
/// (`SpanFieldsAtOnce`), then the lines, written to `writer`.
fn text<W>(filter: EnvFilter, ansi: bool, writer: W) -> impl Subscriber + Send + Sync
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let lines = tracing_subscriber::fmt::layer().fmt_fields(QuotedFields).with_ansi(ansi).with_writer(writer);
    tracing_subscriber::registry().with(filter).with(SpanFieldsAtOnce).with(lines)
}

/// Room for a request span's fields (its method, path and request id) in one allocation.
const SPAN_FIELDS_CAPACITY: usize = 160;

/// Formats a new span's fields for the text format into a buffer that holds a request span's at
/// once. The lines' layer would format them into an empty `String` grown as they are written:
/// four or five reallocations at every call for the request span (issue 41,
/// `bench/instructions.sh`); it leaves a span's fields alone when it finds them formatted.
struct SpanFieldsAtOnce;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for SpanFieldsAtOnce {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut fields = FormattedFields::<QuotedFields>::new(String::with_capacity(SPAN_FIELDS_CAPACITY));
        if QuotedFields.format_fields(fields.as_writer(), attrs).is_ok() {
            span.extensions_mut().insert(fields);
        }
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
    !value.is_empty() && value.bytes().all(|b| PLAIN[usize::from(b)])
}

/// The bytes a plain value is made of (letters, digits and `-_.:/@+,[]()`), one look-up a byte:
/// every call's path and request id pass here.
static PLAIN: [bool; 256] = {
    let mut plain = [false; 256];
    let mut b = 0;
    while b < 256 {
        plain[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    let others = b"-_.:/@+,[]()";
    let mut i = 0;
    while i < others.len() {
        plain[others[i] as usize] = true;
        i += 1;
    }
    plain
};

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
        let subscriber = text(EnvFilter::new("info"), false, buffer.clone());
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
    fn span_fields_long_or_recorded_later_are_on_the_line() {
        let long = format!("/extensions/open/demo/hello/{}", "p".repeat(2 * SPAN_FIELDS_CAPACITY));
        let text = logged(|| {
            let span = tracing::info_span!("request", path = long.as_str(), status = tracing::field::Empty);
            span.record("status", 200);
            let _in = span.enter();
            tracing::info!("done");
        });
        assert!(text.contains(&format!("path={long}")) && text.contains("status=200") && text.contains("done"), "{text}");
    }

    #[test]
    fn plain_values_are_letters_digits_and_a_few_marks() {
        assert!(is_plain("a-b_c.d:e/f@g+h,[i](j)0"));
        for quoted in ["", "a b", "é", "a=b", "a\"b", "x\u{7f}"] {
            assert!(!is_plain(quoted), "{quoted}");
        }
    }

    #[test]
    fn the_message_has_its_control_characters_escaped() {
        let text = logged(|| tracing::info!("{}", "two\nlines"));
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains(r"two\nlines"), "{text}");
    }
}
