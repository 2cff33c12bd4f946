import { api, segment } from "../api";
import type { JsonObject } from "../api";
import { href, useLoad } from "../hooks";
import { Rows, Section, Show, show } from "../ui";

interface Field {
  name: string;
  type: string;
  identifier: boolean;
  unique?: boolean;
  description?: string;
}
interface Table {
  name: string;
  fields: Field[];
  description?: string;
}
interface Named {
  name: string;
  description: string | null;
  filter?: string;
}

/** The instance's data model, from the Discovery API, and its flows. */
export function Model() {
  const model = useLoad(async () => {
    const [personData, otmNames, globalData, gdtNames, events, targetGroups, promotions, flows] = await Promise.all([
      api<{ recipientId: string; fields: Field[] }>("/discovery/persondata"),
      api<string[]>("/discovery/onetomany"),
      api<{ NAME: string; TYPE: string; DESCRIPTION: string }[]>("/discovery/globaldata/"),
      api<string[]>("/discovery/globaldata/tables"),
      api<Named[]>("/discovery/events"),
      api<Named[]>("/discovery/targetgroups"),
      api<Named[]>("/discovery/promotions"),
      api<JsonObject[]>("/flows"),
    ]);
    const oneToMany = await Promise.all(otmNames.map((n) => api<Table>(`/discovery/onetomany/${segment(n)}`)));
    const tables = await Promise.all(gdtNames.map((n) => api<Table>(`/discovery/globaldata/tables/${segment(n)}`)));
    return { personData, oneToMany, globalData, tables, events, targetGroups, promotions, flows };
  }, []);

  return (
    <Show loaded={model}>
      {(m) => (
        <>
          <h1>Data model</h1>
          <Section title="Person Data">
            <p>
              Recipient Id: <code>{m.personData.recipientId}</code>
            </p>
            <FieldTable label="Person Data fields" fields={m.personData.fields} withUnique />
          </Section>
          <Section title="One-To-Many tables">
            {m.oneToMany.map((t) => (
              <>
                <h3>{t.name}</h3>
                <FieldTable label={`${t.name} fields`} fields={t.fields} />
              </>
            ))}
            {m.oneToMany.length === 0 && <p class="quiet">None.</p>}
          </Section>
          <Section title="Global Data">
            <Rows
              label="Global Data items"
              columns={["Name", "Type", "Description"]}
              rows={m.globalData.map((g) => [<a href={href("globaldata")}>{g.NAME}</a>, g.TYPE, g.DESCRIPTION])}
            />
          </Section>
          <Section title="Global Data Tables">
            {m.tables.map((t) => (
              <>
                <h3>{t.name}</h3>
                {t.description && <p>{t.description}</p>}
                <FieldTable label={`${t.name} fields`} fields={t.fields} />
              </>
            ))}
            {m.tables.length === 0 && <p class="quiet">None.</p>}
          </Section>
          <Section title="Events">
            <Rows label="Events" columns={["Name", "Description"]} rows={m.events.map((e) => [<code>{e.name}</code>, e.description ?? ""])} />
          </Section>
          <Section title="Target groups">
            <Rows
              label="Target groups"
              columns={["Name", "Filter", "Description"]}
              rows={m.targetGroups.map((g) => [<code>{g.name}</code>, <code>{g.filter || "(everyone)"}</code>, g.description ?? ""])}
            />
          </Section>
          <Section title="Promotions">
            <Rows
              label="Promotions"
              columns={["Name", "Eligibility", "Description"]}
              rows={m.promotions.map((g) => [<code>{g.name}</code>, <code>{g.filter || "(everyone)"}</code>, g.description ?? ""])}
            />
          </Section>
          <Section title="Flows">
            <Rows
              label="Flows"
              columns={["Name", "Trigger", "Source", "Version"]}
              rows={m.flows.map((f) => [
                <a href={href("flows", String(f.name))}>{show(f.name)}</a>,
                <code>{show(f.trigger)}</code>,
                show(f.source),
                show(f.version),
              ])}
            />
          </Section>
        </>
      )}
    </Show>
  );
}

function FieldTable({ label, fields, withUnique }: { label: string; fields: Field[]; withUnique?: boolean }) {
  const columns = ["Field", "Type", "Identifier", ...(withUnique ? ["Unique"] : []), "Description"];
  return (
    <Rows
      label={label}
      columns={columns}
      rows={fields.map((f) => [
        <code>{f.name}</code>,
        f.type,
        f.identifier ? "yes" : "",
        ...(withUnique ? [f.unique ? "yes" : ""] : []),
        f.description ?? "",
      ])}
    />
  );
}
