//! How one execution of an extension ended, in the one vocabulary that the API, the execution
//! logs, the server's log, the author tools, the metrics and the console all use:
//!
//! | outcome | what happened | whose doing |
//! |---|---|---|
//! | `ok` | it answered (an http extension: a status below 500) | |
//! | `error` | it answered with an error of its own: a step, condition or authheader that returned one, an http extension that answered 5xx (the JavaScript and Python SDKs answer 500 for an exception the handler did not catch) | the extension's |
//! | `deadline` | it ran past its deadline and was stopped | the extension's |
//! | `cpu` | it used up its CPU budget (`cpu_ms`) and was stopped | the extension's |
//! | `memory` | it reached its memory cap | the extension's |
//! | `trap` | it trapped: a panic, an `unreachable`, no answer, a component that could not start | the extension's |
//! | `fault` | Herald failed it (the instance's data could not be reached during a platform call) | Herald's |
//!
//! An http caller gets the extension's own answer for `ok` and `error`, **504** for `deadline`
//! and `cpu` (both are budgets of time: of the clock, of the processor), **502** for `memory`
//! and `trap`, **500** for `fault`. Only `fault` is logged as an error by the
//! server; the rest are the extension's own doing, logged at `info` with the outcome.

use std::fmt;

/// How one execution ended (see the module's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    Ok,
    Error,
    Deadline,
    Cpu,
    Memory,
    Trap,
    Fault,
}

impl Outcome {
    pub const ALL: [Outcome; 7] =
        [Outcome::Ok, Outcome::Error, Outcome::Deadline, Outcome::Cpu, Outcome::Memory, Outcome::Trap, Outcome::Fault];

    /// The outcome's word, as every surface shows it.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Deadline => "deadline",
            Outcome::Cpu => "cpu",
            Outcome::Memory => "memory",
            Outcome::Trap => "trap",
            Outcome::Fault => "fault",
        }
    }

    /// What it means, in a sentence's words (`the extension ran past its deadline`).
    pub fn meaning(self) -> &'static str {
        match self {
            Outcome::Ok => "the extension answered",
            Outcome::Error => "the extension answered with an error of its own",
            Outcome::Deadline => "the extension ran past its deadline",
            Outcome::Cpu => "the extension used up its CPU budget",
            Outcome::Memory => "the extension reached its memory cap",
            Outcome::Trap => "the extension trapped",
            Outcome::Fault => "Herald failed the call",
        }
    }

    /// What an http caller gets instead of the extension's answer (`None`: its own answer).
    pub fn caller_status(self) -> Option<axum::http::StatusCode> {
        use axum::http::StatusCode;
        match self {
            Outcome::Ok | Outcome::Error => None,
            Outcome::Deadline | Outcome::Cpu => Some(StatusCode::GATEWAY_TIMEOUT),
            Outcome::Memory | Outcome::Trap => Some(StatusCode::BAD_GATEWAY),
            Outcome::Fault => Some(StatusCode::INTERNAL_SERVER_ERROR),
        }
    }

    pub fn parse(word: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.name() == word)
    }

    /// A stored outcome (`word` or `word: reason`) as its outcome and reason. Records written
    /// before this vocabulary said `failed: <reason>` for a trap or the memory cap.
    pub fn read_stored(stored: &str) -> (Outcome, Option<&str>) {
        let (word, reason) = match stored.split_once(": ") {
            Some((word, reason)) => (word, Some(reason)),
            None => (stored, None),
        };
        let outcome = match word {
            "failed" if reason.is_some_and(is_memory) => Outcome::Memory,
            "failed" => Outcome::Trap,
            word => Outcome::parse(word).unwrap_or(Outcome::Trap),
        };
        (outcome, reason)
    }

    /// `word` or `word: reason`, as an execution log keeps it.
    pub fn stored(self, reason: Option<&str>) -> String {
        match reason {
            Some(reason) if !reason.is_empty() => format!("{}: {reason}", self.name()),
            _ => self.name().to_string(),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether a failure's text says the guest could not grow its memory (Rust's allocator says
/// "memory allocation of N bytes failed"; other languages' much the same).
pub(crate) fn is_memory(reason: &str) -> bool {
    reason.contains("memory allocation") || reason.contains("out of memory")
}

/// A fault of Herald's own in a platform call (the instance's data could not be reached): it
/// traps the guest, which cannot handle it, and the execution ends `fault`.
#[derive(Debug)]
pub struct HostFault(pub String);

impl fmt::Display for HostFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HostFault {}

#[cfg(test)]
mod tests {
    use super::Outcome;

    #[test]
    fn stored_outcomes_read_back_including_those_of_before_the_vocabulary() {
        for outcome in Outcome::ALL {
            assert_eq!(Outcome::read_stored(&outcome.stored(None)), (outcome, None));
            assert_eq!(Outcome::read_stored(&outcome.stored(Some("why: this"))), (outcome, Some("why: this")));
        }
        assert_eq!(Outcome::read_stored("failed: wasm trap: unreachable"), (Outcome::Trap, Some("wasm trap: unreachable")));
        assert_eq!(Outcome::read_stored("failed: memory allocation of 8 bytes failed").0, Outcome::Memory);
        assert_eq!(Outcome::read_stored("error: answered 500"), (Outcome::Error, Some("answered 500")));
    }
}
