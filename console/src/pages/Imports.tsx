import { useEffect, useState } from "preact/hooks";

import { api, call, errorOf, sendJson } from "../api";
import type { JsonObject } from "../api";
import { messageOf, useLoad } from "../hooks";
import { Problem, Rows, Section, Show, show } from "../ui";
import { When } from "../time";

interface Import {
  importId: string;
  target: string;
  state: string;
  format: string;
  key: string;
  size: number;
  bytesRead: number;
  rowsRead: number;
  created: number;
  updated: number;
  rejected: number;
  createdAt: string;
  message?: string;
}

interface RejectedRow {
  row: number;
  field?: string;
  message: string;
}

const RUNNING = ["queued", "running"];

/** The content type of an import's file: NDJSON by its name, CSV otherwise. */
function contentType(file: File): string {
  return /\.(nd)?jsonl?$/i.test(file.name) || file.name.toLowerCase().endsWith(".ndjson") ? "application/x-ndjson" : "text/csv; charset=utf-8";
}

/** Bulk imports of recipients: upload a CSV or NDJSON file, watch its progress, read its rejected rows. */
export function Imports() {
  const fields = useLoad(() => api<{ recipientId: string; fields: { name: string; unique?: boolean }[] }>("/discovery/persondata"), []);
  const imports = useLoad(() => api<Import[]>("/imports?limit=20"), []);
  const [file, setFile] = useState<File | undefined>();
  const [key, setKey] = useState("");
  const [triggers, setTriggers] = useState("none");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [shown, setShown] = useState<string | undefined>();

  // While an import runs, its progress is read again every second.
  const running = imports.data?.some((i) => RUNNING.includes(i.state)) ?? false;
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(imports.reload, 1000);
    return () => clearInterval(timer);
  }, [running, imports.reload]);

  async function upload(event: Event) {
    event.preventDefault();
    if (!file) return;
    setBusy(true);
    setError(undefined);
    try {
      const query = new URLSearchParams({ triggers });
      if (key !== "") query.set("key", key);
      await api(`/recipients/:import?${query}`, { method: "POST", headers: { "Content-Type": contentType(file) }, body: file });
      imports.reload();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }

  async function cancel(id: string) {
    try {
      await api(`/imports/${encodeURIComponent(id)}/:cancel`, { method: "POST" });
    } catch (e) {
      setError(messageOf(e));
    }
    imports.reload();
  }

  return (
    <>
      <h1>Imports</h1>
      <form class="inline" onSubmit={upload} aria-label="Import recipients">
        <label>
          File (CSV with a header row, or NDJSON)
          <input type="file" name="file" accept=".csv,.ndjson,.jsonl,text/csv" onChange={(e) => setFile(e.currentTarget.files?.[0])} />
        </label>
        <Show loaded={fields}>
          {(d) => (
            <label>
              Key
              <select name="key" value={key} onChange={(e) => setKey(e.currentTarget.value)}>
                <option value="">{d.recipientId} (the Recipient Id)</option>
                {d.fields
                  .filter((f) => f.unique && f.name !== d.recipientId)
                  .map((f) => (
                    <option value={f.name}>{f.name}</option>
                  ))}
              </select>
            </label>
          )}
        </Show>
        <label>
          New recipients
          <select name="triggers" value={triggers} onChange={(e) => setTriggers(e.currentTarget.value)}>
            <option value="none">start no flow</option>
            <option value="created">start the flows a creation triggers</option>
          </select>
        </label>
        <button type="submit" disabled={busy || !file}>
          Import
        </button>
      </form>
      <Problem message={error} />
      <Show loaded={imports}>
        {(list) => (
          <Rows
            label="Imports"
            columns={["Created", "Target", "State", "Progress", "Rows read", "Created", "Updated", "Rejected", ""]}
            rows={list.map((i) => [
              <When value={i.createdAt} />,
              i.target,
              <span title={i.message}>{i.state + (i.message ? `: ${i.message}` : "")}</span>,
              <progress max={Math.max(i.size, 1)} value={i.bytesRead} aria-label={`Progress of ${i.importId}`} />,
              i.rowsRead,
              i.created,
              i.updated,
              i.rejected,
              <>
                {RUNNING.includes(i.state) && (
                  <button type="button" onClick={() => cancel(i.importId)}>
                    Cancel
                  </button>
                )}
                {i.rejected > 0 && (
                  <button type="button" onClick={() => setShown(shown === i.importId ? undefined : i.importId)}>
                    Rejected rows
                  </button>
                )}
              </>,
            ])}
            empty="No import yet."
          />
        )}
      </Show>
      {shown && <Rejected id={shown} key={shown} />}
    </>
  );
}

/** The first rejected rows of an import. */
function Rejected({ id }: { id: string }) {
  const rows = useLoad(() => api<RejectedRow[]>(`/imports/${encodeURIComponent(id)}/errors?limit=100`), [id]);
  return (
    <Section title="Rejected rows">
      <Show loaded={rows}>
        {(list) => (
          <Rows label="Rejected rows" columns={["Row", "Field", "Why"]} rows={list.map((r) => [r.row, show(r.field ?? null), r.message])} />
        )}
      </Show>
    </Section>
  );
}

/** Downloads the recipients `filter` selects as a CSV file (`POST /recipients/:export`). */
export async function exportRecipients(filter: string): Promise<void> {
  const body: JsonObject = filter.trim() === "" ? {} : { filter: filter.trim() };
  const response = await call("/recipients/:export", { ...sendJson("POST", body), headers: { "Content-Type": "application/json", Accept: "text/csv" } });
  if (!response.ok) throw await errorOf(response);
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement("a");
  link.href = url;
  link.download = "recipients.csv";
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
