import { useChat } from '@ai-sdk/react';
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai';
import { ChatRequestError, DurableChatTransport, watchChatTurns } from 'durable-agents/ui';
import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';

/** What durable-agents puts in a message's metadata when its turn finishes (see docs/use-chat.md). */
interface TurnMetadata {
  workflowId: string;
  turn: number;
  status: string;
  /** A person stopped the turn: the answer is what the model had written by then. */
  stopped?: true;
  usage?: { totalTokens: number };
  costUsd?: number;
}

/** What a message sent while a turn runs does (see docs/use-chat.md, "A busy conversation"). */
type Busy = 'enqueue' | 'steer' | 'interrupt' | 'reject';

type ChatMessage = UIMessage<TurnMetadata>;

/** A branch of the chat, as `GET /api/chat/:id/branches` lists them (regenerate and edit make them). */
interface Branch {
  id: string;
  current: boolean;
  label?: string;
}

/** The chat's id is the conversation's workflow id: kept in the URL, so a reload (or a second tab) opens the same one. */
function chatId(): string {
  let id = decodeURIComponent(location.hash.slice(1));
  if (!id) {
    id = `chat-${crypto.randomUUID()}`;
    location.hash = encodeURIComponent(id);
  }
  return id;
}

export function App() {
  const [id] = useState(chatId);
  const [history, setHistory] = useState<ChatMessage[]>();
  // The conversation as the workflow holds it: what this tab (or another) said before.
  useEffect(() => {
    fetch(`/api/chat/${encodeURIComponent(id)}/messages`)
      .then((r) => r.json())
      .then(setHistory, () => setHistory([]));
  }, [id]);
  if (!history) return <p className="note">Loading the conversation…</p>;
  return <Chat id={id} history={history} />;
}

