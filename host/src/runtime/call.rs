//! The one call path every kind of extension goes through: a fresh `Store` for the caller's
//! instance (from the route, the credential or the flow, never from the guest) with the memory
//! and resource caps, the epoch deadline (the guest yields at every tick and is interrupted at its
//! deadline), the contextual data of the triggering call, the captured log, and the execution
//! record written when it ends. What the guest is asked to do is the kind's `Invocation`.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use wasmtime::{Store, UpdateDeadline};

use super::fair::shares::AccountId;
use super::fair::CallMeter;
use super::input::RecordedInput;
use super::journal::Journal;
use super::outcome::{is_memory, HostFault, Outcome};
use super::state::{Authorizer, CallState};
use super::warm::WarmKeyRef;
use super::{Prepared, Runtime};
use crate::limits::usage::Spent;
use crate::secrets::redact;
use crate::store::tenant::{ExecutionLog, Usage};
use crate::tenants::Tenant;

/// Why a call produced no result: the outcomes of `outcome.rs` other than `ok` and `error` (an
/// error of the guest's own is its answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallFailure {
    /// The extension ran past its deadline.
    Deadline,
    /// The extension used up its CPU budget (the reason says which, and how much it used).
    Cpu(String),
    /// The extension reached its memory cap.
    Memory(String),
    /// The extension trapped, panicked, never answered, or could not start.
    Trap(String),
    /// Herald failed the call (a platform call could not reach the instance's data).
    Fault(String),
}

impl CallFailure {
    pub fn outcome(&self) -> Outcome {
        match self {
            CallFailure::Deadline => Outcome::Deadline,
            CallFailure::Cpu(_) => Outcome::Cpu,
            CallFailure::Memory(_) => Outcome::Memory,
            CallFailure::Trap(_) => Outcome::Trap,
            CallFailure::Fault(_) => Outcome::Fault,
        }
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            CallFailure::Deadline => None,
            CallFailure::Cpu(reason) | CallFailure::Memory(reason) | CallFailure::Trap(reason) | CallFailure::Fault(reason) => Some(reason),
        }
    }

    /// The failure of a call that ended with `error`, of the kind its text says.
    fn of(error: &wasmtime::Error, reason: String) -> CallFailure {
        if error.downcast_ref::<HostFault>().is_some() {
            CallFailure::Fault(reason)
        } else if is_memory(&reason) {
            CallFailure::Memory(reason)
        } else {
            CallFailure::Trap(reason)
        }
    }
}

/// `trap: <reason>`, `deadline`...: the outcome's word and the reason.
impl std::fmt::Display for CallFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.outcome().stored(self.reason()))
    }
}

/// How a call whose guest may return an error of its own (a step, a condition, an authheader)
/// ended, one value for each of `outcome.rs`'s words: what it answered (`ok`), the error it
/// returned (`error`), or why it produced nothing (the rest).
#[derive(Debug)]
pub enum Answered<T> {
    Ok(T),
    Error(String),
    Failed(CallFailure),
}

impl<T> Answered<T> {
    pub fn outcome(&self) -> Outcome {
        match self {
            Answered::Ok(_) => Outcome::Ok,
            Answered::Error(_) => Outcome::Error,
            Answered::Failed(failure) => failure.outcome(),
        }
    }

    /// Why it is not `ok`, in the words of its execution log.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Answered::Ok(_) => None,
            Answered::Error(reason) => Some(reason),
            Answered::Failed(failure) => failure.reason(),
        }
    }
}

impl<T> From<Result<Result<T, String>, CallFailure>> for Answered<T> {
    fn from(result: Result<Result<T, String>, CallFailure>) -> Self {
        match result {
            Ok(Ok(value)) => Answered::Ok(value),
            Ok(Err(reason)) => Answered::Error(reason),
            Err(failure) => Answered::Failed(failure),
        }
    }
}

/// An answer with the lines the guest logged (a flow's trace shows them).
#[derive(Debug)]
pub struct Logged<T> {
    pub answer: Answered<T>,
    pub log: Vec<String>,
}

