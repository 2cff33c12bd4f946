//! An extension's configuration travels inside the component, so the file alone describes it and
//! any language can set it: a custom section named `herald:config` holding JSON, at the top level
//! or inside the component's core module (where `#[link_section]` in Rust puts it):
//!
//! ```json
//! {"open": false, "async": false, "allowed_hosts": ["api.example.com"], "timeout_ms": 30000}
//! ```
//!
//! Every member is optional; a component without the section gets the safe defaults: secure
//! (`open` false), synchronous, no outbound network, the operator's default timeout.
//!
//! Members of one type only: `bound_hosts` (authheader, required: the hosts whose outbound calls it
//! makes headers for, patterns as in `allowed_hosts`), `schedule` (monitor, required: `every 5m`,
//! `every 2h`, `every 1d`, or five-field cron in UTC such as `*/10 * * * *`; at least a minute
//! apart) and `alert` (monitor, optional: `{"event": NAME, "recipient": RECIPIENT_ID}`, an event
//! achieved for that recipient whenever the monitor's status changes).
//!
//! `reuse_calls` (http, optional: 2 to 10000) opts into instance reuse (`warm.rs`): one instance
//! serves up to that many calls of this extension for this instance, one at a time, and is dropped
//! after `reuse_idle_seconds` (1 to 600, default 60) without a call. Without it, a fresh instance
//! per call.

use serde_json::Value as Json;
use wasmparser::{Parser, Payload};

/// The name of the custom section.
pub const SECTION: &str = "herald:config";

/// The longest deadline an extension may ask for (the operator's maximum may be lower).
pub const MAX_TIMEOUT_MS: u64 = 300_000;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtensionConfig {
    /// Called through the open endpoint (no credentials) instead of the secure one.
    pub open: bool,
    /// Executed asynchronously (answered 202 with a queue id).
    pub asynchronous: bool,
    /// Hosts the extension may call through `wasi:http/outgoing-handler`: exact names, or
    /// `*.example.com` for the subdomains of example.com.
    pub allowed_hosts: Vec<String>,
    /// The extension's own deadline (1 to `MAX_TIMEOUT_MS`), within the operator's maximum.
    pub timeout_ms: Option<u64>,
    /// The memory a call may use, in MiB (1 to `MAX_MEMORY_MB`), within the operator's maximum.
    pub memory_mb: Option<u64>,
    /// The processor time a call may use, in milliseconds (1 to `MAX_CPU_MS`), within the
    /// operator's maximum; time waiting for I/O or for a turn does not count.
    pub cpu_ms: Option<u64>,
    /// Authheader: the hosts whose outbound calls it makes headers for.
    pub bound_hosts: Vec<String>,
    /// Monitor: when it runs.
    pub schedule: Option<Schedule>,
    /// Monitor: the event achieved when its status changes.
    pub alert: Option<Alert>,
    /// http: instance reuse, when the extension opts in.
    pub reuse: Option<Reuse>,
}

/// How long a reused instance lives: at most `calls` calls, and `idle_seconds` between two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reuse {
    pub calls: u32,
    pub idle_seconds: u32,
}

pub const MAX_REUSE_CALLS: u64 = 10_000;
pub const MAX_REUSE_IDLE_SECONDS: u64 = 600;
pub const DEFAULT_REUSE_IDLE_SECONDS: u32 = 60;

/// The most memory an extension may ask for (the operator's maximum may be lower).
pub const MAX_MEMORY_MB: u64 = 4096;

/// The most CPU time an extension may ask for (the operator's maximum may be lower).
pub const MAX_CPU_MS: u64 = 300_000;

/// The shortest time between two runs of a monitor.
pub const MIN_SCHEDULE_SECONDS: u64 = 60;
/// The longest `every` interval (a month of 30 days).
const MAX_EVERY_SECONDS: u64 = 30 * 86_400;

/// When a monitor runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schedule {
    /// Every so many seconds (at least `MIN_SCHEDULE_SECONDS`).
    Every(u64),
    /// Five-field cron, UTC.
    Cron(String),
}

