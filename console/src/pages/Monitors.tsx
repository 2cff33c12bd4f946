import { api } from "../api";
import { href, useLoad } from "../hooks";
import { Rows, Section, Show } from "../ui";
import { When } from "../time";

interface MonitorRun {
  at: string;
  status: string;
  message: string;
  durationMs: number;
}
interface Monitor {
  id: string;
  schedule: string | null;
  nextRunAt: string | null;
  alert: { event: string; recipient: unknown } | null;
  status: string;
  history: MonitorRun[];
}

/** Each monitor with its schedule, status and newest runs. */
export function Monitors() {
  const monitors = useLoad(() => api<Monitor[]>("/extensions/monitors"), []);
  return (
    <>
      <h1>Monitors</h1>
      <Show loaded={monitors}>
        {(list) => (
          <>
            {list.length === 0 && <p class="quiet">No monitor extension uploaded.</p>}
            {list.map((m) => (
              <Section title={m.id}>
                <p>
                  <span class={`status ${m.status}`}>{m.status}</span> · schedule <code>{m.schedule ?? "none"}</code> · next run{" "}
                  {m.nextRunAt ? <When value={m.nextRunAt} /> : "not scheduled yet"}
                  {m.alert && ` · alert: ${m.alert.event} for ${JSON.stringify(m.alert.recipient)}`} ·{" "}
                  <a href={href("extensions", "one", m.id)}>executions</a>
                </p>
                <Rows
                  label={`${m.id} history`}
                  columns={["At", "Status", "Message", "Duration"]}
                  rows={m.history.map((r) => [<When value={r.at} />, r.status, r.message, `${r.durationMs} ms`])}
                  empty="Not run yet."
                />
              </Section>
            ))}
          </>
        )}
      </Show>
    </>
  );
}