/// Who is called, for whom, and until when.
pub struct Call {
    pub extension: Prepared,
    /// The extension's id (its path without `.wasm`), for its execution log.
    pub id: String,
    pub tenant: Arc<Tenant>,
    pub deadline: Duration,
    /// The contextual data of the triggering call (JSON), given to the guest's `context`.
    pub context: Option<String>,
    /// Where this call stands in a chain of events (see `domain::triggers`); an outside call's
    /// (`Lineage::outside()`) outside flow runs.
    pub lineage: crate::domain::triggers::Lineage,
    /// A local run's (`authoring`): where the platform functions note what the call writes, and
    /// where its record goes instead of the instance's execution logs. None in production.
    pub journal: Option<Journal>,
}

/// A guest that has run this long on one turn yields at its next tick whether or not anyone is
/// known to wait (an execution woken from I/O tells the fair share only once polled).
const YIELD_AFTER_NS: u64 = super::engine::TICK.as_nanos() as u64;

/// How an execution ended, with the lines its guest logged.
pub(crate) type Ended<T> = (Result<T, CallFailure>, Vec<String>);

/// Gives the input of an execution that failed, for its record (`input.rs`).
pub type Recorder = Box<dyn FnOnce() -> RecordedInput + Send>;

pub type GuestFuture<'a, T> = Pin<Box<dyn Future<Output = wasmtime::Result<T>> + Send + 'a>>;

/// What a kind asks of its guest: instantiate it in the store and call its export.
pub trait Invocation: Send + 'static {
    type Output: Send + 'static;
    /// The extension type's name, for the operator's metrics.
    const KIND: &'static str;
    /// Whether the guest may read the instance's secrets (authheader extensions only).
    const READS_SECRETS: bool = false;
    /// Whether the guest may check signatures keyed by the instance's secrets (http only).
    const CHECKS_SIGNATURES: bool = false;
    /// Whether the guest's outbound requests get the headers of the instance's authheader
    /// extensions (all but an authheader's own, which would recurse).
    const HEADERS_FOR_OUTBOUND: bool = true;
    /// Whether an extension of this kind may opt into instance reuse (`warm.rs`; http only).
    const REUSES_INSTANCE: bool = false;

    fn invoke<'a>(self, store: &'a mut Store<CallState>, extension: &'a Prepared) -> GuestFuture<'a, Self::Output>;

    /// What the execution is given, kept if it fails (taken before `invoke`).
    fn recorder(&mut self) -> Option<Recorder> {
        None
    }

    /// The guest's own error in its answer (a step or condition that declines, an authheader that
    /// makes no headers): recorded as the execution's outcome `error: <reason>`, with its input.
    fn declined(_output: &Self::Output) -> Option<&str> {
        None
    }

    /// The output with the guest's own text replaced by fixed words, for a guest whose text is
    /// withheld (one that reads secrets, outside a local run): an authheader's reason to decline.
    fn without_guest_text(output: Self::Output) -> Self::Output {
        output
    }

    /// Where the invocation notes an error of the guest's own that its output does not carry (an
    /// http extension that answered 5xx), taken before `invoke`; recorded like `declined`.
    fn answered_error(&self) -> Option<Arc<OnceLock<String>>> {
        None
    }
}

