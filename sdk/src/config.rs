//! An extension's configuration travels inside the component, in a custom section named
//! `herald:config` holding JSON. [`config!`](crate::config) writes it:
//!
//! ```
//! herald_sdk::config!(open: true, asynchronous: false, allowed_hosts: ["api.example.com", "*.cdn.example"], timeout_ms: 5000);
//! ```
//!
//! Keys: `open` (bool: the open endpoint instead of the secure one), `asynchronous` (bool: `async`
//! in the JSON; answered 202 and run from the queue), `allowed_hosts` (list of host names; `*.domain`
//! for its subdomains), `timeout_ms` (the extension's own deadline), `memory_mb` (the memory of a call, within the
//! operator's maximum). All are optional; without the
//! section an extension is secure, synchronous, without network and has the operator's deadline.
//! A key the macro does not know is a compile error.
//!
//! Keys of one type: `bound_hosts` (an authheader's hosts, required), `schedule` (a monitor's,
//! required: `"every 5m"` or five-field cron in UTC) and `alert` (a monitor's, optional: an event
//! achieved for a recipient when its status changes):
//!
//! An http extension may opt into instance reuse: `reuse_calls` (one instance serves up to that
//! many calls, one at a time, keeping its memory and globals between them) and
//! `reuse_idle_seconds` (dropped after that long without a call; default 60).
//!
//! ```
//! herald_sdk::config!(allowed_hosts: ["crm.example.com"], schedule: "every 5m", alert: {"event": "INTEGRATION_DOWN", "recipient": 1});
//! ```

/// The bytes of `text` as an array of its length (a custom section must be a sized static).
#[doc(hidden)]
pub const fn bytes<const N: usize>(text: &str) -> [u8; N] {
    let source = text.as_bytes();
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N {
        out[i] = source[i];
        i += 1;
    }
    out
}

/// Writes the `herald:config` custom section; see [the module](crate::config).
#[macro_export]
macro_rules! config {
    ($($key:ident : $value:tt),+ $(,)?) => {
        const _: () = {
            const JSON: &str = $crate::__config_json!($($key : $value),+);
            #[used]
            #[unsafe(link_section = "herald:config")]
            static HERALD_CONFIG: [u8; JSON.len()] = $crate::config::bytes::<{ JSON.len() }>(JSON);
        };
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __config_json {
    ($first:ident : $first_value:tt $(, $key:ident : $value:tt)*) => {
        concat!("{", $crate::__config_member!($first : $first_value) $(, ",", $crate::__config_member!($key : $value))*, "}")
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __config_member {
    (open : $v:tt) => {
        concat!("\"open\":", stringify!($v))
    };
    (asynchronous : $v:tt) => {
        concat!("\"async\":", stringify!($v))
    };
    (allowed_hosts : $v:tt) => {
        concat!("\"allowed_hosts\":", stringify!($v))
    };
    (timeout_ms : $v:tt) => {
        concat!("\"timeout_ms\":", stringify!($v))
    };
    (memory_mb : $v:tt) => {
        concat!("\"memory_mb\":", stringify!($v))
    };
    (bound_hosts : $v:tt) => {
        concat!("\"bound_hosts\":", stringify!($v))
    };
    (schedule : $v:tt) => {
        concat!("\"schedule\":", stringify!($v))
    };
    (alert : $v:tt) => {
        concat!("\"alert\":", stringify!($v))
    };
    (reuse_calls : $v:tt) => {
        concat!("\"reuse_calls\":", stringify!($v))
    };
    (reuse_idle_seconds : $v:tt) => {
        concat!("\"reuse_idle_seconds\":", stringify!($v))
    };
    ($other:ident : $v:tt) => {
        compile_error!(concat!(
            "unknown herald:config key `",
            stringify!($other),
            "` (open, asynchronous, allowed_hosts, timeout_ms, memory_mb, bound_hosts, schedule, alert, reuse_calls, reuse_idle_seconds)"
        ))
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_json_is_what_the_host_reads() {
        let json: serde_json::Value = serde_json::from_str(
            crate::__config_json!(open: true, asynchronous: true, allowed_hosts: ["a.example", "*.b.example"], timeout_ms: 1500),
        )
        .unwrap();
        assert_eq!(
            json,
            serde_json::json!({"open": true, "async": true, "allowed_hosts": ["a.example", "*.b.example"], "timeout_ms": 1500})
        );
        assert_eq!(crate::config::bytes::<4>("open"), *b"open");
        let json: serde_json::Value = serde_json::from_str(
            crate::__config_json!(bound_hosts: ["crm.example.com"], schedule: "every 5m", alert: {"event": "DOWN", "recipient": 7}),
        )
        .unwrap();
        assert_eq!(
            json,
            serde_json::json!({"bound_hosts": ["crm.example.com"], "schedule": "every 5m", "alert": {"event": "DOWN", "recipient": 7}})
        );
    }
}
