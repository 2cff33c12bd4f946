//! What an execution wrote to its instance's data, one line a change, and its record (outcome,
//! log, output), for the callers that show them to an author (`herald extension run`, dry runs,
//! replays). Production calls keep none: the platform functions only note a change when their
//! call carries a journal, and a call with a journal leaves its record here instead of in the
//! instance's execution logs.

use std::sync::{Arc, Mutex};

/// The most changes listed; the rest are counted.
const MAX_LINES: usize = 1000;

/// A shared list of changes: the caller keeps one handle, the call's state the other.
#[derive(Clone, Default, Debug)]
pub struct Journal(Arc<Mutex<Lines>>, Arc<tokio::sync::Notify>);

#[derive(Default, Debug)]
struct Lines {
    lines: Vec<String>,
    more: usize,
    record: Option<crate::store::tenant::ExecutionLog>,
}

impl Journal {
    pub fn new() -> Journal {
        Journal::default()
    }

    pub(crate) fn note(&self, line: String) {
        let mut lines = self.0.lock().expect("journal lock");
        if lines.lines.len() < MAX_LINES {
            lines.lines.push(line);
        } else {
            lines.more += 1;
        }
    }

    pub(crate) fn keep_record(&self, record: crate::store::tenant::ExecutionLog) {
        self.0.lock().expect("journal lock").record = Some(record);
        self.1.notify_one();
    }

    /// Waits for the execution's end (its record).
    pub async fn ended(&self) {
        if self.0.lock().expect("journal lock").record.is_some() {
            return;
        }
        self.1.notified().await;
    }

    /// The record of the execution, once it ended.
    pub fn record(&self) -> Option<crate::store::tenant::ExecutionLog> {
        self.0.lock().expect("journal lock").record.clone()
    }

    /// The changes in the order they were made (past the limit, a last line counts the rest).
    pub fn lines(&self) -> Vec<String> {
        let lines = self.0.lock().expect("journal lock");
        let mut out = lines.lines.clone();
        if lines.more > 0 {
            out.push(format!("... and {} more change(s)", lines.more));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_changes_and_counts_the_rest() {
        let journal = Journal::new();
        for n in 0..MAX_LINES + 3 {
            journal.clone().note(format!("change {n}"));
        }
        let lines = journal.lines();
        assert_eq!(lines.len(), MAX_LINES + 1);
        assert_eq!(lines[0], "change 0");
        assert_eq!(lines[MAX_LINES], "... and 3 more change(s)");
    }
}