impl Runtime {
    /// The execution of `invocation` for `call`, to be awaited (or driven and spawned, as http
    /// calls do). Its log is kept when it ends: successful ones batched (`logs.rs`), failures at
    /// once.
    pub(crate) fn execution<I: Invocation>(
        self: &Arc<Self>,
        call: Call,
        invocation: I,
    ) -> impl Future<Output = Result<I::Output, CallFailure>> + Send + 'static {
        let run = self.logged_execution(call, invocation);
        async move { run.await.0 }
    }

    /// `execution`, with the lines the guest logged (a flow's trace shows them).
    pub(crate) fn logged_execution<I: Invocation>(
        self: &Arc<Self>,
        call: Call,
        invocation: I,
    ) -> impl Future<Output = (Result<I::Output, CallFailure>, Vec<String>)> + Send + 'static {
        let running = self.spawn_execution(call, invocation);
        async move {
            match running.await {
                Ok(ended) => ended,
                // Only a panic of Herald's own (the guest's are traps) or a server stopping.
                Err(e) => (Err(CallFailure::Fault(format!("the execution did not end normally: {e}"))), Vec::new()),
            }
        }
    }

    /// Starts the execution of `invocation` for `call` on the guest threads, on its instance's
    /// turns of the fair share (`fair/`); it runs to its end even if the handle is dropped.
    pub(crate) fn spawn_execution<I: Invocation>(self: &Arc<Self>, call: Call, invocation: I) -> tokio::task::JoinHandle<Ended<I::Output>> {
        let meter = Arc::new(CallMeter::new(self.cpu_budget(&call.extension.config)));
        let account = self.fair.join(call.tenant.customer_id(), call.tenant.settings.cpu_weight());
        let run = self.run_execution(call, invocation, account, Arc::clone(&meter));
        self.guests.spawn(self.fair.metered(account, meter, run))
    }

    /// The execution itself, polled on its turns (`spawn_execution`). Its log is kept when it
    /// ends: successful ones batched (`logs.rs`), failures at once.
    fn run_execution<I: Invocation>(
        self: &Arc<Self>,
        call: Call,
        mut invocation: I,
        account: AccountId,
        meter: Arc<CallMeter>,
    ) -> impl Future<Output = Ended<I::Output>> + Send + 'static {
        let runtime = Arc::clone(self);
        // From before its first turn: the wait for it is part of the call's time.
        let started = Instant::now();
        async move {
            let Call { extension, id, tenant, deadline, context, lineage, journal } = call;
            let recorder = invocation.recorder();
            let answered_error = invocation.answered_error();
            // Local runs never reuse: each is the first call of its component.
            let reuse = extension.config.reuse.filter(|_| I::REUSES_INSTANCE && journal.is_none());
            let key = WarmKeyRef { customer: tenant.customer_id(), extension: &id, version: &extension.version };
            let (mut store, served) = match reuse.and_then(|_| runtime.warm.take(key)) {
                Some(warm) => {
                    let mut store = warm.store;
                    store.data_mut().begin_next_call(tenant, I::HEADERS_FOR_OUTBOUND.then_some(&runtime));
                    (store, warm.calls)
                }
                None => {
                    let authorizer = I::HEADERS_FOR_OUTBOUND.then(|| Authorizer::new(&runtime, &tenant));
                    let state = CallState::new(
                        tenant,
                        Arc::clone(&runtime.clock),
                        &extension.config,
                        &runtime.settings,
                        &runtime.operator_hosts,
                        authorizer,
                    );
                    let mut store = Store::new(runtime.engine(), state);
                    store.limiter(|s| &mut s.limits);
                    (store, 0)
                }
            };
            let state = store.data_mut();
            state.secrets = I::READS_SECRETS.then(|| runtime.secrets.clone());
            state.signing = I::CHECKS_SIGNATURES.then(|| runtime.secrets.clone());
            state.signature_checks = 0;
            state.context = context;
            state.lineage = lineage;
            state.triggers = runtime.triggers.get().cloned();
            state.journal = journal.clone();
            // At every tick the guest is asked: past its deadline or its CPU budget it is
            // interrupted; while an execution due before it waits for a turn, it yields (and so
            // gives its turn back: `fair/`); otherwise it runs on.
            let (fair, ticks) = (Arc::clone(&runtime.fair), Arc::clone(&meter));
            store.set_epoch_deadline(1);
            store.epoch_deadline_callback(move |_| {
                if started.elapsed() >= deadline {
                    return Ok(UpdateDeadline::Interrupt);
                }
                let in_poll = ticks.in_poll();
                if ticks.spent_budget(in_poll) {
                    Ok(UpdateDeadline::Interrupt)
                } else if in_poll >= YIELD_AFTER_NS || fair.should_yield(account, in_poll) {
                    // After a whole tick it yields whoever waits: an execution woken from I/O is
                    // in line only once a guest thread has polled it.
                    Ok(UpdateDeadline::Yield(1))
                } else {
                    Ok(UpdateDeadline::Continue(1))
                }
            });
            // A guest that keeps the CPU is interrupted by the epoch callback; this bounds a guest
            // that waits (on a host call, or for its turn) past its deadline too.
            let run = invocation.invoke(&mut store, &extension);
            let outcome = tokio::time::timeout(deadline + Duration::from_millis(100), run).await;
            // The log says why in the guest's terms; the failure also carries what it wrote to
            // stderr (a panic message), for the caller's log.
            let (result, outcome, reason) = match outcome {
                Ok(Err(_)) if meter.was_over_budget() => {
                    let reason = over_budget(&meter);
                    (Err(CallFailure::Cpu(reason.clone())), Outcome::Cpu, Some(reason))
                }
                Err(_) => (Err(CallFailure::Deadline), Outcome::Deadline, None),
                Ok(Err(_)) if started.elapsed() >= deadline => (Err(CallFailure::Deadline), Outcome::Deadline, None),
                Ok(Err(e)) => {
                    let stderr = String::from_utf8_lossy(&store.data().stderr.contents()).into_owned();
                    let reason = redact(&format!("{e:#} {stderr}"), &store.data().revealed);
                    let failure = CallFailure::of(&e, reason.trim_end().to_string());
                    let outcome = failure.outcome();
                    (Err(failure), outcome, Some(redact(&format!("{e:#}"), &store.data().revealed)))
                }
                Ok(Ok(output)) => {
                    let error = I::declined(&output).map(str::to_string).or_else(|| answered_error.as_ref().and_then(|e| e.get().cloned()));
                    match error {
                        Some(reason) => (Ok(output), Outcome::Error, Some(redact(&reason, &store.data().revealed))),
                        None => (Ok(output), Outcome::Ok, None),
                    }
                }
            };
            // What a guest that reads secrets writes (its log, output, trap message) is written by
            // the code that holds them, in any form it likes (reversed, spaced out): none of it
            // is kept or passed on, only the outcome, a fixed message and the duration.
            // A local run (`journal`) is the author's own code on the author's own data: nothing
            // is withheld there, so that they can see why it declined.
            let withhold = I::READS_SECRETS && journal.is_none();
            let (result, reason) = if withhold {
                let (result, reason) = withheld(result, outcome);
                (result.map(I::without_guest_text), reason)
            } else {
                (result, reason)
            };
            let usage = receipt(&store, &meter, started);
            crate::ops::metrics::extension_execution(
                I::KIND,
                outcome.name(),
                store.data().tenant.customer_id(),
                started.elapsed().as_secs_f64(),
                usage.cpu_us,
                usage.wait_us,
            );
            let failed = outcome != Outcome::Ok;
            if outcome == Outcome::Fault {
                tracing::error!(instance = store.data().tenant.customer_id(), extension = %id, reason = reason.as_deref().unwrap_or(""), "Herald failed an extension's call");
            } else if failed {
                tracing::info!(instance = store.data().tenant.customer_id(), extension = %id, %outcome, "an extension's call ended");
            }
            // The instance's books (production calls only: a local run is the author's).
            if let (Some(books), None) = (runtime.usage.get(), &journal) {
                let spent = Spent {
                    outcome: Outcome::ALL.iter().position(|o| *o == outcome).unwrap_or(0),
                    cpu_us: usage.cpu_us,
                    wait_us: usage.wait_us,
                    outbound_requests: usage.outbound_requests,
                    outbound_bytes: usage.outbound_bytes,
                    rows_written: usage.rows_written,
                };
                let tenant = &store.data().tenant;
                tenant.counts.usage(books, tenant.customer_id()).add(&spent);
            }
            // The id goes into the record: the call needs it no more.
            let (mut entry, tenant) = execution_log(&store, id, started, outcome.stored(reason.as_deref()), withhold);
            entry.usage = Some(usage);
            if failed {
                entry.input = recorder.map(|record| record()).map(|input| input.to_kept_json(&store.data().revealed));
            }
            // A store that served well goes back for the next call if its extension opted in;
            // otherwise the instance's slot in the pooling allocator comes back now, not after
            // the write.
            match reuse {
                Some(reuse) if !failed && !store.data().limits.refused && store.data().proxy.is_some() => {
                    let key = WarmKeyRef { customer: tenant.customer_id(), extension: &entry.extension, version: &extension.version };
                    runtime.warm.give(key, store, served + 1, reuse)
                }
                _ => drop(store),
            }
            let lines = entry.log.clone();
            if let Some(journal) = journal {
                journal.keep_record(entry);
            } else if !failed {
                runtime.logs.keep(tenant, entry);
            } else if let Err(e) = crate::cold::boxed(tenant.db.insert_execution_logs(&[entry])).await {
                tracing::warn!(error = %e, "an execution log could not be kept");
            }
            (result, lines)
        }
    }

    pub fn engine(&self) -> &wasmtime::Engine {
        &self.engine
    }
}

