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
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FormatFields, FormattedFields, MakeWriter};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

/// Installs the process's log subscriber on standard error.
pub fn init(json: bool, ansi: bool) {
    let filter = filter(std::env::var("RUST_LOG").ok().as_deref());
    if json {
        // The span of a call (its request id, method and path) goes on each of its lines.
        let lines = tracing_subscriber::fmt::layer().json().with_current_span(true).with_span_list(false).with_writer(std::io::stderr);
        tracing_subscriber::registry().with(filter.0).with(filter.1).with(lines).init();
    } else {
        text(filter, ansi, std::io::stderr).init();
    }
}

/// The lines written when `RUST_LOG` says nothing (or nothing valid).
const DEFAULT_DIRECTIVES: &str = "info,sqlx=warn";

/// The filter of `directives` (`RUST_LOG`'s syntax): one of the two is set.
///
/// Directives of targets and levels only (all but those naming a span or a field, in brackets)
/// go to `Targets`, which decides once per place in the code. `EnvFilter` decides the same for
/// them, but it also follows every span in case a directive names one: a read lock on a map of
/// spans at each entry, exit and close of any span, several times a call on a lock both cores
/// touch, though no directive names a span (issue 41).
fn filter(directives: Option<&str>) -> (Option<Targets>, Option<EnvFilter>) {
    let directives = directives.map(str::trim).filter(|d| !d.is_empty()).unwrap_or(DEFAULT_DIRECTIVES);
    if !directives.contains('[') {
        if let Ok(targets) = directives.parse::<Targets>() {
            return (Some(targets), None);
        }
    }
    match EnvFilter::try_new(directives) {
        Ok(filter) => (None, Some(filter)),
        Err(_) => (Some(DEFAULT_DIRECTIVES.parse().expect("the default directives parse")), None),
    }
}

/// The text format's subscriber: `filter`, then each span's fields kept until a line needs them
/// (`SpanFieldsWhenWritten`), then the lines, written to `writer`.
fn text<W>(filter: (Option<Targets>, Option<EnvFilter>), ansi: bool, writer: W) -> impl Subscriber + Send + Sync
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let lines = tracing_subscriber::fmt::layer().fmt_fields(QuotedFields).with_ansi(ansi).with_writer(writer);
    tracing_subscriber::registry().with(filter.0).with(filter.1).with(SpanFieldsWhenWritten).with(lines)
}

/// Room for a request span's fields (its method, path and request id) in one allocation.
const SPAN_FIELDS_CAPACITY: usize = 160;

/// The most fields a span's values are kept for until a line needs them; a span with more has
/// them formatted at once.
const KEPT_FIELDS: usize = 4;

/// Keeps a new span's field values as given and formats them for the text format only when a
/// line of the span is written. Every call opens a request span, and most write no line: its
/// fields formatted at once (quoting and escaping each value) were 3,800 of a reused extension
/// call's 80,000 instructions (issue 41, `bench/instructions.sh`); copied as they are, they cost
/// one buffer. The lines' layer formats a span's fields itself unless it finds them formatted,
/// so this layer, below it, puts an empty `FormattedFields` in their place and fills it before
/// the lines' layer looks: before a line of the span or of a span inside it (`on_event`), and
/// before a value recorded later is added to them (`on_record`), so their order stays.
struct SpanFieldsWhenWritten;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for SpanFieldsWhenWritten {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        // Values are copied (and a `Debug` value formatted) before the span's extensions are
        // locked: a value whose formatting logs must not find them locked.
        let mut kept = Unformatted { text: String::with_capacity(SPAN_FIELDS_CAPACITY), fields: [("", 0); KEPT_FIELDS], count: 0 };
        attrs.record(&mut kept);
        if kept.count <= KEPT_FIELDS {
            let mut extensions = span.extensions_mut();
            extensions.insert(FormattedFields::<QuotedFields>::new(String::new()));
            extensions.insert(kept);
            return;
        }
        let mut fields = FormattedFields::<QuotedFields>::new(String::with_capacity(SPAN_FIELDS_CAPACITY));
        if QuotedFields.format_fields(fields.as_writer(), attrs).is_ok() {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, _: &tracing::span::Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            format_kept(&span);
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        for span in ctx.event_scope(event).into_iter().flatten() {
            format_kept(&span);
        }
    }
}

