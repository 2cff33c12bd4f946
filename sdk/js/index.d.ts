// TypeScript declarations of Herald's JavaScript SDK (sdk/js). Each module mirrors one interface of
// herald:platform, so an extension imports only what its world offers (an open webhook's world has
// no recipients-read). Values are as the REST API writes them.

/** A field's value: text, a number, a boolean, a date (YYYY-MM-DD) or timestamp (ISO 8601) as text, or null. */
export type FieldValue = string | number | boolean | null;
/** A record: Person Data, or a One-To-Many or Global Data Table record. */
export type HeraldRecord = Record<string, FieldValue>;
/** A platform field as the bindings give it (steps and conditions receive the recipient so). */
export interface WitField {
  name: string;
  value: { tag: "null" | "text" | "number" | "boolean" | "date" | "timestamp"; val?: string | number | boolean };
}

declare module "./values.js" {
  export class HeraldError extends Error {
    kind: "not-found" | "invalid" | "conflict" | "forbidden" | "limit-exceeded";
    detail: string;
  }
  export function record(fields: WitField[]): HeraldRecord;
  export function fields(record: HeraldRecord): WitField[];
  export function context(text: string | undefined | null): unknown;
  export function toValue(value: FieldValue): WitField["value"];
  export function fromValue(value: WitField["value"]): FieldValue;
}

declare module "./recipients-read.js" {
  export function get(keyField: string, key: FieldValue): HeraldRecord | null;
  export function find(filter: string, limit?: number): HeraldRecord[];
  export function records(keyField: string, key: FieldValue, table: string, filter?: string, limit?: number): HeraldRecord[];
}

declare module "./recipients-write.js" {
  export function create(personData: HeraldRecord): HeraldRecord;
  export function update(keyField: string, key: FieldValue, personData: HeraldRecord): HeraldRecord;
  export function upsert(personData: HeraldRecord): HeraldRecord;
  export function remove(keyField: string, key: FieldValue): boolean;
  export function upsertRecords(keyField: string, key: FieldValue, table: string, rows: HeraldRecord[]): number;
  export function deleteRecords(keyField: string, key: FieldValue, table: string, ids: FieldValue[]): number;
  export function achieveEvent(keyField: string, key: FieldValue, event: string): void;
}

declare module "./tables.js" {
  export function get(table: string, id: FieldValue): HeraldRecord | null;
  export function find(table: string, filter?: string, limit?: number): HeraldRecord[];
  export function upsert(table: string, values: HeraldRecord): void;
  export function remove(table: string, id: FieldValue): boolean;
}

declare module "./global-data.js" {
  export function get(name: string): string | null;
  export function set(name: string, value: string | number | boolean): void;
}

declare module "./extensions.js" {
  /** A step's export; what `run` throws declines the step with its message. */
  export function step(run: (recipient: WitField[], context: string | undefined) => void): { run: typeof run };
  /** A condition's export. */
  export function condition(evaluate: (recipient: WitField[], context: string | undefined) => boolean): {
    evaluate: typeof evaluate;
  };
  /** An authheader's export. */
  export function authheader(
    headers: (
      host: string,
      method: string,
      pathWithQuery: string,
    ) => { headers: { name: string; value: string }[]; maxAgeSeconds?: number },
  ): { headers: typeof headers };
}

declare module "./secrets.js" {
  /** authheader extensions only. */
  export function get(name: string): string | null;
}

declare module "./signatures.js" {
  /** http extensions only: a Standard Webhooks signature checked with secret `secret` (never read). */
  export function verifyStandardWebhook(
    secret: string,
    headers: Headers | Record<string, string>,
    body: Uint8Array | ArrayBuffer | string,
    toleranceSeconds?: number,
  ): boolean;
  /** http extensions only: an HMAC-SHA256 of `message` (hex or base64, `sha256=` skipped). */
  export function verifyHmacSha256(secret: string, message: Uint8Array | ArrayBuffer | string, signature: string): boolean;
}

declare module "./log.js" {
  export function debug(message: unknown): void;
  export function info(message: unknown): void;
  export function warn(message: unknown): void;
  export function error(message: unknown): void;
}

declare module "./http.js" {
  /** Serves every call with `handler` (the web platform's Request and Response). */
  export function serve(handler: (request: Request) => Response | Promise<Response>): void;
  export function json(status: number, data: unknown): Response;
}