/// What the execution left (log lines, captured output, what failed in its outbound requests)
/// for the instance's operator, without the credentials it saw.
/// The text an execution of a guest that reads secrets leaves instead of its own.
pub const WITHHELD: &str = "its own text is not kept (it holds the instance's secrets)";

/// `result` and the reason kept of a guest that reads secrets, with its own text replaced.
fn withheld<T>(result: Result<T, CallFailure>, outcome: Outcome) -> (Result<T, CallFailure>, Option<String>) {
    let fixed = |why: &str| format!("{why}; {WITHHELD}");
    match (result, outcome) {
        (Err(CallFailure::Memory(_)), _) => (Err(CallFailure::Memory(fixed("it ran out of memory"))), Some("it ran out of memory".into())),
        (Err(CallFailure::Trap(_)), _) => (Err(CallFailure::Trap(fixed("it trapped"))), Some("it trapped".into())),
        // A fault's text carries what the guest wrote to stderr too.
        (Err(CallFailure::Fault(_)), _) => {
            (Err(CallFailure::Fault(fixed("Herald failed the call"))), Some("Herald failed the call".into()))
        }
        (Ok(output), Outcome::Error) => (Ok(output), Some(fixed("it declined"))),
        (other, _) => (other, None),
    }
}

/// The reason of a call stopped for its CPU budget, in the author's terms.
fn over_budget(meter: &CallMeter) -> String {
    format!(
        "it used up its CPU budget: {} ms of processor time (cpu_ms {}; time waiting for I/O or for a turn does not count)",
        meter.cpu_so_far().as_millis(),
        meter.budget().as_millis()
    )
}

