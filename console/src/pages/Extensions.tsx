import { useEffect, useState } from "preact/hooks";

import { api, call, queueStatus, rawAnswer, segment } from "../api";
import type { JsonObject, RawAnswer } from "../api";
import { href, messageOf, useLoad } from "../hooks";
import { Problem, Rows, Section, Show, show } from "../ui";

export const KINDS = ["http", "step", "condition", "monitor", "authheader"] as const;

export interface ExtensionItem {
  name: string;
  isFolder: boolean;
  type?: string;
  size?: number;
  config?: JsonObject;
  /** Http extensions: where it is called (a path on this server). */
  url?: string;
}

/** An extension's id: its path under the extensions folder, without `.wasm`. */
export function extensionId(folder: string, name: string): string {
  return (folder ? `${folder}/` : "") + name.replace(/\.wasm$/, "");
}

/** The extensions of a folder with their kind and configuration, and the upload form. */
export function Extensions({ folder }: { folder: string }) {
  const list = useLoad(() => api<ExtensionItem[]>(`/assets/extensions/list${folder ? `?folder=${encodeURIComponent(folder)}` : ""}`), [folder]);
  return (
    <>
      <h1>Extensions{folder && ` in ${folder}`}</h1>
      {folder && (
        <p>
          <a href={href("extensions")}>← All extensions</a>
        </p>
      )}
      <Show loaded={list}>
        {(items) => (
          <Rows
            label="Extensions"
            columns={["Extension", "Kind", "Size", "Configuration"]}
            rows={items.map((item) =>
              item.isFolder
                ? [<a href={href("extensions", "folder", extensionId(folder, item.name))}>{item.name}/</a>, "folder", "", ""]
                : [
                    <a href={href("extensions", "one", extensionId(folder, item.name))}>{extensionId(folder, item.name)}</a>,
                    item.type ?? "",
                    item.size === undefined ? "" : `${Math.round(item.size / 1024)} KiB`,
                    <code class="config">{show(item.config ?? null)}</code>,
                  ],
            )}
            empty="No extension uploaded yet."
          />
        )}
      </Show>
      <Upload folder={folder} done={list.reload} />
    </>
  );
}

/** Uploads a component (`POST /assets/extensions`, or `PUT` to replace a version). */
function Upload({ folder, done }: { folder: string; done: () => void }) {
  const [kind, setKind] = useState<string>("http");
  // The folder being browsed, unless the author names another (`shop`, `shop/hooks`).
  const [into, setInto] = useState(folder);
  useEffect(() => setInto(folder), [folder]);
  const [replace, setReplace] = useState(false);
  const [result, setResult] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const file = (form.elements.namedItem("file") as HTMLInputElement).files?.[0];
    if (!file) {
      setError("Choose a .wasm component to upload.");
      return;
    }
    const body = new FormData();
    body.append("file", file, file.name);
    body.append("type", kind);
    const target = into.trim().replace(/^\/+|\/+$/g, "");
    if (target) body.append("folder", target);
    setBusy(true);
    setError(undefined);
    setResult(undefined);
    try {
      const stored = await api<{ path: string; type: string; sha256: string }>("/assets/extensions", {
        method: replace ? "PUT" : "POST",
        body,
      });
      setResult(`Stored ${stored.path} (${stored.type}, sha256 ${stored.sha256.slice(0, 12)}…).`);
      form.reset();
      setInto(folder);
      done();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Section title="Upload an extension">
      <form onSubmit={submit} aria-label="Upload an extension">
        <label>
          Component (.wasm)
          <input type="file" name="file" accept=".wasm,application/wasm" />
        </label>
        <label>
          Folder (optional)
          <input name="folder" placeholder="shop/hooks" value={into} onInput={(e) => setInto(e.currentTarget.value)} />
        </label>
        <label>
          Kind
          <select name="type" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
            {KINDS.map((k) => (
              <option value={k}>{k}</option>
            ))}
          </select>
        </label>
        <label class="check">
          <input type="checkbox" name="replace" checked={replace} onChange={(e) => setReplace(e.currentTarget.checked)} />
          Replace the version already uploaded
        </label>
        <button type="submit" disabled={busy}>
          Upload
        </button>
      </form>
      {result && (
        <p class="done" role="status">
          {result}
        </p>
      )}
      <Problem message={error} />
    </Section>
  );
}

