// The console talks to the public REST API only, with the token of the instance's Public Api
// credential. The session keeps the token (in sessionStorage: gone when the tab closes) and
// never the secret, which is used once, for the token request, and dropped.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

const SESSION_KEY = "herald-console-session";

export interface Session {
  clientId: string;
  token: string;
  /** Milliseconds since 1970 when the token expires. */
  expiresAt: number;
}

/** A refusal of the API, with the server's own explanation when it gave one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function currentSession(): Session | null {
  const stored = sessionStorage.getItem(SESSION_KEY);
  if (!stored) return null;
  try {
    const session = JSON.parse(stored) as Session;
    return session.expiresAt > Date.now() ? session : null;
  } catch {
    return null;
  }
}

const listeners = new Set<() => void>();

/** Called whenever the session starts or ends. */
export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function changed() {
  listeners.forEach((l) => l());
}

export function signOut() {
  sessionStorage.removeItem(SESSION_KEY);
  changed();
}

/** Exchanges the credential for a token (`POST /oauth2/token`); the secret is not kept. */
export async function signIn(clientId: string, secret: string): Promise<void> {
  const form = new URLSearchParams({ grant_type: "client_credentials", client_id: clientId, client_secret: secret });
  const response = await fetch("/oauth2/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: form,
  });
  if (response.status === 401) throw new ApiError(401, "The client id or the secret is wrong.");
  if (!response.ok) throw await errorOf(response);
  const token = (await response.json()) as { access_token: string; expires_in: number; scope: string };
  if (token.scope !== "public") {
    throw new ApiError(403, "This is an App Api credential: the console needs the instance's Public Api credential.");
  }
  const session: Session = { clientId, token: token.access_token, expiresAt: Date.now() + token.expires_in * 1000 };
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
  changed();
}

export async function errorOf(response: Response): Promise<ApiError> {
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = (await response.json()) as { message?: string };
    if (body && typeof body.message === "string") message = body.message;
  } catch {
    // No JSON body: the status says it.
  }
  if (response.status === 429) message = `Too many calls: ${message}`;
  return new ApiError(response.status, message);
}

/** A call with the session's token; a 401 ends the session (the token expired or was revoked). */
export async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const session = currentSession();
  if (!session) {
    signOut();
    throw new ApiError(401, "Signed out: sign in again.");
  }
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${session.token}`);
  if (!headers.has("Accept")) headers.set("Accept", "application/json");
  const response = await fetch(path, { ...init, headers });
  if (response.status === 401) {
    signOut();
    throw new ApiError(401, "The session has ended: sign in again.");
  }
  return response;
}

/** A JSON call: the parsed body, or an ApiError with the server's message. */
export async function api<T = Json>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await call(path, init);
  if (!response.ok) throw await errorOf(response);
  if (response.status === 204) return null as T;
  return (await response.json()) as T;
}

export function sendJson(method: string, body: Json): RequestInit {
  return { method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
}

/** A path segment as the platform wants it: URL-encoded twice (a `/` becomes `%252F`). */
export function segment(value: string | number): string {
  return encodeURIComponent(encodeURIComponent(String(value)));
}

/** An answer passed on as it came (an extension's own): its status, media type and body. */
export interface RawAnswer {
  status: number;
  type: string;
  body: string;
}

export async function rawAnswer(response: Response): Promise<RawAnswer> {
  return { status: response.status, type: response.headers.get("Content-Type") ?? "", body: await response.text() };
}

/** An asynchronous execution's status by its handle: 202 while it runs, then its answer. */
/** The status of an asynchronous call: a secure one's, or an open one's of instance `openCustomer`. */
export async function queueStatus(queueId: string, openCustomer?: string): Promise<RawAnswer> {
  const id = encodeURIComponent(queueId);
  if (openCustomer) {
    return rawAnswer(await fetch(`/extensions/status/open/${encodeURIComponent(openCustomer)}/${id}`, { headers: { Accept: "*/*" } }));
  }
  return rawAnswer(await call(`/extensions/status/secure/${id}`, { headers: { Accept: "*/*" } }));
}