/// A span's field values as they were given: each field's name and where its value ends in
/// `text`, the values one after the other. `count` past `KEPT_FIELDS` says there were more.
struct Unformatted {
    text: String,
    fields: [(&'static str, usize); KEPT_FIELDS],
    count: usize,
}

impl Unformatted {
    fn keep(&mut self, field: &Field, value: impl FnOnce(&mut String)) {
        if self.count < KEPT_FIELDS {
            value(&mut self.text);
            self.fields[self.count] = (field.name(), self.text.len());
        }
        self.count += 1;
    }
}

impl Visit for Unformatted {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.keep(field, |text| text.push_str(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        use std::fmt::Write as _;
        self.keep(field, |text| {
            let _ = write!(text, "{value:?}");
        });
    }
}

/// Formats the values `span` kept into its `FormattedFields`, once.
fn format_kept<S: for<'a> LookupSpan<'a>>(span: &tracing_subscriber::registry::SpanRef<'_, S>) {
    let mut extensions = span.extensions_mut();
    let Some(kept) = extensions.remove::<Unformatted>() else { return };
    let Some(formatted) = extensions.get_mut::<FormattedFields<QuotedFields>>() else { return };
    let mut fields = FormattedFields::<QuotedFields>::new(String::with_capacity(kept.text.len() + SPAN_FIELDS_CAPACITY / 4));
    let mut visitor = Quoting { writer: fields.as_writer(), result: Ok(()), first: true };
    let mut from = 0;
    for &(name, to) in &kept.fields[..kept.count] {
        visitor.write(name, &kept.text[from..to]);
        from = to;
    }
    // Values recorded since were added after these (`on_record` came here first).
    if visitor.result.is_ok() {
        if !formatted.fields.is_empty() {
            fields.fields.push(' ');
            fields.fields.push_str(&formatted.fields);
        }
        *formatted = fields;
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
    fn write(&mut self, name: &str, value: &str) {
        if self.result.is_err() {
            return;
        }
        let separator = if self.first { "" } else { " " };
        self.first = false;
        self.result = if name == "message" {
            self.writer.write_str(separator).and_then(|_| write_escaped(&mut self.writer, value, false))
        } else {
            let name = [separator, name, "="].into_iter().try_for_each(|part| self.writer.write_str(part));
            // A plain value (most: ids, paths, methods) has nothing to escape.
            name.and_then(|_| if is_plain(value) { self.writer.write_str(value) } else { write_escaped(&mut self.writer, value, true) })
        };
    }
}

impl Visit for Quoting<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.write(field.name(), value);
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
                self.write(field.name(), &text);
            }
            // A value whose formatting logs (re-entered): a string of its own.
            Err(_) => self.write(field.name(), &format!("{value:?}")),
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
        let subscriber = text(filter(Some("info")), false, buffer.clone());
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
    fn the_fields_of_every_span_around_a_line_are_on_it_however_many() {
        let text = logged(|| {
            let outer = tracing::info_span!("request", method = "GET", path = "/a b", request_id = "r1");
            let _outer = outer.enter();
            let inner = tracing::info_span!("call", a = 1, b = "two", c = ?Some(3), d = true, e = "five");
            let _inner = inner.enter();
            tracing::info!(x = "y", "inside");
        });
        assert_eq!(text.lines().count(), 1, "{text}");
        for part in ["method=GET", r#"path="/a b""#, "request_id=r1", "a=1", "b=two", "c=Some(3)", "d=true", "e=five", "x=y", "inside"] {
            assert!(text.contains(part), "{part} in {text}");
        }
        let (request, call) = (text.find("request_id=r1").unwrap(), text.find("a=1").unwrap());
        assert!(request < call, "the outer span first: {text}");
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

    #[test]
    fn directives_of_targets_and_levels_skip_the_span_following_filter() {
        let (targets, env) = filter(None);
        assert!(targets.is_some() && env.is_none(), "the default is targets and levels only");
        let (targets, env) = filter(Some("info,herald_host=debug"));
        assert!(targets.is_some() && env.is_none());
        let (targets, env) = filter(Some("info,herald_host[request{path}]=debug"));
        assert!(targets.is_none() && env.is_some(), "a directive naming a span needs EnvFilter");
        let (targets, env) = filter(Some("not a [ valid directive"));
        assert!(targets.is_some() && env.is_none(), "an invalid one falls back to the default");
    }

    #[test]
    fn the_default_filter_writes_info_and_sqlx_warnings_only() {
        let buffer = Buffer::default();
        tracing::subscriber::with_default(text(filter(None), false, buffer.clone()), || {
            tracing::debug!("hidden debug");
            tracing::info!("shown info");
            tracing::info!(target: "sqlx::query", "hidden sqlx info");
            tracing::warn!(target: "sqlx::pool", "shown sqlx warning");
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert!(text.contains("shown info") && text.contains("shown sqlx warning"), "{text}");
        assert!(!text.contains("hidden"), "{text}");
    }
}
