import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { api } from "../api";
import { useLoad } from "../hooks";
import { Rows, Section, Show } from "../ui";

/** One day of the instance's usage books (GET /usage). */
export interface UsageDay {
  day: string;
  cpuUs: number;
  waitUs: number;
  calls: Record<"ok" | "error" | "deadline" | "cpu" | "memory" | "trap" | "fault", number>;
  outboundRequests: number;
  outboundBytes: number;
  rowsWritten: number;
  storageBytes: number;
}
export interface InstanceUsage {
  instance: string;
  since: string;
  days: UsageDay[];
  total: UsageDay;
}

const ms = (us: number) => `${(us / 1000).toFixed(1)} ms`;
const failed = (d: UsageDay) => d.calls.error + d.calls.deadline + d.calls.cpu + d.calls.memory + d.calls.trap + d.calls.fault;
const calls = (d: UsageDay) => d.calls.ok + failed(d);

/** The instance's usage per day over the last 30 days: what its operator bills from. */
export function Usage() {
  const usage = useLoad(() => api<InstanceUsage>("/usage"), []);
  return (
    <>
      <h1>Usage</h1>
      <Show loaded={usage}>
        {(u) => (
          <>
            <p>
              Since {u.since}: {ms(u.total.cpuUs)} of processor time over {calls(u.total)} executions ({failed(u.total)} not ok),{" "}
              {u.total.outboundRequests} outbound requests, {u.total.rowsWritten} rows written.
            </p>
            <UsageChart days={u.days} />
            <Section title="Per day">
              <Rows
                label="Usage per day"
                columns={["Day", "CPU", "Waiting for a turn", "Executions", "Not ok", "Outbound requests", "Outbound bytes", "Rows written", "Storage"]}
                rows={u.days.map((d) => [
                  d.day,
                  ms(d.cpuUs),
                  ms(d.waitUs),
                  `${calls(d)}`,
                  `${failed(d)}`,
                  `${d.outboundRequests}`,
                  `${d.outboundBytes}`,
                  `${d.rowsWritten}`,
                  d.storageBytes ? `${(d.storageBytes / 1048576).toFixed(1)} MiB` : "",
                ])}
                empty="No usage in this period."
              />
            </Section>
          </>
        )}
      </Show>
    </>
  );
}

/** Processor time (ms) and executions per day, as bars. */
function UsageChart({ days }: { days: UsageDay[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current || days.length === 0) return;
    const xs = days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000);
    const day = 86400;
    const plot = new uPlot(
      {
        width: Math.min(900, box.current.clientWidth || 900),
        height: 220,
        title: "Processor time and executions per day",
        scales: { x: { time: true, range: () => [xs[0] - day, xs[xs.length - 1] + day] }, calls: {} },
        series: [
          {},
          { label: "CPU (ms)", stroke: "#2563eb", fill: "rgba(37, 99, 235, 0.12)", paths: uPlot.paths.bars!({ size: [0.5, 60] }) },
          { label: "executions", stroke: "#16a34a", scale: "calls" },
        ],
        axes: [{}, { label: "CPU ms" }, { side: 1, scale: "calls", label: "executions", grid: { show: false } }],
      },
      [xs, days.map((d) => d.cpuUs / 1000), days.map(calls)],
      box.current,
    );
    return () => plot.destroy();
  }, [days]);
  if (days.length === 0) return null;
  return <div class="chart" ref={box} role="img" aria-label={`Chart of processor time and executions from ${days[0].day} to ${days[days.length - 1].day}`} />;
}