impl Schedule {
    pub fn parse(text: &str) -> Result<Schedule, String> {
        let text = text.trim();
        if let Some(every) = text.strip_prefix("every ") {
            let every = every.trim();
            let (digits, unit) = every.split_at(every.find(|c: char| !c.is_ascii_digit()).unwrap_or(every.len()));
            let scale = match unit.trim() {
                "s" => 1,
                "m" => 60,
                "h" => 3600,
                "d" => 86_400,
                _ => return Err(format!("'schedule' '{text}': write every and a number with s, m, h or d, such as 'every 5m'")),
            };
            let seconds = digits.parse::<u64>().ok().and_then(|n| n.checked_mul(scale));
            return match seconds {
                Some(s) if (MIN_SCHEDULE_SECONDS..=MAX_EVERY_SECONDS).contains(&s) => Ok(Schedule::Every(s)),
                _ => Err(format!("'schedule' '{text}' must be from every 1m to every 30d (a monitor runs at most once a minute)")),
            };
        }
        crate::model::cron::parse(text).map_err(|e| format!("{e}; or write 'every <n><s|m|h|d>'"))?;
        Ok(Schedule::Cron(text.to_string()))
    }

    /// The first run strictly after `millis` (None: a cron expression that never fires again).
    pub fn next_after(&self, millis: i64) -> Option<i64> {
        self.next_in_step(millis, millis)
    }

    /// The first run strictly after `millis`, an `every` schedule keeping in step with a run due
    /// at `anchor` (so that runs do not drift by how late each one starts).
    pub fn next_in_step(&self, anchor: i64, millis: i64) -> Option<i64> {
        match self {
            Schedule::Every(seconds) => {
                let step = *seconds as i64 * 1000;
                let steps = if millis < anchor { 1 } else { (millis - anchor) / step + 1 };
                Some(anchor + steps * step)
            }
            Schedule::Cron(text) => {
                let cron: croner::Cron = text.parse().ok()?;
                let from = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(millis)?;
                cron.find_next_occurrence(&from, false).ok().map(|t| t.timestamp_millis())
            }
        }
    }
}

impl std::fmt::Display for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Schedule::Every(s) if s % 86_400 == 0 => write!(f, "every {}d", s / 86_400),
            Schedule::Every(s) if s % 3600 == 0 => write!(f, "every {}h", s / 3600),
            Schedule::Every(s) if s % 60 == 0 => write!(f, "every {}m", s / 60),
            Schedule::Every(s) => write!(f, "every {s}s"),
            Schedule::Cron(text) => f.write_str(text),
        }
    }
}

/// A monitor's alert: event `event` achieved for the recipient whose Recipient Id is `recipient`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    pub event: String,
    pub recipient: Json,
}

impl ExtensionConfig {
    pub fn allows_host(&self, host: &str) -> bool {
        any_host_matches(&self.allowed_hosts, host)
    }

    /// The memory the extension asks for, in bytes.
    pub fn memory_bytes(&self) -> Option<usize> {
        self.memory_mb.map(|mb| (mb as usize) << 20)
    }

    /// Whether this authheader extension is bound to `host`.
    pub fn binds_host(&self, host: &str) -> bool {
        self.bound_hosts.iter().any(|pattern| host_matches(pattern, host))
    }