function Chat({ id, history }: { id: string; history: ChatMessage[] }) {
  // `?agent=<name>` talks to that agent of your workers (it applies when the conversation starts).
  const agent = new URLSearchParams(location.search).get('agent');
  // `DurableChatTransport`: Stop stops the durable turn, and a dropped stream reconnects by itself.
  const [reconnecting, setReconnecting] = useState(false);
  const transport = useMemo(() => {
    const made = new DurableChatTransport<ChatMessage>({
      api: '/api/chat',
      body: agent ? { agent } : {},
      onReconnect: () => setReconnecting(true),
    });
    // The resume below follows the turn that answers the loaded history's last message, even if it ended meanwhile.
    made.loaded(id, history);
    return made;
  }, [agent, id, history]);
  // A message the chat refused (busy: "reject" while a turn runs): said, and taken off the page.
  const [refusal, setRefusal] = useState<string>();
  const dropped = useRef<(id: string) => void>(() => undefined);
  const { messages, sendMessage, regenerate, status, error, addToolApprovalResponse, stop, setMessages, resumeStream } =
    useChat<ChatMessage>({
      id,
      messages: history,
      transport,
      // A reload mid-answer picks the turn up where the workflow is.
      resume: true,
      // Answering an approval sends it at once; the turn goes on in the same message.
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      onError: (err) => {
        if (err instanceof ChatRequestError && err.messageId && err.status < 500) {
          setRefusal(err.message);
          dropped.current(err.messageId);
        }
      },
    });
  dropped.current = (messageId) => setMessages((all) => all.filter((m) => m.id !== messageId));
  const [input, setInput] = useState('');
  // While a turn runs, a message can still be sent: what it does is the busy policy chosen here.
  const [policy, setPolicy] = useState<Busy>('enqueue');
  // Whether the conversation runs a turn, whoever started it (watchChatTurns below): a refused
  // message ends its own request with an error, while the turn it was refused for goes on.
  const [running, setRunning] = useState(false);
  const streaming = status === 'submitted' || status === 'streaming';
  const busy = streaming || running;
  // Regenerate and edit fork the conversation: the earlier answers stay on a branch of their own.
  const [branches, setBranches] = useState<Branch[]>([]);
  const [editing, setEditing] = useState<{ id: string; text: string }>();
  const reload = async () => setMessages(await (await fetch(`/api/chat/${encodeURIComponent(id)}/messages`)).json());
  useEffect(() => {
    if (busy) return;
    fetch(`/api/chat/${encodeURIComponent(id)}/branches`)
      .then((r) => r.json())
      .then(setBranches, () => undefined);
  }, [id, busy, messages.length]);
  async function switchTo(branch: string) {
    await fetch(`/api/chat/${encodeURIComponent(id)}/branch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ branch }),
    });
    await reload();
  }
  // Turns another tab (or a script) started show here live: load the chat, then follow the turn.
  const seen = useRef({ messages, busy: streaming, setMessages, resumeStream, transport });
  seen.current = { messages, busy: streaming, setMessages, resumeStream, transport };
  useEffect(() => {
    const watching = new AbortController();
    void watchChatTurns(
      id,
      (turn) => {
        if (turn.type === 'turn-started') setRunning(true);
        if (turn.type === 'turn-finished') setRunning(false);
        const { messages, busy, setMessages, resumeStream, transport } = seen.current;
        // Another tab made another branch current: show it.
        if (turn.type === 'branch-switched' && !busy) {
          void fetch(`/api/chat/${encodeURIComponent(id)}/messages`)
            .then((r) => r.json())
            .then(setMessages);
          return;
        }
        if (turn.type !== 'turn-started' || busy || messages.some((m) => m.id === turn.messageId)) return;
        void fetch(`/api/chat/${encodeURIComponent(id)}/messages`)
          .then((r) => r.json())
          .then((loaded: ChatMessage[]) => {
            transport.loaded(id, loaded);
            setMessages(loaded);
            void resumeStream();
          });
      },
      { signal: watching.signal },
    );
    return () => watching.abort();
  }, [id]);
  useEffect(() => {
    if (!streaming) setReconnecting(false);
  }, [streaming]);

  function submit(e: FormEvent) {
    e.preventDefault();
    const text = input.trim();
    if (!text) return;
    setInput('');
    setRefusal(undefined);
    // Steering joins the running answer (shown in it): no message of its own, no second stream.
    if (busy && policy === 'steer')
      return void transport.steer(id, text).catch((err: Error) => setRefusal(err.message));
    void sendMessage({ text }, busy ? { body: { busy: policy } } : undefined);
  }

  // Stop stops the durable turn and leaves this page's stream open: the turn's end (stopped)
  // comes down it at once. (useChat's stop() would close the stream first.)
  function stopTurn() {
    void transport.stop(id).catch(() => stop());
  }

  return (
    <main>
      <h1>durable-agents · useChat</h1>
      <p className="note">
        Conversation <code>{id}</code>: every turn is a durable workflow; reload the page mid-answer.
      </p>
      {branches.length > 1 && (
        <label className="note">
          Branch{' '}
          <select
            aria-label="Branch"
            value={branches.find((b) => b.current)?.id}
            disabled={busy}
            onChange={(e) => void switchTo(e.target.value)}
          >
            {branches.map((b) => (
              <option key={b.id} value={b.id}>
                {b.id}
                {b.label ? `: ${b.label}` : ''}
              </option>
            ))}
          </select>
        </label>
      )}
      <ol className="messages">
        {messages.map((m) => (
          <li key={m.id} className={m.role} data-role={m.role}>
            {editing?.id === m.id ? (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  // Sent in place of this message: the conversation forks here.
                  void sendMessage({ text: editing.text, messageId: m.id });
                  setEditing(undefined);
                }}
              >
                <input
                  aria-label="Edit message"
                  value={editing.text}
                  onChange={(e) => setEditing({ id: m.id, text: e.target.value })}
                />
                <button type="submit">Save</button>
              </form>
            ) : null}
            {m.parts.map((part, i) => {
              if (part.type === 'text') return editing?.id === m.id ? null : <p key={i}>{part.text}</p>;
              // A message sent with `busy: "steer"` that joined this answer.
              if (part.type === 'data-steered')
                return (
                  <p key={i} className="steered">
                    ↳ {(part.data as { message: string }).message}
                  </p>
                );
              if (part.type === 'reasoning')
                return (
                  <p key={i} className="reasoning">
                    {part.text}
                  </p>
                );
              if (part.type.startsWith('tool-') && 'toolCallId' in part)
                return (
                  <div key={i} className="tool" data-state={part.state}>
                    <code>
                      {part.type.slice(5)}({JSON.stringify(part.input)})
                    </code>
                    {part.state === 'output-available' && <span> → {String(part.output)}</span>}
                    {part.state === 'output-error' && <span className="error"> → {part.errorText}</span>}
                    {part.state === 'output-denied' && <span> → denied</span>}
                    {part.state === 'approval-requested' && (
                      <span>
                        <button onClick={() => addToolApprovalResponse({ id: part.approval.id, approved: true })}>
                          Approve
                        </button>
                        <button onClick={() => addToolApprovalResponse({ id: part.approval.id, approved: false })}>
                          Deny
                        </button>
                      </span>
                    )}
                  </div>
                );
              return null;
            })}
            {m.metadata?.usage && (
              <p className="note">
                {m.metadata.stopped ? 'stopped' : m.metadata.status} · {m.metadata.usage.totalTokens} tokens
                {m.metadata.costUsd !== undefined ? ` · $${m.metadata.costUsd.toFixed(4)}` : ''}
              </p>
            )}
            {!busy && m.role === 'user' && editing?.id !== m.id && (
              <button
                className="small"
                onClick={() =>
                  setEditing({ id: m.id, text: m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('') })
                }
              >
                Edit
              </button>
            )}
            {!busy && m.role === 'assistant' && (
              <button className="small" onClick={() => void regenerate({ messageId: m.id })}>
                Regenerate
              </button>
            )}
          </li>
        ))}
      </ol>
      {reconnecting && busy && <p className="note">Reconnecting…</p>}
      {refusal ? (
        <p className="error">{refusal}</p>
      ) : (
        error && !(error instanceof ChatRequestError && error.messageId) && <p className="error">{error.message}</p>
      )}
      <form onSubmit={submit}>
        <input value={input} onChange={(e) => setInput(e.target.value)} placeholder="Ask the agent…" autoFocus />
        {busy && (
          <select aria-label="While a turn runs" value={policy} onChange={(e) => setPolicy(e.target.value as Busy)}>
            <option value="enqueue">then answer it</option>
            <option value="steer">steer this answer</option>
            <option value="interrupt">stop this answer, answer it</option>
            <option value="reject">refuse it</option>
          </select>
        )}
        <button type="submit">Send</button>
        {busy && (
          <button type="button" onClick={stopTurn}>
            Stop
          </button>
        )}
      </form>
    </main>
  );
}
