import { useEffect, useState } from "preact/hooks";

import { api, onSessionChange } from "./api";

/**
 * Times on every page in one form, `2026-11-27 10:04:05 UTC`, whatever form the API gave them in:
 * milliseconds since 1970 (executions, Global Data's MODIFIED), the instance's timestamp pattern
 * (flow runs, imports, monitors, events: `dd.MM.yyyy HH:mm:ss` in the demo), which
 * `GET /discovery/formats` names, or ISO 8601. Herald's times are UTC.
 */
export interface Formats {
  date: string;
  timestamp: string;
}

let formats: Promise<Formats> | undefined;
onSessionChange(() => {
  formats = undefined;
});

function instanceFormats(): Promise<Formats> {
  formats ??= api<Formats>("/discovery/formats");
  return formats;
}

/** The parts a pattern's letters stand for, in the order they appear. */
const LETTERS: [string, string][] = [
  ["yyyy", "year"],
  ["yy", "shortYear"],
  ["MM", "month"],
  ["dd", "day"],
  ["HH", "hour"],
  ["mm", "minute"],
  ["ss", "second"],
  ["SSS", "milli"],
];

/** A Java-style pattern (`dd.MM.yyyy HH:mm:ss`, text in single quotes) as a regular expression. */
function patternRegex(pattern: string): { regex: RegExp; parts: string[] } {
  let source = "";
  const parts: string[] = [];
  for (let i = 0; i < pattern.length; ) {
    if (pattern[i] === "'") {
      const end = pattern.indexOf("'", i + 1);
      const text = pattern.slice(i + 1, end < 0 ? pattern.length : end);
      source += text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      i = end < 0 ? pattern.length : end + 1;
      continue;
    }
    const letter = LETTERS.find(([l]) => pattern.startsWith(l, i));
    if (letter) {
      source += `(\\d{${letter[0].length}})`;
      parts.push(letter[1]);
      i += letter[0].length;
    } else {
      source += pattern[i].replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      i += 1;
    }
  }
  return { regex: new RegExp(`^${source}$`), parts };
}

/** `text` read with the instance's `pattern` as a UTC time, in milliseconds; undefined when it does not fit. */
export function parseWithPattern(text: string, pattern: string): number | undefined {
  const { regex, parts } = patternRegex(pattern);
  const match = regex.exec(text.trim());
  if (!match) return undefined;
  const got: Record<string, number> = {};
  parts.forEach((part, n) => (got[part] = Number(match[n + 1])));
  const year = got.year ?? (got.shortYear !== undefined ? 2000 + got.shortYear : 1970);
  return Date.UTC(year, (got.month ?? 1) - 1, got.day ?? 1, got.hour ?? 0, got.minute ?? 0, got.second ?? 0, got.milli ?? 0);
}

/** Milliseconds as every page shows a time. */
export function shownTime(millis: number): string {
  return `${new Date(millis).toISOString().replace("T", " ").slice(0, 19)} UTC`;
}

/** A time from the API (milliseconds, the instance's pattern or ISO 8601) in milliseconds. */
export function timeOf(value: string | number, pattern: string | undefined): number | undefined {
  if (typeof value === "number") return value;
  const patterned = pattern ? parseWithPattern(value, pattern) : undefined;
  if (patterned !== undefined) return patterned;
  const iso = Date.parse(value);
  return Number.isNaN(iso) ? undefined : iso;
}

/** A time from the API shown as every page shows times, in a `<time>` element. */
export function When({ value }: { value: string | number | null | undefined }) {
  const [pattern, setPattern] = useState<string | undefined>(undefined);
  useEffect(() => {
    let current = true;
    if (typeof value === "string") {
      instanceFormats().then(
        (f) => current && setPattern(f.timestamp),
        () => undefined,
      );
    }
    return () => {
      current = false;
    };
  }, [value]);
  if (value === null || value === undefined || value === "") return null;
  // A pattern's text waits for the pattern rather than being read as something else.
  if (typeof value === "string" && pattern === undefined) return <time>{value}</time>;
  const millis = timeOf(value, pattern);
  if (millis === undefined) return <time>{String(value)}</time>;
  return <time dateTime={new Date(millis).toISOString()}>{shownTime(millis)}</time>;
}