    /// Why members of another type's are refused for `kind`, or a required one is missing.
    pub fn problems_for(&self, kind: super::ExtensionKind) -> Vec<String> {
        use super::ExtensionKind::{Authheader, Monitor};
        let mut out = Vec::new();
        match (kind, self.bound_hosts.is_empty()) {
            (Authheader, true) => out.push(format!(
                "an authheader extension must declare the hosts it makes headers for: 'bound_hosts' in its '{SECTION}' section, such as [\"api.example.com\"]"
            )),
            (Authheader, false) | (_, true) => {}
            (_, false) => out.push(format!("'bound_hosts' is for authheader extensions, not for type '{kind}'")),
        }
        match (kind, &self.schedule) {
            (Monitor, None) => out.push(format!(
                "a monitor extension must declare when it runs: 'schedule' in its '{SECTION}' section, such as \"every 5m\""
            )),
            (Monitor, Some(_)) | (_, None) => {}
            (_, Some(_)) => out.push(format!("'schedule' is for monitor extensions, not for type '{kind}'")),
        }
        if self.alert.is_some() && kind != Monitor {
            out.push(format!("'alert' is for monitor extensions, not for type '{kind}'"));
        }
        if self.reuse.is_some() && kind != super::ExtensionKind::Http {
            out.push(format!("'reuse_calls' is for http extensions, not for type '{kind}'"));
        }
        out
    }

    /// The section as JSON, as `read` reads it back (stored with the extension's record).
    pub fn to_json(&self) -> Json {
        let mut out = serde_json::Map::new();
        out.insert("open".into(), self.open.into());
        out.insert("async".into(), self.asynchronous.into());
        out.insert("allowed_hosts".into(), self.allowed_hosts.clone().into());
        if let Some(ms) = self.timeout_ms {
            out.insert("timeout_ms".into(), ms.into());
        }
        if let Some(mb) = self.memory_mb {
            out.insert("memory_mb".into(), mb.into());
        }
        if let Some(ms) = self.cpu_ms {
            out.insert("cpu_ms".into(), ms.into());
        }
        if !self.bound_hosts.is_empty() {
            out.insert("bound_hosts".into(), self.bound_hosts.clone().into());
        }
        if let Some(schedule) = &self.schedule {
            out.insert("schedule".into(), schedule.to_string().into());
        }
        if let Some(alert) = &self.alert {
            out.insert("alert".into(), serde_json::json!({"event": alert.event, "recipient": alert.recipient}));
        }
        if let Some(reuse) = self.reuse {
            out.insert("reuse_calls".into(), reuse.calls.into());
            out.insert("reuse_idle_seconds".into(), reuse.idle_seconds.into());
        }
        Json::Object(out)
    }

    /// Reads what `to_json` wrote.
    pub fn from_stored(text: &str) -> Result<ExtensionConfig, String> {
        let json: Json = serde_json::from_str(text).map_err(|e| e.to_string())?;
        from_json(&json)
    }
}

/// Whether `host` matches any of `patterns` (`host_matches`).
pub fn any_host_matches(patterns: &[String], host: &str) -> bool {
    patterns.iter().any(|pattern| host_matches(pattern, host))
}

/// Whether `host` matches `pattern`: the same name (ignoring case), or for `*.domain` a
/// subdomain of it.
pub fn host_matches(pattern: &str, host: &str) -> bool {
    let (host, pattern) = (host.to_ascii_lowercase(), pattern.to_ascii_lowercase());
    match pattern.strip_prefix("*.") {
        Some(domain) => host.len() > domain.len() + 1 && host.ends_with(&format!(".{domain}")),
        None => host == pattern,
    }
}

/// Whether two host patterns can match the same host (two authheader extensions bound to hosts
/// that overlap would both claim its calls).
pub fn patterns_overlap(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
    match (a.strip_prefix("*."), b.strip_prefix("*.")) {
        (None, None) => a == b,
        (Some(_), None) => host_matches(&a, &b),
        (None, Some(_)) => host_matches(&b, &a),
        // One domain is the other or inside it.
        (Some(da), Some(db)) => da == db || host_matches(&a, db) || host_matches(&b, da),
    }
}

/// Reads the configuration of a component; the error is for the customer.
pub fn read(bytes: &[u8]) -> Result<ExtensionConfig, String> {
    let mut found: Option<&[u8]> = None;
    for payload in Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(|e| format!("the file is not a valid WebAssembly component: {e}"))?;
        if let Payload::CustomSection(section) = payload {
            if section.name() == SECTION {
                if found.is_some() {
                    return Err(format!("the component has more than one '{SECTION}' section"));
                }
                found = Some(section.data());
            }
        }
    }
    match found {
        None => Ok(ExtensionConfig::default()),
        Some(data) => {
            let json: Json = serde_json::from_slice(data).map_err(|e| format!("the '{SECTION}' section is not valid JSON: {e}"))?;
            from_json(&json).map_err(|e| format!("the '{SECTION}' section is not valid: {e}"))
        }
    }
}

