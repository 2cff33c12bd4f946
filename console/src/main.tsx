import { render } from "preact";
import { useEffect, useState } from "preact/hooks";

import { currentSession, onSessionChange, signOut } from "./api";
import { href, useRoute } from "./hooks";
import { Extension } from "./pages/Extension";
import { Extensions } from "./pages/Extensions";
import { Flow, FlowRun, Flows } from "./pages/Flows";
import { GlobalData } from "./pages/GlobalData";
import { Imports } from "./pages/Imports";
import { Model } from "./pages/Model";
import { Monitors } from "./pages/Monitors";
import { QueueStatus } from "./pages/QueueStatus";
import { Recipient, Recipients } from "./pages/Recipients";
import { SignIn } from "./pages/SignIn";
import { Usage } from "./pages/Usage";
import "./style.css";

const PAGES = [
  ["model", "Data model"],
  ["recipients", "Recipients"],
  ["imports", "Imports"],
  ["extensions", "Extensions"],
  ["async", "Asynchronous calls"],
  ["flows", "Flows"],
  ["monitors", "Monitors"],
  ["globaldata", "Global Data"],
  ["usage", "Usage"],
] as const;

function Page({ route }: { route: string[] }) {
  const [page, ...rest] = route;
  switch (page) {
    case "recipients":
      return rest[0] ? <Recipient id={rest[0]} key={rest[0]} /> : <Recipients />;
    case "imports":
      return <Imports />;
    case "extensions":
      if (rest[0] === "one" && rest[1]) return <Extension id={rest[1]} key={rest[1]} />;
      return <Extensions folder={rest[0] === "folder" ? (rest[1] ?? "") : ""} />;
    case "async":
      return <QueueStatus />;
    case "flows":
      if (rest[0] && rest[1] === "runs" && rest[2]) return <FlowRun name={rest[0]} id={rest[2]} />;
      return rest[0] ? <Flow name={rest[0]} key={rest[0]} /> : <Flows />;
    case "monitors":
      return <Monitors />;
    case "globaldata":
      return <GlobalData />;
    case "usage":
      return <Usage />;
    default:
      return <Model />;
  }
}

function App() {
  const [session, setSession] = useState(currentSession);
  const route = useRoute();
  useEffect(() => onSessionChange(() => setSession(currentSession())), []);
  if (!session) return <SignIn />;
  const current = route[0] ?? "model";
  return (
    <>
      <header>
        <strong>Herald</strong>
        <nav aria-label="Console">
          {PAGES.map(([page, title]) => (
            <a href={href(page)} aria-current={current === page ? "page" : undefined}>
              {title}
            </a>
          ))}
        </nav>
        <span class="who">
          {session.clientId}{" "}
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </span>
      </header>
      <main>
        <Page route={route} />
      </main>
    </>
  );
}

render(<App />, document.getElementById("app")!);
