//! Flows: what an instance does for a recipient when something happens. This module is their
//! format and the checks that need only the data model (`problems`); the checks against the
//! instance's assets and extensions, and running them, live in `crate::flows`.
//!
//! The format, written for a marketer to read:
//!
//! ```json
//! {"description": "Welcome new subscribers",
//!  "trigger": {"event": "WELCOME"},
//!  "contextSchema": "signup",
//!  "nodes": [
//!    {"condition": {"filter": "EMAIL=='*'"}},
//!    {"condition": {"extension": "is-adult"}, "else": [{"send": "welcome-teen"}]},
//!    {"step": "assign-store"},
//!    {"wait": "2d"},
//!    {"set": {"OPTIN": true}},
//!    {"event": "NEWSLETTER_SIGNUP"},
//!    {"send": "welcome"}]}
//! ```
//!
//! In the instance definition TOML the same keys:
//!
//! ```toml
//! [[model.flows]]
//! name = "WELCOME_MAIL"
//! trigger = { event = "WELCOME" }
//! nodes = [{ condition = { filter = "EMAIL=='*'" } }, { send = "welcome" }]
//! ```
//!
//! A trigger is one of `{"event": NAME}`, `{"recipientCreated": true}` or `{"schedule": CRON,
//! "targetGroup": NAME}` / `{"schedule": CRON, "filter": RSQL}` (five-field cron, UTC). Each node
//! has exactly one of `condition`, `step`, `wait`, `set`, `event`, `send`; a condition may have
//! `else` nodes, run when it is false (without them a false condition ends the run). `wait` is a
//! whole number and a unit: `30s`, `15m`, `2h`, `3d`. `send` names a template of the Assets API by
//! its path (`welcome` is `templates/welcome`, with or without its extension).

use std::collections::HashSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use super::fields::{Fields, Given};
use super::Model;
use crate::rsql;

/// A flow as it is defined (its name comes from the route or the TOML's `name`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Flow {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub trigger: Trigger,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_schema: Option<String>,
    pub nodes: Vec<Node>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Trigger {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipient_created: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_group: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
}

/// A condition: a built-in filter on the recipient's Person Data, or a condition extension.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConditionNode {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension: Option<String>,
}

/// One node, as written: exactly one of its kinds is set (`kind` reads it).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Node {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<ConditionNode>,
    #[serde(default, rename = "else", skip_serializing_if = "Option::is_none")]
    pub otherwise: Option<Vec<Node>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<Map<String, Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send: Option<String>,
}

