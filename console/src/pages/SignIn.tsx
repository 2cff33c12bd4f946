import { useState } from "preact/hooks";

import { signIn } from "../api";
import { messageOf } from "../hooks";
import { Problem } from "../ui";

/** The instance's Public Api client id and secret, exchanged for a token; the secret is dropped. */
export function SignIn() {
  const [clientId, setClientId] = useState("");
  const [secret, setSecret] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signIn(clientId.trim(), secret);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setSecret("");
      setBusy(false);
    }
  }

  return (
    <main class="sign-in">
      <h1>Herald console</h1>
      <p>Sign in with your instance's Public Api credential (its client id and secret).</p>
      <form onSubmit={submit} aria-label="Sign in">
        <label>
          Client id
          <input
            name="client_id"
            autocomplete="username"
            required
            value={clientId}
            onInput={(e) => setClientId(e.currentTarget.value)}
          />
        </label>
        <label>
          Secret
          <input
            name="client_secret"
            type="password"
            autocomplete="current-password"
            required
            value={secret}
            onInput={(e) => setSecret(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <Problem message={error} />
      </form>
    </main>
  );
}
