import { useChat } from '@ai-sdk/react';
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai';
import { DurableChatTransport, watchChatTurns } from 'durable-agents/ui';
import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';

/** What durable-agents puts in a message's metadata when its turn finishes (see docs/use-chat.md). */
interface TurnMetadata {
  workflowId: string;
  turn: number;
  status: string;
  usage?: { totalTokens: number };
  costUsd?: number;
}

type ChatMessage = UIMessage<TurnMetadata>;

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
  // `?agent=calculator` talks to that agent (it applies when the conversation starts).
  const agent = new URLSearchParams(location.search).get('agent');
  // `DurableChatTransport`: Stop stops the durable turn, and a dropped stream reconnects by itself.
  const [reconnecting, setReconnecting] = useState(false);
  const transport = useMemo(
    () =>
      new DurableChatTransport<ChatMessage>({
        api: '/api/chat',
        body: agent ? { agent } : {},
        onReconnect: () => setReconnecting(true),
      }),
    [agent],
  );
  const { messages, sendMessage, status, error, addToolApprovalResponse, stop, setMessages, resumeStream } =
    useChat<ChatMessage>({
      id,
      messages: history,
      transport,
      // A reload mid-answer picks the turn up where the workflow is.
      resume: true,
      // Answering an approval sends it at once; the turn goes on in the same message.
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
  const [input, setInput] = useState('');
  const busy = status === 'submitted' || status === 'streaming';
  // Turns another tab (or a script) started show here live: load the chat, then follow the turn.
  const seen = useRef({ messages, busy, setMessages, resumeStream });
  seen.current = { messages, busy, setMessages, resumeStream };
  useEffect(() => {
    const watching = new AbortController();
    void watchChatTurns(
      id,
      (turn) => {
        const { messages, busy, setMessages, resumeStream } = seen.current;
        if (turn.type !== 'turn-started' || busy || messages.some((m) => m.id === turn.messageId)) return;
        void fetch(`/api/chat/${encodeURIComponent(id)}/messages`)
          .then((r) => r.json())
          .then((loaded: ChatMessage[]) => {
            setMessages(loaded);
            void resumeStream();
          });
      },
      { signal: watching.signal },
    );
    return () => watching.abort();
  }, [id]);
  useEffect(() => {
    if (!busy) setReconnecting(false);
  }, [busy]);

  function submit(e: FormEvent) {
    e.preventDefault();
    if (!input.trim() || busy) return;
    void sendMessage({ text: input });
    setInput('');
  }

  return (
    <main>
      <h1>durable-agents · useChat</h1>
      <p className="note">
        Conversation <code>{id}</code>: every turn is a durable workflow; reload the page mid-answer.
      </p>
      <ol className="messages">
        {messages.map((m) => (
          <li key={m.id} className={m.role} data-role={m.role}>
            {m.parts.map((part, i) => {
              if (part.type === 'text') return <p key={i}>{part.text}</p>;
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
                {m.metadata.status} · {m.metadata.usage.totalTokens} tokens
                {m.metadata.costUsd !== undefined ? ` · $${m.metadata.costUsd.toFixed(4)}` : ''}
              </p>
            )}
          </li>
        ))}
      </ol>
      {reconnecting && busy && <p className="note">Reconnecting…</p>}
      {error && <p className="error">{error.message}</p>}
      <form onSubmit={submit}>
        <input value={input} onChange={(e) => setInput(e.target.value)} placeholder="Ask the agent…" autoFocus />
        {busy ? (
          <button type="button" onClick={() => void stop()}>
            Stop
          </button>
        ) : (
          <button type="submit">Send</button>
        )}
      </form>
    </main>
  );
}
