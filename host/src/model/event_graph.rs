//! The graph of events that flows make: a flow triggered by an event whose `event` nodes achieve
//! other events triggers the flows of those. A cycle in it (a flow whose events lead back to its
//! own trigger) could only repeat until the chain bounds stop it (`domain::triggers`), so the API
//! refuses such a flow when it is defined.

use super::flow::{each_node, Flow, NodeKind};

/// The events `flow`'s `event` nodes achieve (in `else` branches too).
fn achieved_events(flow: &Flow) -> Vec<&str> {
    let mut out = Vec::new();
    each_node(&flow.nodes, "node", 0, &mut |_, node| {
        if let Ok(NodeKind::Event(event)) = node.kind() {
            out.push(event);
        }
    });
    out
}

/// Whether the events `flow` achieves lead back, through the flows they trigger (`flow` and
/// `others`), to the event that triggers `flow`: such a cycle would only repeat until the chain
/// bound stops it, so it is refused when the flow is defined. Says which flows make the cycle.
/// (A step extension that achieves events is not seen here: the chain bounds catch those.)
pub fn event_cycle(flow: &Flow, others: &[&Flow]) -> Option<String> {
    let start = flow.trigger.event.as_deref()?;
    let all: Vec<&Flow> = std::iter::once(flow).chain(others.iter().copied().filter(|f| f.name != flow.name)).collect();
    // Breadth first over events, remembering which flow achieved each first.
    let mut achieved_by: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    let mut queue: std::collections::VecDeque<(&str, &str)> = achieved_events(flow).into_iter().map(|e| (e, flow.name.as_str())).collect();
    while let Some((event, by)) = queue.pop_front() {
        if achieved_by.contains_key(event) {
            continue;
        }
        achieved_by.insert(event, by);
        if event == start {
            // Back from the trigger to `flow`: each flow, and the event that triggered it.
            let mut path = vec![format!("event {event}")];
            let mut at = event;
            for _ in 0..all.len() {
                let by = achieved_by[at];
                path.push(format!("flow {by}"));
                let trigger = all.iter().find(|f| f.name == by).and_then(|f| f.trigger.event.as_deref());
                match trigger {
                    Some(trigger) if by != flow.name => {
                        path.push(format!("event {trigger}"));
                        at = trigger;
                    }
                    _ => break,
                }
            }
            path.reverse();
            return Some(format!(
                "the flow's events lead back to its own trigger ({}): each run would start the next until the chain bound stops it",
                path.join(" -> ")
            ));
        }
        for f in all.iter().filter(|f| f.trigger.event.as_deref() == Some(event)) {
            queue.extend(achieved_events(f).into_iter().map(|e| (e, f.name.as_str())));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cycles_of_events_are_found_through_other_flows() {
        let flow = |name: &str, trigger: &str, achieves: &str| -> Flow {
            let mut f: Flow = serde_json::from_value(
                json!({"trigger": {"event": trigger}, "nodes": [{"condition": {"filter": "AGE>1"}, "else": [{"event": achieves}]}]}),
            )
            .unwrap();
            f.name = name.into();
            f
        };
        let a = flow("A", "E1", "E2");
        let b = flow("B", "E2", "E3");
        let c = flow("C", "E3", "E1");
        let cycle = event_cycle(&a, &[&b, &c]).unwrap();
        assert!(cycle.contains("flow A -> event E2 -> flow B -> event E3 -> flow C -> event E1"), "{cycle}");
        assert!(event_cycle(&a, &[&b]).is_none());
        let own = flow("SELF", "E1", "E1");
        assert!(event_cycle(&own, &[]).unwrap().contains("(flow SELF -> event E1)"));
        // Its own older version is not another flow.
        assert!(event_cycle(&a, &[&flow("A", "E2", "E1")]).is_none());
    }
}
