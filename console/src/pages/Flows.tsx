import { useState } from "preact/hooks";

import { api, segment } from "../api";
import type { Json, JsonObject } from "../api";
import { href, useLoad } from "../hooks";
import { Pre, Rows, Section, Show, show } from "../ui";
import { When } from "../time";
import { FlowDiagram, triggerInWords } from "./FlowDiagram";
import type { NodeCounts, TraceEntry } from "./FlowDiagram";

interface Run {
  id: string;
  recipientId: Json;
  state: string;
  outcome: string | null;
  trigger: string;
  version: number;
  startedAt: string;
  updatedAt: string;
  resumeAt: string | null;
  trace?: TraceEntry[];
  definition?: JsonObject;
}

/** GET /flows/{name}/stats. */
interface FlowStats {
  version: number;
  sinceMs: number;
  untilMs: number;
  runs: { started: number; running: number; waiting: number; done: number; failed: number };
  lastRunAt: string | null;
  nodes: NodeCounts[];
}

const DAY_MS = 24 * 3600 * 1000;

/** The periods a person can count a flow's runs over. */
const PERIODS: { label: string; ms: number | null }[] = [
  { label: "Last 24 hours", ms: DAY_MS },
  { label: "Last 7 days", ms: 7 * DAY_MS },
  { label: "Last 30 days", ms: 30 * DAY_MS },
  { label: "All time", ms: null },
];

function statsPath(name: string, periodMs: number | null): string {
  const since = periodMs === null ? 0 : Date.now() - periodMs;
  return `/flows/${segment(name)}/stats?since=${since}&until=${Date.now() + 1000}`;
}

/** "3 done · 1 failed · 2 waiting": a flow's runs by state, the empty states left out. */
function runsLine(stats: FlowStats): string {
  const { runs } = stats;
  if (runs.started === 0) return "none";
  const parts = (["done", "failed", "waiting", "running"] as const).filter((s) => runs[s] > 0).map((s) => `${runs[s]} ${s}`);
  return parts.join(" · ");
}

export function Flows() {
  const flows = useLoad(async () => {
    const list = await api<JsonObject[]>("/flows");
    const stats = await Promise.all(list.map((f) => api<FlowStats>(statsPath(show(f.name), 7 * DAY_MS))));
    return list.map((flow, i) => ({ flow, stats: stats[i] }));
  }, []);
  return (
    <>
      <h1>Flows</h1>
      <Show loaded={flows}>
        {(list) => (
          <Rows
            label="Flows"
            columns={["Name", "Trigger", "Last run", "Runs, last 7 days", "Source", "Version"]}
            rows={list.map(({ flow: f, stats }) => [
              <a href={href("flows", show(f.name))}>{show(f.name)}</a>,
              triggerInWords(f.trigger),
              stats.lastRunAt ? <When value={stats.lastRunAt} /> : "never",
              runsLine(stats),
              show(f.source),
              show(f.version),
            ])}
            empty="No flow yet."
          />
        )}
      </Show>
    </>
  );
}

/** A flow drawn with its counts over a chosen period, its definition and its newest runs. */
export function Flow({ name }: { name: string }) {
  const [period, setPeriod] = useState(1);
  const loaded = useLoad(
    () =>
      Promise.all([
        api<JsonObject>(`/flows/${segment(name)}`),
        api<Run[]>(`/flows/${segment(name)}/runs?limit=50`),
        api<FlowStats>(statsPath(name, PERIODS[period].ms)),
      ]),
    [name, period],
  );
  return (
    <>
      <p>
        <a href={href("flows")}>← Flows</a>
      </p>
      <h1>Flow {name}</h1>
      <Show loaded={loaded}>
        {([flow, runs, stats]) => (
          <>
            {typeof flow.description === "string" && flow.description !== "" ? (
              <p class="description" aria-label="Description">
                {flow.description}
              </p>
            ) : null}
            <Section title="Diagram">
              <label for="flow-period">Period</label>{" "}
              <select id="flow-period" value={period} onChange={(e) => setPeriod(Number((e.target as HTMLSelectElement).value))}>
                {PERIODS.map((p, i) => (
                  <option value={i}>{p.label}</option>
                ))}
              </select>
              <p aria-label="Runs in the period">
                Runs started: {stats.runs.started} ({runsLine(stats)}), version {stats.version}
              </p>
              <FlowDiagram flow={flow} counts={stats.nodes} />
            </Section>
            <Section title="Definition">
              <details>
                <summary>As JSON</summary>
                <Pre value={flow} />
              </details>
            </Section>
            <Section title="Runs">
              <button type="button" onClick={loaded.reload}>
                Refresh
              </button>
              <Rows
                label="Runs"
                columns={["Run", "Recipient", "State", "Outcome", "Trigger", "Started", "Resumes"]}
                rows={runs.map((r) => [
                  <a href={href("flows", name, "runs", r.id)}>{r.id}</a>,
                  show(r.recipientId),
                  r.state,
                  r.outcome ?? "",
                  r.trigger,
                  <When value={r.startedAt} />,
                  <When value={r.resumeAt} />,
                ])}
                empty="No run yet."
              />
            </Section>
          </>
        )}
      </Show>
    </>
  );
}

/** One run: the path it took drawn on the flow as the run followed it, and its trace. */
export function FlowRun({ name, id }: { name: string; id: string }) {
  const run = useLoad(() => api<Run>(`/flows/${segment(name)}/runs/${segment(id)}`), [name, id]);
  return (
    <>
      <p>
        <a href={href("flows", name)}>← Flow {name}</a>
      </p>
      <h1>Run {id}</h1>
      <Show loaded={run}>
        {(r) => {
          const trace = r.trace ?? [];
          const path = trace.filter((t) => typeof t.node === "string");
          return (
            <>
              <p>
                Recipient {show(r.recipientId)}, {r.state}
                {r.outcome ? ` (${r.outcome})` : ""}, version {r.version}, started <When value={r.startedAt} />
              </p>
              <Section title="Path">
                <p aria-label="Path taken">{path.map((t) => `${t.node} (${t.result ?? ""})`).join(" → ") || "Nothing traced yet."}</p>
                {r.definition ? <FlowDiagram flow={r.definition} trace={trace} /> : null}
              </Section>
              <Section title="Trace">
                <Rows
                  label="Trace"
                  columns={["Node", "Kind", "Result", "At", "Duration", "Log"]}
                  rows={trace.map((t) => [
                    show(t.node),
                    show(t.kind),
                    show(t.result),
                    typeof t.at === "string" || typeof t.at === "number" ? <When value={t.at} /> : show(t.at),
                    t.durationMs === undefined ? "" : `${show(t.durationMs)} ms`,
                    <pre class="log">{Array.isArray(t.log) ? t.log.join("\n") : show(t.log)}</pre>,
                  ])}
                  empty="Nothing traced yet."
                />
              </Section>
            </>
          );
        }}
      </Show>
    </>
  );
}
