import { api, segment } from "../api";
import type { Json, JsonObject } from "../api";
import { href, useLoad } from "../hooks";
import { Pre, Rows, Section, Show, show } from "../ui";
import { When } from "../time";

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
  trace?: JsonObject[];
}

export function Flows() {
  const flows = useLoad(() => api<JsonObject[]>("/flows"), []);
  return (
    <>
      <h1>Flows</h1>
      <Show loaded={flows}>
        {(list) => (
          <Rows
            label="Flows"
            columns={["Name", "Trigger", "Source", "Version"]}
            rows={list.map((f) => [
              <a href={href("flows", show(f.name))}>{show(f.name)}</a>,
              <code>{show(f.trigger)}</code>,
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

/** A flow's definition (and schedule) with its newest runs. */
export function Flow({ name }: { name: string }) {
  const loaded = useLoad(
    () => Promise.all([api<JsonObject>(`/flows/${segment(name)}`), api<Run[]>(`/flows/${segment(name)}/runs?limit=50`)]),
    [name],
  );
  return (
    <>
      <p>
        <a href={href("flows")}>← Flows</a>
      </p>
      <h1>Flow {name}</h1>
      <Show loaded={loaded}>
        {([flow, runs]) => (
          <>
            <Section title="Definition">
              <Pre value={flow} />
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

/** One run and the trace of the nodes it went through. */
export function FlowRun({ name, id }: { name: string; id: string }) {
  const run = useLoad(() => api<Run>(`/flows/${segment(name)}/runs/${segment(id)}`), [name, id]);
  return (
    <>
      <p>
        <a href={href("flows", name)}>← Flow {name}</a>
      </p>
      <h1>Run {id}</h1>
      <Show loaded={run}>
        {(r) => (
          <>
            <p>
              Recipient {show(r.recipientId)}, {r.state}
              {r.outcome ? ` (${r.outcome})` : ""}, version {r.version}, started <When value={r.startedAt} />
            </p>
            <Section title="Trace">
              <Rows
                label="Trace"
                columns={["Node", "Kind", "Result", "At", "Duration", "Log"]}
                rows={(r.trace ?? []).map((t) => [
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
        )}
      </Show>
    </>
  );
}
