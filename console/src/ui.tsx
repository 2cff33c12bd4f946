import type { ComponentChildren } from "preact";

import type { Json } from "./api";
import type { Loaded } from "./hooks";

/** An error shown where it happened, for a person and for assistive technology. */
export function Problem({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p class="problem" role="alert">
      {message}
    </p>
  );
}

export function Section({ title, children, id }: { title: string; children: ComponentChildren; id?: string }) {
  return (
    <section id={id} aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

/** What `loaded` holds, or why not: a loading line or the error. */
export function Show<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (loaded.error) return <Problem message={loaded.error} />;
  if (loaded.data === undefined) return <p class="quiet">Loading…</p>;
  return <>{children(loaded.data)}</>;
}

/** A value as the API gave it: text as is, anything else as JSON. */
export function show(value: Json | undefined): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/** A table of rows under `columns`; `label` names it for screen readers and tests. */
export function Rows({
  label,
  columns,
  rows,
  empty = "None.",
}: {
  label: string;
  columns: string[];
  rows: ComponentChildren[][];
  empty?: string;
}) {
  if (rows.length === 0) return <p class="quiet">{empty}</p>;
  return (
    <table aria-label={label}>
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col">{c}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr>
            {row.map((cell) => (
              <td>{cell}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function Pre({ value }: { value: unknown }) {
  return <pre>{typeof value === "string" ? value : JSON.stringify(value, null, 2)}</pre>;
}
