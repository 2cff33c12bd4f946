import { useState } from "preact/hooks";

import { api, segment, sendJson } from "../api";
import { messageOf, useLoad } from "../hooks";
import { Problem, Show } from "../ui";
import { When } from "../time";

interface Item {
  NAME: string;
  TYPE: string;
  VALUE: string;
  DESCRIPTION: string;
  MODIFIED: string;
}

/** The Global Data values, each editable in place (`PUT /globaldata/{name}`). */
export function GlobalData() {
  const items = useLoad(async () => {
    const list = await api<{ NAME: string }[]>("/globaldata/");
    return Promise.all(list.map((g) => api<Item>(`/globaldata/${segment(g.NAME)}`)));
  }, []);
  return (
    <>
      <h1>Global Data</h1>
      <Show loaded={items}>
        {(list) => (
          <table aria-label="Global Data values">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Value</th>
                <th scope="col">Last change</th>
              </tr>
            </thead>
            <tbody>
              {list.map((item) => (
                <ValueRow item={item} key={item.NAME} />
              ))}
            </tbody>
          </table>
        )}
      </Show>
    </>
  );
}

function ValueRow({ item }: { item: Item }) {
  const [stored, setStored] = useState(item);
  const [value, setValue] = useState(item.VALUE);
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState(false);

  async function save(event: Event) {
    event.preventDefault();
    setError(undefined);
    setSaved(false);
    try {
      const next = await api<Item>(`/globaldata/${segment(item.NAME)}`, sendJson("PUT", { VALUE: value }));
      setStored(next);
      setValue(next.VALUE);
      setSaved(true);
    } catch (e) {
      setError(messageOf(e));
    }
  }

  const modified = Number(stored.MODIFIED);
  return (
    <tr>
      <td>
        <code>{item.NAME}</code>
        <div class="quiet">{item.DESCRIPTION}</div>
      </td>
      <td>{item.TYPE}</td>
      <td>
        <form class="inline" onSubmit={save} aria-label={`Edit ${item.NAME}`}>
          <input name={item.NAME} aria-label={`${item.NAME} value`} value={value} onInput={(e) => setValue(e.currentTarget.value)} />
          <button type="submit" disabled={value === stored.VALUE}>
            Save
          </button>
          {saved && (
            <span class="done" role="status">
              Saved
            </span>
          )}
        </form>
        <Problem message={error} />
      </td>
      <td>{modified ? <When value={modified} /> : "never"}</td>
    </tr>
  );
}
