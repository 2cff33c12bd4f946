import { useCallback, useEffect, useState } from "preact/hooks";

import { ApiError } from "./api";

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` when `keys` change (and on `reload`), keeping its result or its error.
 *
 * The result is kept with the keys it was loaded for, and is only given out for those keys: when
 * a page is reused for other keys (another folder, another recipient) it shows "Loading…" rather
 * than the previous keys' rows, which a click could otherwise land on while the new rows arrive.
 * A `reload` of the same keys keeps the rows on screen until the fresh ones replace them.
 */
export function useLoad<T>(load: () => Promise<T>, keys: unknown[]): Loaded<T> {
  const keyText = JSON.stringify(keys);
  const [loaded, setLoaded] = useState<{ keyText: string; data: T } | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    setLoading(true);
    setError(undefined);
    load().then(
      (value) => {
        if (!current) return;
        setLoaded({ keyText, data: value });
        setLoading(false);
      },
      (e: unknown) => {
        if (!current) return;
        setLoaded(undefined);
        setError(messageOf(e));
        setLoading(false);
      },
    );
    return () => {
      current = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [keyText, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  const data = loaded?.keyText === keyText ? loaded.data : undefined;
  return { data, error, loading, reload };
}

export function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}

/** The page named by the location's hash: `#/recipients/42` is ["recipients", "42"]. */
export function useRoute(): string[] {
  const read = () =>
    location.hash
      .replace(/^#\/?/, "")
      .split("/")
      .filter((part) => part !== "")
      .map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const changed = () => setRoute(read());
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return route;
}

export function href(...parts: (string | number)[]): string {
  return "#/" + parts.map((p) => encodeURIComponent(String(p))).join("/");
}