/// What the execution used, for its record (the poll under way counted up to now).
fn receipt(store: &Store<CallState>, meter: &CallMeter, started: Instant) -> Usage {
    let state = store.data();
    let (outbound_requests, outbound_bytes) = state.outbound_sent();
    let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
    Usage {
        cpu_us: micros(meter.cpu_so_far()),
        wall_us: micros(started.elapsed()),
        wait_us: micros(meter.waiting()),
        peak_memory_bytes: state.limits.peak as u64,
        host_calls: state.host_calls,
        outbound_requests,
        outbound_bytes,
        rows_written: state.rows_written.load(std::sync::atomic::Ordering::Relaxed),
    }
}

/// The execution's record under the extension's id, and the instance it is kept in.
fn execution_log(
    store: &Store<CallState>,
    extension: String,
    started: Instant,
    outcome: String,
    withhold: bool,
) -> (ExecutionLog, Arc<Tenant>) {
    let state = store.data();
    if withhold {
        let entry = ExecutionLog {
            extension,
            at: crate::store::now_millis(),
            duration_ms: started.elapsed().as_millis() as i64,
            outcome,
            log: Vec::new(),
            stdout: String::new(),
            stderr: String::new(),
            input: None,
            usage: None,
        };
        return (entry, Arc::clone(&state.tenant));
    }
    // Most calls saw no credential: their record is taken as it is.
    let hide = |text: String| if state.revealed.is_empty() { text } else { redact(&text, &state.revealed) };
    let mut log: Vec<String> = state.log.iter().map(|line| hide(line.clone())).collect();
    log.extend(state.outbound_notes().into_iter().map(|note| format!("error: {}", hide(note))));
    let entry = ExecutionLog {
        extension,
        at: crate::store::now_millis(),
        duration_ms: started.elapsed().as_millis() as i64,
        outcome,
        log,
        stdout: hide(String::from_utf8_lossy(&state.stdout.contents()).into_owned()),
        stderr: hide(String::from_utf8_lossy(&state.stderr.contents()).into_owned()),
        input: None,
        usage: None,
    };
    (entry, Arc::clone(&state.tenant))
}