/// Reads the section's JSON, every member checked, with messages in the author's terms.
pub fn from_json(json: &Json) -> Result<ExtensionConfig, String> {
    let Json::Object(members) = json else {
        return Err(r#"it must be a JSON object, such as {"open": true, "timeout_ms": 5000}"#.into());
    };
    let mut config = ExtensionConfig::default();
    let mut idle_seconds = None;
    for (name, value) in members {
        let flag = || value.as_bool().ok_or_else(|| format!("'{name}' must be true or false"));
        match name.as_str() {
            "open" => config.open = flag()?,
            "async" => config.asynchronous = flag()?,
            "allowed_hosts" => config.allowed_hosts = hosts(value, "allowed_hosts")?,
            "bound_hosts" => config.bound_hosts = hosts(value, "bound_hosts")?,
            "memory_mb" => {
                let mb = value.as_u64().filter(|mb| (1..=MAX_MEMORY_MB).contains(mb));
                config.memory_mb = Some(mb.ok_or_else(|| format!("'memory_mb' must be a whole number of MiB from 1 to {MAX_MEMORY_MB}"))?);
            }
            "cpu_ms" => {
                let ms = value.as_u64().filter(|ms| (1..=MAX_CPU_MS).contains(ms));
                config.cpu_ms = Some(ms.ok_or_else(|| format!("'cpu_ms' must be a whole number of milliseconds from 1 to {MAX_CPU_MS}"))?);
            }
            "schedule" => {
                let text = value.as_str().ok_or_else(|| "'schedule' must be text, such as \"every 5m\" or \"*/10 * * * *\"".to_string())?;
                config.schedule = Some(Schedule::parse(text)?);
            }
            "alert" => config.alert = Some(alert(value)?),
            "reuse_calls" => {
                let calls = value.as_u64().filter(|n| (2..=MAX_REUSE_CALLS).contains(n));
                let calls = calls.ok_or_else(|| format!("'reuse_calls' must be a whole number of calls from 2 to {MAX_REUSE_CALLS}"))?;
                config.reuse = Some(Reuse { calls: calls as u32, idle_seconds: DEFAULT_REUSE_IDLE_SECONDS });
            }
            "reuse_idle_seconds" => {
                let seconds = value.as_u64().filter(|s| (1..=MAX_REUSE_IDLE_SECONDS).contains(s));
                idle_seconds = Some(seconds.ok_or_else(|| format!("'reuse_idle_seconds' must be a whole number of seconds from 1 to {MAX_REUSE_IDLE_SECONDS}"))? as u32);
            }
            "timeout_ms" => {
                let ms = value.as_u64().filter(|ms| (1..=MAX_TIMEOUT_MS).contains(ms));
                config.timeout_ms = Some(ms.ok_or_else(|| {
                    format!("'timeout_ms' must be a whole number of milliseconds from 1 to {MAX_TIMEOUT_MS}")
                })?);
            }
            other => {
                return Err(format!(
                    "unknown member '{other}' (the members are open, async, allowed_hosts, timeout_ms, memory_mb, cpu_ms, bound_hosts, schedule, alert, reuse_calls, reuse_idle_seconds)"
                ))
            }
        }
    }
    match (&mut config.reuse, idle_seconds) {
        (Some(reuse), Some(seconds)) => reuse.idle_seconds = seconds,
        (None, Some(_)) => return Err("'reuse_idle_seconds' needs 'reuse_calls' (how many calls one instance may serve)".into()),
        _ => {}
    }
    Ok(config)
}

/// `alert`: `{"event": NAME, "recipient": RECIPIENT_ID}`.
fn alert(value: &Json) -> Result<Alert, String> {
    let wrong = || r#"'alert' must be {"event": "EVENT_NAME", "recipient": <Recipient Id>}"#.to_string();
    let members = value.as_object().ok_or_else(wrong)?;
    if members.keys().any(|k| k != "event" && k != "recipient") {
        return Err(wrong());
    }
    let event = members.get("event").and_then(Json::as_str).filter(|e| !e.is_empty()).ok_or_else(wrong)?;
    let recipient = members.get("recipient").filter(|r| r.is_string() || r.is_number()).ok_or_else(wrong)?;
    Ok(Alert { event: event.to_string(), recipient: recipient.clone() })
}

/// `allowed_hosts`, `bound_hosts`: host names, or `*.` and a domain; no scheme, port or path.
fn hosts(value: &Json, member: &str) -> Result<Vec<String>, String> {
    let wrong = || format!(r#"'{member}' must be a list of host names, such as ["api.example.com", "*.example.net"]"#);
    let list = value.as_array().ok_or_else(wrong)?;
    list.iter()
        .map(|h| {
            let host = h.as_str().ok_or_else(wrong)?;
            let name = host.strip_prefix("*.").unwrap_or(host);
            let valid = !name.is_empty()
                && name.len() <= 253
                && name.split('.').all(|label| !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
            if valid {
                Ok(host.to_string())
            } else {
                Err(format!("'{host}' in '{member}' is not a host name (write it without scheme, port or path)"))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_patterns() {
        let c = ExtensionConfig { allowed_hosts: vec!["api.example.com".into(), "*.cdn.net".into()], ..Default::default() };
        assert!(c.allows_host("api.example.com"));
        assert!(c.allows_host("API.Example.com"));
        assert!(!c.allows_host("evil.example.com"));
        assert!(c.allows_host("eu.cdn.net"));
        assert!(!c.allows_host("cdn.net"));
        assert!(!c.allows_host("evilcdn.net"));
        assert!(!ExtensionConfig::default().allows_host("api.example.com"), "no network by default");
    }

    #[test]
    fn schedules_bindings_and_the_stored_form() {
        assert_eq!(Schedule::parse("every 5m").unwrap(), Schedule::Every(300));
        assert_eq!(Schedule::parse("every 2h").unwrap().to_string(), "every 2h");
        assert_eq!(Schedule::parse("every 90s").unwrap().to_string(), "every 90s");
        assert_eq!(Schedule::Every(300).next_after(1_000), Some(301_000));
        assert_eq!(Schedule::Every(60).next_in_step(0, 100), Some(60_000), "in step with the due run, not with when it started");
        assert_eq!(Schedule::Every(60).next_in_step(0, 60_000), Some(120_000), "strictly after");
        assert_eq!(Schedule::Every(60).next_in_step(0, 3_600_500), Some(3_660_000), "runs missed while down are not made up");
        let cron = Schedule::parse("*/10 * * * *").unwrap();
        assert_eq!(cron.next_after(0), Some(600_000), "the next tenth minute of the hour, UTC");
        let config = from_json(&serde_json::json!({"bound_hosts": ["crm.example.com", "*.tokens.example"], "timeout_ms": 500})).unwrap();
        assert!(config.binds_host("CRM.example.com") && config.binds_host("eu.tokens.example") && !config.binds_host("example.com"));
        assert_eq!(ExtensionConfig::from_stored(&config.to_json().to_string()).unwrap(), config);
        let monitor = from_json(&serde_json::json!({"schedule": "every 1m", "alert": {"event": "DOWN", "recipient": 7}})).unwrap();
        assert_eq!(ExtensionConfig::from_stored(&monitor.to_json().to_string()).unwrap(), monitor);
        use crate::runtime::ExtensionKind::{Authheader, Http, Monitor};
        assert!(monitor.problems_for(Monitor).is_empty());
        assert_eq!(monitor.problems_for(Http).len(), 2, "{:?}", monitor.problems_for(Http));
        assert!(ExtensionConfig::default().problems_for(Authheader)[0].contains("bound_hosts"));
        assert!(ExtensionConfig::default().problems_for(Monitor)[0].contains("schedule"));
        assert!(config.problems_for(Authheader).is_empty());
        let reused = from_json(&serde_json::json!({"open": true, "reuse_calls": 1000, "reuse_idle_seconds": 5})).unwrap();
        assert_eq!(reused.reuse, Some(Reuse { calls: 1000, idle_seconds: 5 }));
        assert_eq!(ExtensionConfig::from_stored(&reused.to_json().to_string()).unwrap(), reused);
        assert_eq!(from_json(&serde_json::json!({"reuse_calls": 9})).unwrap().reuse, Some(Reuse { calls: 9, idle_seconds: 60 }));
        assert!(reused.problems_for(Http).is_empty());
        assert!(reused.problems_for(Monitor).iter().any(|p| p.contains("'reuse_calls' is for http extensions")));
    }

    #[test]
    fn overlapping_patterns() {
        assert!(patterns_overlap("a.example.com", "A.example.com"));
        assert!(patterns_overlap("*.example.com", "a.example.com"));
        assert!(patterns_overlap("a.example.com", "*.example.com"));
        assert!(patterns_overlap("*.example.com", "*.eu.example.com"));
        assert!(!patterns_overlap("*.example.com", "example.com"));
        assert!(!patterns_overlap("a.example.com", "b.example.com"));
        assert!(!patterns_overlap("*.a.com", "*.b.com"));
    }

    #[test]
    fn garbage_is_refused() {
        assert!(read(b"not wasm").is_err());
    }

    #[test]
    fn members_are_checked_with_messages_in_the_authors_terms() {
        let ok = from_json(
            &serde_json::json!({"open": true, "async": false, "allowed_hosts": ["a.example.com", "*.b.net"], "timeout_ms": 300000}),
        );
        assert_eq!(ok.unwrap().timeout_ms, Some(300_000));
        for (bad, says) in [
            (serde_json::json!(null), "JSON object"),
            (serde_json::json!([1]), "JSON object"),
            (serde_json::json!({"timeout_ms": 0}), "from 1 to 300000"),
            (serde_json::json!({"timeout_ms": 300001}), "from 1 to 300000"),
            (serde_json::json!({"timeout_ms": 2.5}), "whole number"),
            (serde_json::json!({"open": "yes"}), "true or false"),
            (serde_json::json!({"allowed_hosts": "a.com"}), "list of host names"),
            (serde_json::json!({"allowed_hosts": ["https://a.com/x"]}), "not a host name"),
            (serde_json::json!({"opne": true}), "unknown member 'opne'"),
            (serde_json::json!({"bound_hosts": ["http://a.com"]}), "in 'bound_hosts' is not a host name"),
            (serde_json::json!({"schedule": "every 30s"}), "at most once a minute"),
            (serde_json::json!({"schedule": "every 5 weeks"}), "such as 'every 5m'"),
            (serde_json::json!({"schedule": "* * * * * *"}), "has 6 fields; a schedule has five"),
            (serde_json::json!({"schedule": "61 * * * *"}), "not a cron expression"),
            (serde_json::json!({"schedule": 5}), "must be text"),
            (serde_json::json!({"alert": {"event": "X"}}), "'alert' must be"),
            (serde_json::json!({"memory_mb": 0}), "from 1 to 4096"),
            (serde_json::json!({"cpu_ms": 0}), "'cpu_ms' must be a whole number of milliseconds from 1 to 300000"),
            (serde_json::json!({"reuse_calls": 1}), "from 2 to 10000"),
            (serde_json::json!({"reuse_calls": 10001}), "from 2 to 10000"),
            (serde_json::json!({"reuse_calls": 10, "reuse_idle_seconds": 0}), "from 1 to 600"),
            (serde_json::json!({"reuse_idle_seconds": 5}), "needs 'reuse_calls'"),
        ] {
            let e = from_json(&bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains("struct") && !e.contains("u64"), "no Rust types: {e}");
        }
    }
}
