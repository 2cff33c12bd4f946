import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

import { api } from "../api";
import type { JsonObject } from "../api";
import { href, useLoad } from "../hooks";
import { Rows, Section, Show, show } from "../ui";
import { extensionId, OUTCOME_MEANING, TryIt, useExecutions } from "./Extensions";
import type { Execution, ExecutionUsage, ExtensionItem } from "./Extensions";
import { When } from "../time";

/** One extension: its configuration, a chart and a table of its executions, and "try it". */
export function Extension({ id }: { id: string }) {
  const slash = id.lastIndexOf("/");
  const folder = slash < 0 ? "" : id.slice(0, slash);
  const item = useLoad(async () => {
    const items = await api<ExtensionItem[]>(`/assets/extensions/list${folder ? `?folder=${encodeURIComponent(folder)}` : ""}`);
    const found = items.find((i) => !i.isFolder && extensionId(folder, i.name) === id);
    if (!found) throw new Error(`There is no extension ${id}.`);
    return found;
  }, [id]);
  const executions = useExecutions(id);

  return (
    <>
      <p>
        <a href={href("extensions")}>← Extensions</a>
      </p>
      <h1>Extension {id}</h1>
      <Show loaded={item}>
        {(found) => (
          <>
            <p>
              Kind: <strong>{found.type}</strong>
            </p>
            {found.url && (
              <p>
                {found.url.startsWith("/extensions/open/")
                  ? "Called through the open endpoint, without credentials, at "
                  : "Called through the secure endpoint, with the instance's credential, at "}
                <code aria-label="URL to call">{location.origin + found.url}</code>
              </p>
            )}
            <Section title="Configuration">
              <Rows
                label="Configuration"
                columns={["Setting", "Value"]}
                rows={Object.entries(found.config ?? {}).map(([k, v]) => [<code>{k}</code>, show(v)])}
              />
            </Section>
            {found.url && <TryIt url={found.url} />}
          </>
        )}
      </Show>
      <Section title="Executions">
        <button type="button" onClick={executions.reload}>
          Refresh
        </button>
        <Show loaded={executions}>
          {(list) => (
            <>
              <CallsChart executions={list} />
              <Rows
                label="Executions"
                columns={["At", "Duration", "CPU", "Outcome", "Log", "Input"]}
                rows={list.map((e) => [
                  <When value={e.at} />,
                  `${e.durationMs} ms`,
                  e.usage ? (
                    <span title={usageTitle(e.usage)}>{`${(e.usage.cpuUs / 1000).toFixed(1)} ms`}</span>
                  ) : (
                    ""
                  ),
                  <span class={e.outcome === "ok" ? "ok" : "failed"} title={OUTCOME_MEANING[e.outcome] ?? ""}>
                    {e.outcome}
                    {e.reason ? <small class="reason">: {e.reason}</small> : null}
                  </span>,
                  <pre class="log">{[...e.log, e.stdout, e.stderr].filter((l) => l !== "").join("\n")}</pre>,
                  e.input ? <Replay id={id} execution={e} input={e.input} /> : "",
                ])}
                empty="No execution yet."
              />
            </>
          )}
        </Show>
      </Section>
    </>
  );
}

/** An execution's receipt in words, for the CPU cell's tooltip. */
function usageTitle(u: ExecutionUsage): string {
  return [
    `CPU ${(u.cpuUs / 1000).toFixed(1)} ms of ${(u.wallUs / 1000).toFixed(1)} ms`,
    `waited ${(u.waitUs / 1000).toFixed(1)} ms for a turn`,
    `peak memory ${(u.peakMemoryBytes / 1048576).toFixed(1)} MiB`,
    `${u.hostCalls} host calls`,
    `${u.outboundRequests} outbound requests (${u.outboundBytes} bytes)`,
  ].join(", ");
}

/**
 * What a failed execution kept of its input (bounded, credentials withheld by the server), and
 * how to run a new version of the extension on it: locally from the saved input, or on the server
 * with the operator's replay.
 */
function Replay({ id, execution, input }: { id: string; execution: Execution; input: JsonObject }) {
  const text = JSON.stringify(input, null, 2);
  function save() {
    const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    const link = document.createElement("a");
    link.href = url;
    link.download = "input.json";
    link.click();
    URL.revokeObjectURL(url);
  }
  return (
    <details class="replay">
      <summary>Input and replay</summary>
      <pre class="input" aria-label="Recorded input">
        {text}
      </pre>
      <button type="button" onClick={save}>
        Download input.json
      </button>
      <p>Run a new version on it, locally:</p>
      <pre aria-label="Run command">herald extension run NEW.wasm --input input.json</pre>
      <p>or on the server, where INSTANCE is this instance's id (the operator's replay, on a copy of the data):</p>
      <pre aria-label="Replay command">{`herald extension replay NEW.wasm --instance INSTANCE --extension ${id} --at ${execution.at}`}</pre>
    </details>
  );
}

/** Calls and failures per time bucket (a minute, or longer when the executions span more). */
function buckets(executions: Execution[]): { size: number; data: [number[], number[], number[]] } {
  if (executions.length === 0) return { size: 60, data: [[], [], []] };
  const times = executions.map((e) => e.at / 1000);
  const first = Math.min(...times);
  const last = Math.max(...times);
  const size = Math.max(60, Math.ceil((last - first) / 60 / 60) * 60);
  const start = Math.floor(first / size) * size;
  const count = Math.floor((last - start) / size) + 1;
  const xs = Array.from({ length: count }, (_, i) => start + i * size);
  const calls = new Array<number>(count).fill(0);
  const failures = new Array<number>(count).fill(0);
  for (const e of executions) {
    const i = Math.floor((e.at / 1000 - start) / size);
    calls[i] += 1;
    if (e.outcome !== "ok") failures[i] += 1;
  }
  return { size, data: [xs, calls, failures] };
}

/** The span the chart shows, in seconds: its buckets, with a bucket's width of margin on each side. */
function span(executions: Execution[]): { from: number; to: number } {
  const { size, data } = buckets(executions);
  const xs = data[0];
  return { from: xs[0] - size, to: xs[xs.length - 1] + size };
}

/** Seconds since 1970 as the execution table writes times (UTC, to the minute). */
function minute(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace("T", " ").slice(0, 16);
}

function CallsChart({ executions }: { executions: Execution[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current || executions.length === 0) return;
    const { data } = buckets(executions);
    const { from, to } = span(executions);
    const plot = new uPlot(
      {
        width: Math.min(900, box.current.clientWidth || 900),
        height: 220,
        title: "Calls and failures",
        // The buckets' own span, not the one uPlot proposes: for a single point it proposes
        // 86,400,000 seconds (a day in its millisecond units), which drew years of axis.
        scales: { x: { time: true, range: () => [from, to] } },
        series: [
          {},
          { label: "calls", stroke: "#2563eb", fill: "rgba(37, 99, 235, 0.12)", paths: uPlot.paths.bars!({ size: [0.6, 40] }) },
          { label: "failures", stroke: "#dc2626", fill: "rgba(220, 38, 38, 0.3)", paths: uPlot.paths.bars!({ size: [0.6, 40] }) },
        ],
        axes: [{}, { label: "executions" }],
      },
      data,
      box.current,
    );
    return () => plot.destroy();
  }, [executions]);
  if (executions.length === 0) return null;
  const { from, to } = span(executions);
  return <div class="chart" ref={box} role="img" aria-label={`Chart of calls and failures from ${minute(from)} to ${minute(to)} UTC`} />;
}
