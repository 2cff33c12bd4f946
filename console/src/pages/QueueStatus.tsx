import { useState } from "preact/hooks";

import { queueStatus } from "../api";
import type { RawAnswer } from "../api";
import { messageOf } from "../hooks";
import { Problem } from "../ui";

/** The status of an asynchronous execution, by the handle its call answered (`queueId`). */
export function QueueStatus() {
  const [queueId, setQueueId] = useState("");
  const [answer, setAnswer] = useState<RawAnswer | undefined>();
  const [error, setError] = useState<string | undefined>();

  async function look(event: Event) {
    event.preventDefault();
    setError(undefined);
    setAnswer(undefined);
    try {
      const answered = await queueStatus(queueId.trim());
      if (answered.status === 404) setError("No execution of this instance has that handle (or its result has expired).");
      else setAnswer(answered);
    } catch (e) {
      setError(messageOf(e));
    }
  }

  return (
    <>
      <h1>Asynchronous calls</h1>
      <p>
        An asynchronous extension answers a call with <code>202</code> and a <code>queueId</code>. While it runs, its status is{" "}
        <code>202</code>; when it is done, the status is the extension's own answer.
      </p>
      <form class="inline" onSubmit={look} aria-label="Look up an asynchronous call">
        <label>
          Queue id
          <input name="queueId" required value={queueId} onInput={(e) => setQueueId(e.currentTarget.value)} size={40} />
        </label>
        <button type="submit">Look up</button>
      </form>
      <Problem message={error} />
      {answer && (
        <div class="answer" aria-label="Answer">
          <p>
            Status <strong>{answer.status}</strong> {answer.status === 202 ? "(still running)" : ""}
          </p>
          <pre>{answer.body}</pre>
        </div>
      )}
    </>
  );
}
