//! What each kind of node does for one recipient: conditions (a built-in filter or a condition
//! extension), steps (a step extension), and the built-in `wait`, `set`, `event` and `send`. Step
//! and condition extensions go through the runtime's shared call path with their own deadline
//! (`timeout_ms` of their `herald:config`, else the operator's default) and memory cap; one that
//! fails or times out ends the run for this recipient with the reason.

use std::time::Duration;

use serde_json::Value as Json;

use super::engine::FlowEngine;
use crate::assets::MediaArea;
use crate::domain;
use crate::domain::triggers::{Happening, Lineage, MAX_CHAIN_DEPTH};
use crate::model::fields::Fields;
use crate::model::flow::{parse_wait, ConditionNode, Flow, Node, NodeKind};
use crate::runtime::{self as call, person_fields, Answered, Call, ExtensionKind, Logged};
use crate::store::tenant::Recipient;
use crate::tenants::Tenant;

/// What a node decided.
#[derive(Debug)]
pub enum Outcome {
    Next,
    /// A condition was false and has `else` nodes: the run goes on there.
    Else,
    /// The run ends here, as it should (a false condition without `else`).
    Stop(String),
    /// The run ends here because something failed.
    Fail(String),
    Wait(Duration),
}

impl Outcome {
    pub fn describe(&self) -> String {
        match self {
            Outcome::Next => "ok".into(),
            Outcome::Else => "false: else".into(),
            Outcome::Stop(why) | Outcome::Fail(why) => why.clone(),
            Outcome::Wait(d) => format!("waiting {}s", d.as_secs()),
        }
    }

    /// Which way the run went on from the node.
    pub fn took(&self) -> Took {
        match self {
            Outcome::Next => Took::Next,
            Outcome::Else => Took::Else,
            Outcome::Stop(_) => Took::End,
            Outcome::Fail(_) => Took::Failed,
            Outcome::Wait(_) => Took::Wait,
        }
    }
}

/// Which way a run went on from a node: the `took` of its trace entry, which the flow's counts
/// and diagram add up (`store::tenant::flow_stats`, `GET /flows/{name}/stats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Took {
    Next,
    Else,
    /// The run ended here as it should.
    End,
    Failed,
    Wait,
}

impl Took {
    pub const ALL: [Took; 5] = [Took::Next, Took::Else, Took::End, Took::Failed, Took::Wait];

    pub fn as_str(self) -> &'static str {
        match self {
            Took::Next => "next",
            Took::Else => "else",
            Took::End => "end",
            Took::Failed => "failed",
            Took::Wait => "wait",
        }
    }

    /// The word of a trace entry, as written by `as_str`.
    pub fn parse(word: &str) -> Option<Took> {
        Took::ALL.into_iter().find(|t| t.as_str() == word)
    }
}

/// A node's outcome, its kind, and what an extension logged.
pub struct NodeStep {
    pub kind: &'static str,
    pub outcome: Outcome,
    pub log: Vec<String>,
}

fn step(kind: &'static str, outcome: Outcome) -> NodeStep {
    NodeStep { kind, outcome, log: Vec::new() }
}

impl FlowEngine {
    pub(super) async fn node(
        &self,
        tenant: &std::sync::Arc<Tenant>,
        lineage: &Lineage,
        flow: &Flow,
        node: &Node,
        recipient: &Recipient,
        context: Option<&Json>,
    ) -> NodeStep {
        let kind = match node.kind() {
            Ok(kind) => kind,
            // The flow was checked when it was saved; a stored run of another version may not be.
            Err(e) => return step("invalid", Outcome::Fail(e)),
        };
        match kind {
            NodeKind::Condition(c, otherwise) => {
                let mut s = self.condition(tenant, lineage, c, recipient, context).await;
                if let Outcome::Else = s.outcome {
                    if otherwise.is_none() {
                        s.outcome = Outcome::Stop("the condition is false".into());
                    }
                }
                s
            }
            NodeKind::Step(id) => self.step(tenant, lineage, id, recipient, context).await,
            NodeKind::Wait(text) => step("wait", parse_wait(text).map_or_else(Outcome::Fail, Outcome::Wait)),
            NodeKind::Set(fields) => step("set", set(tenant, recipient, fields).await),
            NodeKind::Event(event) => step("event", self.event(tenant, lineage, recipient, event).await),
            NodeKind::Send(template) => step("send", self.send(tenant, flow, recipient, template, context).await),
        }
    }

    async fn condition(
        &self,
        tenant: &std::sync::Arc<Tenant>,
        lineage: &Lineage,
        c: &ConditionNode,
        recipient: &Recipient,
        context: Option<&Json>,
    ) -> NodeStep {
        if let Some(filter) = &c.filter {
            let holds = match domain::filter(Some(filter), &tenant.model.def, tenant) {
                Ok(Some(condition)) => tenant
                    .db
                    .recipient_matches(recipient.key, &condition)
                    .await
                    .map_err(|e| format!("the filter could not be evaluated: {e}")),
                Ok(None) => Ok(true),
                Err(e) => Err(format!("the filter '{filter}' is not valid: {}", e)),
            };
            return step(
                "condition",
                match holds {
                    Ok(true) => Outcome::Next,
                    Ok(false) => Outcome::Else,
                    Err(e) => Outcome::Fail(e),
                },
            );
        }
        let Some(id) = &c.extension else { return step("condition", Outcome::Fail("a condition without filter or extension".into())) };
        let call = match self.call(tenant, lineage, id, ExtensionKind::Condition, context).await {
            Ok(call) => call,
            Err(why) => return step("condition", Outcome::Fail(why)),
        };
        let Logged { answer, log } = self.runtime.call_condition(call, person_fields(&tenant.model, &recipient.values)).await;
        let outcome = match answer {
            Answered::Ok(true) => Outcome::Next,
            Answered::Ok(false) => Outcome::Else,
            other => Outcome::Fail(ended("condition", id, other.outcome(), other.reason())),
        };
        NodeStep { kind: "condition", outcome, log }
    }