/// What a node does, read from its one set key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NodeKind<'a> {
    Condition(&'a ConditionNode, Option<&'a [Node]>),
    Step(&'a str),
    Wait(&'a str),
    Set(&'a Map<String, Json>),
    Event(&'a str),
    Send(&'a str),
}

impl Node {
    /// The node's kind, or why it has none (no key, or several).
    pub fn kind(&self) -> Result<NodeKind<'_>, String> {
        let mut kinds = Vec::new();
        if let Some(c) = &self.condition {
            kinds.push(NodeKind::Condition(c, self.otherwise.as_deref()));
        }
        if let Some(s) = &self.step {
            kinds.push(NodeKind::Step(s));
        }
        if let Some(w) = &self.wait {
            kinds.push(NodeKind::Wait(w));
        }
        if let Some(s) = &self.set {
            kinds.push(NodeKind::Set(s));
        }
        if let Some(e) = &self.event {
            kinds.push(NodeKind::Event(e));
        }
        if let Some(s) = &self.send {
            kinds.push(NodeKind::Send(s));
        }
        match kinds.as_slice() {
            [one] => Ok(*one),
            [] => Err("a node needs one of condition, step, wait, set, event, send".into()),
            _ => Err("a node has one of condition, step, wait, set, event, send, not several".into()),
        }
    }
}

/// The longest wait: a year.
pub const MAX_WAIT: Duration = Duration::from_secs(366 * 24 * 3600);

/// `30s`, `15m`, `2h`, `3d` as a duration (at least a second, at most `MAX_WAIT`).
pub fn parse_wait(text: &str) -> Result<Duration, String> {
    let wrong = || format!("wait '{text}' must be a whole number and a unit: s, m, h or d (such as 30s, 15m, 2h, 3d)");
    let text = text.trim();
    let unit = text.chars().last().ok_or_else(wrong)?;
    let seconds_per = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return Err(wrong()),
    };
    let count: u64 = text[..text.len() - 1].parse().map_err(|_| wrong())?;
    let wait = Duration::from_secs(count.checked_mul(seconds_per).ok_or_else(wrong)?);
    if wait.is_zero() || wait > MAX_WAIT {
        return Err(format!("wait '{text}' must be at least 1s and at most 366d"));
    }
    Ok(wait)
}

/// The longest description of a flow, in characters.
pub const MAX_DESCRIPTION: usize = 2000;

/// The most nodes in one flow, `else` branches included, and the deepest nesting of branches.
pub const MAX_NODES: usize = 100;
pub const MAX_DEPTH: usize = 8;

/// Every problem of `flow` that the data model alone shows (names of events, fields and target
/// groups, filters, waits, values), each saying where.
pub fn problems(flow: &Flow, model: &Model) -> Vec<String> {
    let mut out = Vec::new();
    let def = &model.def;
    let trigger = &flow.trigger;
    if let Some(description) = &flow.description {
        if description.chars().count() > MAX_DESCRIPTION {
            out.push(format!("the description has {} characters; at most {MAX_DESCRIPTION}", description.chars().count()));
        }
        if description.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
            out.push("the description holds a control character (such as NUL, U+0000); text, new lines and tabs only".into());
        }
    }
    let set = [trigger.event.is_some(), trigger.recipient_created.is_some(), trigger.schedule.is_some()];
    match set.iter().filter(|s| **s).count() {
        1 => {}
        0 => out.push("the trigger needs one of event, recipientCreated, schedule".into()),
        _ => out.push("the trigger has one of event, recipientCreated, schedule, not several".into()),
    }
    if let Some(event) = &trigger.event {
        if !def.events.iter().any(|e| &e.name == event) {
            out.push(format!("trigger: unknown event '{event}'"));
        }
    }
    if trigger.recipient_created == Some(false) {
        out.push("trigger: recipientCreated must be true (leave it out otherwise)".into());
    }
    match (&trigger.schedule, &trigger.target_group, &trigger.filter) {
        (Some(cron), group, filter) => {
            if let Err(e) = super::cron::parse(cron) {
                out.push(format!("trigger: {e}"));
            }
            match (group, filter) {
                (Some(g), None) if !def.target_groups.iter().any(|t| &t.name == g) => {
                    out.push(format!("trigger: unknown target group '{g}'"))
                }
                (Some(_), None) => {}
                (None, Some(f)) => person_filter(f, model, "trigger filter", &mut out),
                (None, None) => out.push("trigger: a schedule runs over a targetGroup or a filter; give one".into()),
                (Some(_), Some(_)) => out.push("trigger: give a targetGroup or a filter, not both".into()),
            }
        }
        (None, group, filter) if group.is_some() || filter.is_some() => {
            out.push("trigger: targetGroup and filter go with a schedule".into());
        }
        _ => {}
    }
    if flow.nodes.is_empty() {
        out.push("a flow needs at least one node".into());
    }
    let mut count = 0;
    nodes(&flow.nodes, model, "node", 0, &mut count, &mut out);
    if count > MAX_NODES {
        out.push(format!("a flow has at most {MAX_NODES} nodes; this one has {count}"));
    }
    out
}

fn person_filter(text: &str, model: &Model, place: &str, out: &mut Vec<String>) {
    if let Err(e) = rsql::compile_text(text, &model.def, &model.formats, rsql::Dialect::Sqlite) {
        let why = match e {
            rsql::FilterError::UnknownSelector(s) => format!("unknown Person Data field {s}"),
            rsql::FilterError::Invalid(m) => m,
        };
        out.push(format!("{place} '{text}': {why}"));
    }
}

/// Checks `list` (at `path`, such as `node 2 else 1`, `depth` `else` branches down), counting
/// every node.
fn nodes(list: &[Node], model: &Model, path: &str, depth: usize, count: &mut usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH {
        out.push(format!("{path}: branches nest at most {MAX_DEPTH} deep"));
        return;
    }
    let def = &model.def;
    for (i, node) in list.iter().enumerate() {
        *count += 1;
        let at = format!("{path} {}", i + 1);
        let kind = match node.kind() {
            Ok(k) => k,
            Err(e) => {
                out.push(format!("{at}: {e}"));
                continue;
            }
        };
        if node.otherwise.is_some() && !matches!(kind, NodeKind::Condition(..)) {
            out.push(format!("{at}: only a condition has else nodes"));
        }
        match kind {
            NodeKind::Condition(c, otherwise) => {
                match (&c.filter, &c.extension) {
                    (Some(f), None) => person_filter(f, model, &format!("{at}: condition filter"), out),
                    (None, Some(e)) => extension_name(e, &at, out),
                    _ => out.push(format!("{at}: a condition has a filter or an extension (one of them)")),
                }
                if let Some(other) = otherwise {
                    nodes(other, model, &format!("{at} else"), depth + 1, count, out);
                }
            }
            NodeKind::Step(e) => extension_name(e, &at, out),
            NodeKind::Wait(w) => {
                if let Err(e) = parse_wait(w) {
                    out.push(format!("{at}: {e}"));
                }
            }
            NodeKind::Set(fields) => {
                if fields.is_empty() {
                    out.push(format!("{at}: set needs at least one field"));
                }
                let person = Fields::person_data(def);
                for (name, json) in fields {
                    let checked = person.position(name).and_then(|i| {
                        if *name == def.recipient_id {
                            return Err(format!("the Recipient Id {name} cannot change"));
                        }
                        person.value(i, Given::Json(json), &model.formats)
                    });
                    if let Err(e) = checked {
                        out.push(format!("{at}: set: {e}"));
                    }
                }
            }
            NodeKind::Event(e) => {
                if !def.events.iter().any(|d| d.name == e) {
                    out.push(format!("{at}: unknown event '{e}'"));
                }
            }
            NodeKind::Send(template) => {
                if crate::assets::RelPath::parse("template", template).map(|p| p.is_root()).unwrap_or(true) {
                    out.push(format!("{at}: send: '{template}' is not a template path"));
                }
            }
        }
    }
}

fn extension_name(id: &str, at: &str, out: &mut Vec<String>) {
    if crate::assets::RelPath::parse("extension", id).map(|p| p.is_root()).unwrap_or(true) {
        out.push(format!("{at}: '{id}' is not an extension id"));
    }
}

/// Every node of `list` with where it is (`node 2 else 1`), branches included (as deep as
/// `MAX_DEPTH`; `depth` is how many `else` branches down `list` is, 0 at the top).
pub fn each_node<'a>(list: &'a [Node], path: &str, depth: usize, visit: &mut dyn FnMut(&str, &'a Node)) {
    if depth > MAX_DEPTH {
        return;
    }
    for (i, node) in list.iter().enumerate() {
        let at = format!("{path} {}", i + 1);
        visit(&at, node);
        if let Some(other) = &node.otherwise {
            each_node(other, &format!("{at} else"), depth + 1, visit);
        }
    }
}

/// The names used twice among `flows`.
pub fn duplicate_names(flows: &[Flow]) -> Vec<String> {
    let mut seen = HashSet::new();
    flows.iter().filter(|f| !seen.insert(f.name.to_ascii_lowercase())).map(|f| f.name.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn branches_nest_eight_deep_and_no_deeper() {
        let nested = |levels: usize| -> Flow {
            let mut nodes = json!([{"send": "x"}]);
            for _ in 0..levels {
                nodes = json!([{"condition": {"filter": "AGE>1"}, "else": nodes}]);
            }
            serde_json::from_value(json!({"trigger": {"event": "WELCOME"}, "nodes": nodes})).unwrap()
        };
        assert!(problems(&nested(MAX_DEPTH), &demo()).is_empty(), "{:?}", problems(&nested(MAX_DEPTH), &demo()));
        let deeper = problems(&nested(MAX_DEPTH + 1), &demo()).join("\n");
        assert!(deeper.contains("branches nest at most 8 deep"), "{deeper}");
    }

    #[test]
    fn json_and_toml_read_the_same_flow() {
        let json: Flow = serde_json::from_str(
            r#"{"trigger": {"event": "WELCOME"}, "nodes": [{"condition": {"filter": "EMAIL=='*'"}, "else": [{"step": "x"}]}, {"send": "welcome"}]}"#,
        )
        .unwrap();
        #[derive(Deserialize)]
        struct Holder {
            flows: Vec<Flow>,
        }
        let toml: Holder = toml::from_str(
            "[[flows]]\ntrigger = { event = \"WELCOME\" }\nnodes = [{ condition = { filter = \"EMAIL=='*'\" }, else = [{ step = \"x\" }] }, { send = \"welcome\" }]\n",
        )
        .unwrap();
        assert_eq!(toml.flows[0], json);
        assert!(matches!(json.nodes[0].kind(), Ok(NodeKind::Condition(_, Some(other))) if other.len() == 1));
        assert_eq!(json.nodes[1].kind(), Ok(NodeKind::Send("welcome")));
        assert!(Node { step: Some("a".into()), send: Some("b".into()), ..Node::default() }.kind().is_err());
        assert!(Node::default().kind().is_err());
        assert!(serde_json::from_str::<Flow>(r#"{"trigger": {}, "nodes": [], "colour": 1}"#).is_err(), "unknown keys are refused");
    }

    fn demo() -> Model {
        Model::new(super::super::DefinitionFile::from_toml(super::super::DEMO).unwrap().model).unwrap()
    }

    #[test]
    fn every_problem_is_reported_with_where_it_is() {
        let flow: Flow = serde_json::from_value(serde_json::json!({
            "trigger": {"event": "NOPE", "schedule": "not cron"},
            "nodes": [
                {"condition": {"filter": "COLOUR==red"}, "else": [{"set": {"AGE": "old", "USER_ID": 3}}]},
                {"step": "a", "send": "b"},
                {"wait": "soon"},
                {"event": "ALSO_NOPE"},
                {"step": "../x"},
                {"condition": {}},
                {"send": "welcome", "else": []}
            ]
        }))
        .unwrap();
        let found = problems(&flow, &demo()).join("\n");
        for expected in [
            "not several",
            "unknown event 'NOPE'",
            "schedule 'not cron' has 2 fields",
            "node 1: condition filter 'COLOUR==red': unknown Person Data field COLOUR",
            "node 1 else 1: set: Person Data field AGE expects a NUMBER",
            "node 1 else 1: set: the Recipient Id USER_ID cannot change",
            "node 2: a node has one of",
            "node 3: wait 'soon'",
            "node 4: unknown event 'ALSO_NOPE'",
            "node 5: '../x' is not an extension id",
            "node 6: a condition has a filter or an extension",
            "node 7: only a condition has else nodes",
        ] {
            assert!(found.contains(expected), "missing {expected:?} in:\n{found}");
        }
        let good: Flow = serde_json::from_value(serde_json::json!({
            "trigger": {"schedule": "0 9 * * 1", "targetGroup": "ADULTS"},
            "nodes": [{"condition": {"extension": "adult"}}, {"wait": "2d"}, {"set": {"CITY": "Paris", "OPTIN": true}}, {"send": "welcome"}]
        }))
        .unwrap();
        assert_eq!(problems(&good, &demo()), Vec::<String>::new());
    }

    #[test]
    fn waits_have_a_unit_and_bounds() {
        assert_eq!(parse_wait("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_wait("2d"), Ok(Duration::from_secs(172_800)));
        for bad in ["", "5", "0s", "-1m", "1.5h", "400d", "99999999999999999999d", "3w"] {
            assert!(parse_wait(bad).is_err(), "{bad}");
        }
    }
}