/**
 * A call as an integration would make it: an open extension through the open endpoint, without
 * credentials (as a third party calls it), any other through the secure endpoint with the
 * session's token.
 */
export function TryIt({ url }: { url: string }) {
  const open = url.startsWith("/extensions/open/");
  const [method, setMethod] = useState("POST");
  const [path, setPath] = useState("");
  const [body, setBody] = useState("");
  const [answer, setAnswer] = useState<RawAnswer | undefined>();
  const [queueId, setQueueId] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function run(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setAnswer(undefined);
    setQueueId(undefined);
    try {
      const target = `${url}/${path.replace(/^\//, "")}`;
      const init: RequestInit = {
        method,
        headers: { Accept: "*/*", ...(body ? { "Content-Type": "application/json" } : {}) },
        body: method === "GET" || method === "DELETE" || !body ? undefined : body,
      };
      const response = open ? await fetch(target, init) : await call(target, init);
      const answered = await rawAnswer(response);
      setAnswer(answered);
      if (answered.status === 202) {
        try {
          setQueueId((JSON.parse(answered.body) as { queueId?: string }).queueId);
        } catch {
          // Not a queue handle.
        }
      }
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }

  async function status() {
    if (!queueId) return;
    try {
      setAnswer(await queueStatus(queueId, open ? url.split("/")[3] : undefined));
    } catch (e) {
      setError(messageOf(e));
    }
  }

  return (
    <Section title="Try it">
      <form onSubmit={run} aria-label="Try it">
        <label>
          Method
          <select name="method" value={method} onChange={(e) => setMethod(e.currentTarget.value)}>
            {["GET", "POST", "PUT", "DELETE"].map((m) => (
              <option value={m}>{m}</option>
            ))}
          </select>
        </label>
        <label>
          Path
          <input name="path" placeholder="hello?x=1" value={path} onInput={(e) => setPath(e.currentTarget.value)} />
        </label>
        <label class="wide">
          Body
          <textarea name="body" rows={4} value={body} onInput={(e) => setBody(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Send
        </button>
      </form>
      <Problem message={error} />
      {answer && (
        <div class="answer" aria-label="Answer">
          <p>
            Status <strong data-testid="answer-status">{answer.status}</strong> {answer.type && <code>{answer.type}</code>}
          </p>
          <pre data-testid="answer-body">{answer.body}</pre>
          {queueId && (
            <button type="button" onClick={status}>
              Ask the status of {queueId}
            </button>
          )}
        </div>
      )}
    </Section>
  );
}

export type Execution = {
  at: number;
  durationMs: number;
  /** ok, error, deadline, cpu, memory, trap or fault: the words of every page, log and tool. */
  outcome: string;
  reason?: string;
  log: string[];
  stdout: string;
  stderr: string;
  input?: JsonObject;
  /** What it used (absent from executions recorded before receipts). */
  usage?: ExecutionUsage;
};

export type ExecutionUsage = {
  cpuUs: number;
  wallUs: number;
  waitUs: number;
  peakMemoryBytes: number;
  hostCalls: number;
  outboundRequests: number;
  outboundBytes: number;
};

/** What each outcome of a call means (as the server's documentation says it). */
export const OUTCOME_MEANING: Record<string, string> = {
  ok: "the extension answered",
  error: "the extension answered with an error of its own (a returned error, an answer 5xx)",
  deadline: "the extension ran past its deadline",
  cpu: "the extension used up its CPU budget (cpu_ms)",
  memory: "the extension reached its memory cap",
  trap: "the extension trapped (a panic, no answer)",
  fault: "Herald failed the call",
};

/** The newest executions of an extension (at most 100). */
export function useExecutions(id: string) {
  return useLoad(() => api<Execution[]>(`/extensions/logs/${segment(id)}?limit=100`), [id]);
}
