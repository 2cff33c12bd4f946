// A flow drawn as a diagram: its trigger, then its nodes top to bottom, each saying what it runs
// (the condition's filter or extension, the step, the wait, the fields set, the event, the
// template), with a false condition's `else` nodes as a branch beside it. On the flow's page
// each node carries its counts over a period (GET /flows/{name}/stats); on a run's page the
// nodes the run went through are marked with what happened there, and the rest are dimmed.
//
// Nodes are named as the server names them in traces and counts: `node 2`, and inside node 2's
// `else` branch `node 2 else 1`, `node 2 else 2`...
import cronstrue from "cronstrue";

import type { Json, JsonObject } from "../api";

/** The counts of one node (GET /flows/{name}/stats `nodes`). */
export interface NodeCounts {
  node: string;
  entered: number;
  next: number;
  else: number;
  end: number;
  failed: number;
  wait: number;
}

/** One entry of a run's trace. */
export interface TraceEntry {
  node?: string;
  kind?: string;
  result?: string;
  took?: string;
  [key: string]: Json | undefined;
}

/** A flow's trigger in words: "When event WELCOME is achieved", "At 09:00, only on Monday (UTC), ...". */
export function triggerInWords(trigger: Json | undefined): string {
  if (!trigger || typeof trigger !== "object" || Array.isArray(trigger)) return "";
  if (typeof trigger.event === "string") return `When event ${trigger.event} is achieved`;
  if (trigger.recipientCreated) return "When a recipient is created";
  if (typeof trigger.schedule === "string") {
    let when: string;
    try {
      when = cronstrue.toString(trigger.schedule, { use24HourTimeFormat: true, throwExceptionOnParseError: true });
    } catch {
      when = `On schedule ${trigger.schedule}`;
    }
    const whom =
      typeof trigger.targetGroup === "string"
        ? `for every recipient of target group ${trigger.targetGroup}`
        : `for every recipient matching ${String(trigger.filter ?? "")}`;
    return `${when} (UTC), ${whom}`;
  }
  return JSON.stringify(trigger);
}

/** What a node does, as a kind and a line of what it runs. */
function described(node: JsonObject): { kind: string; what: string } {
  const condition = node.condition as JsonObject | undefined;
  if (condition) {
    if (typeof condition.filter === "string") return { kind: "Condition", what: `filter ${condition.filter}` };
    return { kind: "Condition", what: `extension ${String(condition.extension ?? "")}` };
  }
  if (typeof node.step === "string") return { kind: "Step", what: `extension ${node.step}` };
  if (typeof node.wait === "string") return { kind: "Wait", what: node.wait };
  if (node.set && typeof node.set === "object") {
    const fields = Object.entries(node.set as JsonObject).map(([name, value]) => `${name} = ${JSON.stringify(value)}`);
    return { kind: "Set", what: fields.join(", ") };
  }
  if (typeof node.event === "string") return { kind: "Event", what: `achieve ${node.event}` };
  if (typeof node.send === "string") return { kind: "Send", what: `template ${node.send}` };
  return { kind: "Node", what: JSON.stringify(node) };
}

/** "entered 12 · next 10 · else 2": a node's counts, the ways nobody took left out. */
function countsLine(counts: NodeCounts | undefined): string {
  if (!counts) return "entered 0";
  const parts = [`entered ${counts.entered}`];
  for (const way of ["next", "else", "wait", "end", "failed"] as const) {
    if (counts[way] > 0) parts.push(`${way} ${counts[way]}`);
  }
  return parts.join(" · ");
}

interface Marks {
  counts?: Map<string, NodeCounts>;
  trace?: Map<string, TraceEntry>;
}

function Nodes({ nodes, path, marks }: { nodes: Json[]; path: number[]; marks: Marks }) {
  return (
    <ol class="flow-nodes">
      {nodes.map((n, i) => {
        const node = (n ?? {}) as JsonObject;
        const place = [...path, i + 1];
        const label = `node ${place.join(" else ")}`;
        const { kind, what } = described(node);
        const counts = marks.counts?.get(label);
        const visited = marks.trace?.get(label);
        const state = marks.trace ? (visited ? `visited took-${visited.took ?? "next"}` : "unvisited") : "";
        const branch = Array.isArray(node.else) ? node.else : null;
        return (
          <li class="flow-step">
            <div class="flow-row">
              <div class={`flow-node ${state}`} role="group" aria-label={label}>
                <div class="flow-node-head">
                  <span class="flow-label">{label}</span> <strong>{kind}</strong>
                </div>
                <code class="flow-what">{what}</code>
                {marks.counts ? <div class="flow-counts">{countsLine(counts)}</div> : null}
                {visited ? <div class="flow-result">{visited.result ?? ""}</div> : null}
              </div>
              {branch ? (
                <div class="flow-branch" role="group" aria-label={`${label} else`}>
                  <div class="flow-branch-label">else</div>
                  <Nodes nodes={branch} path={place} marks={marks} />
                  {/* The else nodes are the rest of the run for those recipients. */}
                  <div class="flow-end">End</div>
                </div>
              ) : null}
            </div>
          </li>
        );
      })}
    </ol>
  );
}

/** The flow as a diagram, with each node's counts, or a run's path through it. */
export function FlowDiagram({
  flow,
  counts,
  trace,
}: {
  flow: JsonObject;
  counts?: NodeCounts[];
  trace?: TraceEntry[];
}) {
  const marks: Marks = {
    counts: counts ? new Map(counts.map((c) => [c.node, c])) : undefined,
    trace: trace ? new Map(trace.filter((t) => typeof t.node === "string").map((t) => [t.node as string, t])) : undefined,
  };
  return (
    <figure class="flow" aria-label="Flow diagram">
      <div class="flow-node flow-trigger" role="group" aria-label="trigger">
        <strong>Trigger</strong> {triggerInWords(flow.trigger)}
      </div>
      <Nodes nodes={Array.isArray(flow.nodes) ? flow.nodes : []} path={[]} marks={marks} />
      <div class="flow-end">End</div>
    </figure>
  );
}