    async fn step(
        &self,
        tenant: &std::sync::Arc<Tenant>,
        lineage: &Lineage,
        id: &str,
        recipient: &Recipient,
        context: Option<&Json>,
    ) -> NodeStep {
        let call = match self.call(tenant, lineage, id, ExtensionKind::Step, context).await {
            Ok(call) => call,
            Err(why) => return step("step", Outcome::Fail(why)),
        };
        let Logged { answer, log } = self.runtime.call_step(call, person_fields(&tenant.model, &recipient.values)).await;
        let outcome = match answer {
            Answered::Ok(()) => Outcome::Next,
            other => Outcome::Fail(ended("step", id, other.outcome(), other.reason())),
        };
        NodeStep { kind: "step", outcome, log }
    }

    /// The call of extension `id` of `kind` for this run, or why there is none.
    async fn call(
        &self,
        tenant: &std::sync::Arc<Tenant>,
        lineage: &Lineage,
        id: &str,
        kind: ExtensionKind,
        context: Option<&Json>,
    ) -> Result<Call, String> {
        let extension = match self.runtime.extension(tenant, id, kind).await {
            Ok(Some(e)) => e,
            Ok(None) => return Err(format!("extension '{id}' is not uploaded as a {kind} extension")),
            Err(e) => return Err(format!("extension '{id}' could not be loaded: {e:#}")),
        };
        Ok(Call {
            deadline: self.runtime.deadline(&extension.config),
            extension,
            id: id.to_string(),
            tenant: tenant.clone(),
            context: context.map(|c| c.to_string()),
            lineage: lineage.clone(),
            journal: None,
        })
    }

    async fn event(&self, tenant: &std::sync::Arc<Tenant>, lineage: &Lineage, recipient: &Recipient, event: &str) -> Outcome {
        let depth = lineage.depth;
        if depth >= MAX_CHAIN_DEPTH {
            return Outcome::Fail(format!("event {event} not achieved: this run is {depth} events down a chain, the most there may be"));
        }
        let now = self.clock.now_utc();
        if let Err(e) = domain::recipients::achieve_event(tenant, recipient.key, event, now).await {
            return Outcome::Fail(format!("event {event} could not be achieved: {}", e));
        }
        match self.start_triggered(tenant, recipient.key, Happening::EventAchieved(event), &lineage.next()).await {
            Ok(Ok(_)) => Outcome::Next,
            Ok(Err(full)) => Outcome::Fail(format!("event {event} was achieved but its flows did not start: {full}")),
            Err(e) => Outcome::Fail(format!("event {event} was achieved but its flows could not start: {e}")),
        }
    }

    async fn send(&self, tenant: &Tenant, flow: &Flow, recipient: &Recipient, template: &str, context: Option<&Json>) -> Outcome {
        let media = MediaArea::new(&self.data_dir, tenant.customer_id());
        let template = match super::send::find(tenant, &media, template).await {
            Ok(t) => t,
            Err(why) => return Outcome::Fail(why),
        };
        let variables = match super::send::variables(tenant, recipient, context).await {
            Ok(v) => v,
            Err(why) => return Outcome::Fail(why),
        };
        let now = self.clock.now_utc();
        let entry = match super::send::render(&template, &variables, &flow.name, now) {
            Ok(entry) => entry,
            Err(why) => return Outcome::Fail(format!("nothing sent: {why}")),
        };
        match domain::recipients::record_communication(tenant, recipient.key, &entry).await {
            Ok(()) => Outcome::Next,
            Err(e) => Outcome::Fail(format!("the communication history could not be written: {e}")),
        }
    }
}

/// A `set` node: the values were checked against the model when the flow was saved; they are
/// read again against the model as it is now.
async fn set(tenant: &Tenant, recipient: &Recipient, fields: &serde_json::Map<String, Json>) -> Outcome {
    let values = match Fields::person_data(&tenant.model.def).assign_json(fields, &tenant.model.formats) {
        Ok(values) => values,
        Err(e) => return Outcome::Fail(format!("set: {e}")),
    };
    match domain::recipients::update(tenant, recipient, values).await {
        Ok(_) => Outcome::Next,
        Err(e) => Outcome::Fail(format!("set: {}", e)),
    }
}

/// Why a run ended at an extension, with the call's outcome word (`runtime::outcome`):
/// `step 'tagger' ended error: no USER_ID`, `condition 'slow' ended deadline: the extension ran
/// past its deadline`.
fn ended(kind: &str, id: &str, outcome: call::Outcome, reason: Option<&str>) -> String {
    format!("{kind} '{id}' ended {outcome}: {}", reason.unwrap_or(outcome.meaning()))
}
