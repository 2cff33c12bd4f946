import { useState } from "preact/hooks";

import { api, segment } from "../api";
import type { Json, JsonObject } from "../api";
import { href, messageOf, useLoad } from "../hooks";
import { Problem, Rows, Section, Show, show } from "../ui";
import { exportRecipients } from "./Imports";
import { When } from "../time";

interface Page {
  links: { rel: string; href: string }[];
  content: { personData: JsonObject }[];
  page: { documentId: string; number: number; totalPages: number; totalElements: number; pageSize: number };
}

const PAGE_SIZE = 20;

/** Recipients found by an RSQL filter, page by page through the server's paged documents. */
export function Recipients() {
  const [filter, setFilter] = useState("");
  const [page, setPage] = useState<Page | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const definition = useLoad(() => api<{ recipientId: string; fields: { name: string }[] }>("/discovery/persondata"), []);

  async function load(path: string) {
    setBusy(true);
    setError(undefined);
    try {
      setPage(await api<Page>(path));
    } catch (e) {
      setPage(undefined);
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }

  function search(event: Event) {
    event.preventDefault();
    const query = new URLSearchParams({ objectResponse: "true", pageSize: String(PAGE_SIZE) });
    if (filter.trim() !== "") query.set("filter", filter.trim());
    load(`/recipients?${query}`);
  }

  /** Every recipient the filter selects (not just this page), as a CSV file. */
  async function download() {
    setBusy(true);
    setError(undefined);
    try {
      await exportRecipients(filter);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }

  const link = (rel: string) => page?.links.find((l) => l.rel === rel)?.href;

  return (
    <>
      <h1>Recipients</h1>
      <form class="inline" onSubmit={search} aria-label="Search recipients">
        <label>
          Filter (RSQL)
          <input
            name="filter"
            placeholder='AGE>=18;CITY=="Paris"'
            value={filter}
            onInput={(e) => setFilter(e.currentTarget.value)}
            size={50}
          />
        </label>
        <button type="submit" disabled={busy}>
          Search
        </button>
        <button type="button" disabled={busy} onClick={download}>
          Export CSV
        </button>
      </form>
      <Problem message={error} />
      <Show loaded={definition}>
        {(d) =>
          page && (
            <>
              <p class="quiet" aria-live="polite">
                {page.page.totalElements} recipients; page {page.page.totalPages === 0 ? 0 : page.page.number} of {page.page.totalPages}
              </p>
              <Rows
                label="Recipients"
                columns={d.fields.slice(0, 6).map((f) => f.name)}
                rows={page.content.map((r) =>
                  d.fields.slice(0, 6).map((f, i) => {
                    const value = r.personData[f.name];
                    const id = r.personData[d.recipientId];
                    return i === 0 ? <a href={href("recipients", show(id))}>{show(value)}</a> : show(value);
                  }),
                )}
                empty="No recipient matches."
              />
              <nav class="pager" aria-label="Pages">
                {(["first", "prev", "next", "last"] as const).map((rel) => {
                  const target = link(rel);
                  return (
                    <button type="button" disabled={!target || busy} onClick={() => target && load(target)}>
                      {rel}
                    </button>
                  );
                })}
              </nav>
            </>
          )
        }
      </Show>
    </>
  );
}

/** One recipient with its One-To-Many records, events, target groups and communications. */
export function Recipient({ id }: { id: string }) {
  const path = `/recipients/${segment(id)}`;
  const loaded = useLoad(async () => {
    const [recipient, tables, events, groups, communications] = await Promise.all([
      api<{ personData: JsonObject }>(path),
      api<string[]>("/discovery/onetomany"),
      api<{ eventId: string; achievedAt: string }[]>(`${path}/events`),
      api<{ name: string }[]>(`${path}/targetGroups`),
      api<JsonObject[]>(`${path}/communicationHistory`),
    ]);
    const records = await Promise.all(
      tables.map(async (t) => ({ table: t, records: await api<JsonObject[]>(`${path}/oneToManyTables/${segment(t)}`) })),
    );
    return { recipient, records, events, groups, communications };
  }, [id]);

  return (
    <>
      <p>
        <a href={href("recipients")}>← Recipients</a>
      </p>
      <h1>Recipient {id}</h1>
      <Show loaded={loaded}>
        {(r) => (
          <>
            <Section title="Person Data">
              <Rows
                label="Person Data"
                columns={["Field", "Value"]}
                rows={Object.entries(r.recipient.personData).map(([name, value]) => [<code>{name}</code>, show(value)])}
              />
            </Section>
            {r.records.map(({ table, records }) => (
              <Section title={`One-To-Many: ${table}`}>
                <RecordTable label={`${table} records`} records={records} />
              </Section>
            ))}
            <Section title="Events">
              <Rows label="Events" columns={["Event", "Achieved at"]} rows={r.events.map((e) => [<code>{e.eventId}</code>, <When value={e.achievedAt} />])} />
            </Section>
            <Section title="Target groups">
              <p>{r.groups.length === 0 ? "None." : r.groups.map((g) => g.name).join(", ")}</p>
            </Section>
            <Section title="Communication history">
              <RecordTable label="Communications" records={r.communications} />
            </Section>
          </>
        )}
      </Show>
    </>
  );
}

export function RecordTable({ label, records }: { label: string; records: JsonObject[] }) {
  const columns = Array.from(new Set(records.flatMap((r) => Object.keys(r))));
  return <Rows label={label} columns={columns} rows={records.map((r) => columns.map((c) => show(r[c] as Json)))} />;
}
