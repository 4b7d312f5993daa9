/**
 * The web chat page served at `/`: one static HTML file with its script inline, so it needs no
 * build step and ships inside the package. It uses only the HTTP API: `GET /agents`,
 * `POST /conversations/:id/messages` (sent with `Prefer: wait=0`, so the request returns once the message is delivered),
 * `GET /conversations/:id/events` (an EventSource, which reconnects with `Last-Event-ID` by
 * itself), approvals and cancel.
 */

/** What the page needs from the server. */
export interface ChatPageConfig {
  /** A conversation's Temporal UI address without the id (the id is appended), or undefined. */
  workflowUrlPrefix?: string;
}

/** The page's HTML, with its configuration inlined. */
export function chatPageHtml(config: ChatPageConfig): string {
  // `<` escaped so the JSON cannot close the script element.
  const json = JSON.stringify(config).replace(/</g, '\\u003c');
  return PAGE.replace('/*CONFIG*/', `window.DURABLE_AGENTS = ${json};`);
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>durable-agents chat</title>
<style>
  :root { font-family: system-ui, sans-serif; color: #1d1d1f; background: #f6f6f8; }
  body { margin: 0; display: flex; flex-direction: column; height: 100vh; }
  header { display: flex; gap: .6rem; align-items: center; flex-wrap: wrap; padding: .5rem 1rem; background: #fff; border-bottom: 1px solid #ddd; }
  header h1 { font-size: 1rem; margin: 0 .25rem 0 0; white-space: nowrap; }
  header label { display: flex; gap: .35rem; align-items: center; white-space: nowrap; }
  header select { max-width: 14rem; }
  header form { display: flex; gap: .35rem; margin: 0; }
  header .spacer { flex: 1; }
  #status { font-size: .8rem; color: #666; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 24rem; }
  #ui-link { white-space: nowrap; font-size: .9rem; }
  #log { flex: 1; overflow-y: auto; padding: 1rem; display: flex; flex-direction: column; gap: .6rem; }
  .empty { margin: auto; max-width: 36rem; text-align: center; color: #444; }
  .empty h2 { font-size: 1.2rem; margin: 0 0 .4rem; }
  .empty .examples { display: flex; flex-wrap: wrap; gap: .5rem; justify-content: center; margin-top: .8rem; }
  .empty .examples button { background: #fff; border: 1px solid #ccd; border-radius: 16px; padding: .35rem .8rem; text-align: left; }
  .user { align-self: flex-end; background: #2f6fed; color: #fff; padding: .5rem .8rem; border-radius: 12px 12px 2px 12px; max-width: 70%; white-space: pre-wrap; }
  .agent { align-self: flex-start; background: #fff; border: 1px solid #ddd; padding: .5rem .8rem; border-radius: 12px 12px 12px 2px; max-width: 80%; display: flex; flex-direction: column; gap: .4rem; }
  .text { white-space: pre-wrap; }
  .text:empty { display: none; }
  details.tool { background: #f2f4f7; border-radius: 6px; padding: .3rem .5rem; font-size: .85rem; }
  details.tool summary { cursor: pointer; font-family: ui-monospace, monospace; }
  details.tool pre { margin: .3rem 0; white-space: pre-wrap; word-break: break-word; }
  .approval { border: 1px solid #e0a800; background: #fff8e1; border-radius: 6px; padding: .4rem .6rem; font-size: .85rem; }
  .approval button { margin-right: .4rem; }
  .note { font-size: .8rem; color: #666; }
  .error { color: #b00020; }
  footer { display: flex; gap: .5rem; padding: .6rem 1rem; background: #fff; border-top: 1px solid #ddd; }
  footer textarea { flex: 1; min-width: 0; resize: none; font: inherit; padding: .4rem; }
  button { font: inherit; padding: .3rem .8rem; cursor: pointer; }
  /* Phones: the header takes two rows, nothing runs off the screen. */
  @media (max-width: 640px) {
    header { gap: .4rem .5rem; padding: .5rem .6rem; }
    header select { max-width: 9rem; }
    #resume-id { width: 7rem; }
    header .spacer { display: none; }
    #status { order: 10; flex: 1 1 12rem; max-width: none; }
    #ui-link { order: 11; }
    .user, .agent { max-width: 92%; }
  }
</style>
</head>
<body>
<header>
  <h1>durable-agents</h1>
  <label>Agent <select id="agent"><option value="">no named agent</option></select></label>
  <button id="new" type="button">New chat</button>
  <form id="resume-form"><input id="resume-id" placeholder="conversation id" size="16" aria-label="conversation id"><button id="resume" type="submit">Resume</button></form>
  <span class="spacer"></span>
  <span id="status"></span>
  <a id="ui-link" target="_blank" rel="noopener" hidden>Temporal UI</a>
</header>
<main id="log" aria-live="polite"></main>
<footer>
  <textarea id="message" rows="2" placeholder="Type a message (Enter sends, Shift+Enter for a new line)"></textarea>
  <button id="send" type="button">Send</button>
  <button id="cancel" type="button" hidden>Cancel turn</button>
</footer>
<script>
/*CONFIG*/
(() => {
  const $ = (id) => document.getElementById(id);
  const log = $('log');
  let conversationId;
  let started = false; // whether the conversation exists (its agent is then fixed)
  let source;
  let running = false;
  const turns = new Map();
  const calls = new Map();
  const tools = new Map();
  const approvals = new Map();
  const agents = new Map(); // name -> summary (GET /agents): description, model, tools, examples

  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const scroll = () => { log.scrollTop = log.scrollHeight; };
  const status = (text) => { $('status').textContent = text; };
  const args = (a) => Object.entries(a || {}).map(([k, v]) => k + '=' + JSON.stringify(v)).join(', ');
  const setRunning = (on) => { running = on; $('cancel').hidden = !on; $('send').disabled = on; $('send').hidden = on; };

  async function api(path, options = {}) {
    const res = await fetch(path, { ...options, headers: { 'content-type': 'application/json', ...(options.headers || {}) } });
    const body = await res.json().catch(() => ({}));
    if (!res.ok && res.status !== 202) throw new Error(body.error || res.statusText);
    return body;
  }

  // The Temporal UI link, once the conversation exists (its page would be empty before).
  function showLink() {
    const link = $('ui-link');
    const prefix = window.DURABLE_AGENTS.workflowUrlPrefix;
    link.hidden = !prefix || !started;
    if (prefix) link.href = prefix + encodeURIComponent(conversationId);
  }

  // An empty conversation says who answers (agent, model, tools) and offers questions to try.
  function showEmpty() {
    if (started || log.querySelector('.user')) return;
    const agent = agents.get($('agent').value);
    const box = el('div', 'empty');
    box.id = 'empty';
    box.append(el('h2', '', agent ? 'Ask the ' + agent.name + ' agent' : 'Ask anything'));
    const about = agent
      ? [agent.description, agent.model ? 'model ' + agent.model : '', agent.tools.length ? 'tools: ' + agent.tools.join(', ') : 'no tools'].filter(Boolean).join(' · ')
      : 'No named agent: the tools and the default model of the worker answer.';
    box.append(el('p', 'note about', about));
    const examples = el('div', 'examples');
    for (const question of (agent && agent.examples && agent.examples.length ? agent.examples : ['What can you do?'])) {
      const b = el('button', 'example', question);
      b.type = 'button';
      b.onclick = () => { $('message').value = question; send(); };
      examples.append(b);
    }
    box.append(examples);
    log.replaceChildren(box);
  }

  function show(conversation, isNew) {
    if (source) source.close();
    source = undefined;
    conversationId = conversation;
    started = !isNew;
    turns.clear(); calls.clear(); tools.clear(); approvals.clear();
    log.replaceChildren();
    location.hash = 'conversation=' + encodeURIComponent(conversation);
    $('agent').disabled = started;
    showLink();
    status(isNew ? 'new conversation ' + conversation : 'conversation ' + conversation);
    setRunning(false);
    if (started) listen();
    else showEmpty();
  }

  function turnOf(e) {
    let t = turns.get(e.turn);
    if (!t) {
      const agent = el('div', 'agent');
      agent.dataset.turn = e.turn;
      t = { agent };
      turns.set(e.turn, t);
      log.append(agent);
    }
    return t;
  }

  function onEvent(e) {
    const t = e.type === 'turn_started' ? undefined : turnOf(e);
    switch (e.type) {
      case 'turn_started': {
        const empty = $('empty');
        if (empty) empty.remove();
        log.append(el('div', 'user', e.message));
        turnOf(e);
        setRunning(true);
        break;
      }
      case 'model_call_started': {
        const text = el('div', 'text');
        text.dataset.call = e.call;
        calls.set(e.call, text);
        t.agent.append(text);
        break;
      }
      case 'text_delta': {
        const text = calls.get(e.call);
        if (text) text.textContent += e.delta;
        break;
      }
      case 'model_retry': {
        const text = calls.get(e.call);
        if (text) text.textContent = '';
        t.agent.append(el('div', 'note', 'The model call was retried (attempt ' + e.attempt + '): ' + e.error));
        break;
      }
      case 'approval_requested': {
        const box = el('div', 'approval');
        box.dataset.callId = e.callId;
        box.append(el('div', '', 'Approve ' + e.summary + '?'));
        const approve = el('button', 'approve', 'Approve');
        const reject = el('button', 'reject', 'Reject');
        approve.type = reject.type = 'button';
        approve.onclick = () => decide(e.callId, true);
        reject.onclick = () => decide(e.callId, false, prompt('Why? (the LLM reads this)') || undefined);
        box.append(approve, reject);
        approvals.set(e.callId, box);
        t.agent.append(box);
        break;
      }
      case 'approval_decided': {
        const box = approvals.get(e.callId);
        if (box) box.replaceChildren(el('span', 'note', (e.approved ? 'Approved' : 'Rejected') + (e.reason ? ': ' + e.reason : '')));
        break;
      }
      case 'tool_call_started': {
        const d = el('details', 'tool');
        d.dataset.id = e.id;
        const summary = el('summary', '', '… ' + e.name + '(' + args(e.arguments) + ')');
        d.append(summary, el('div', 'note', 'arguments'), el('pre', 'arguments', JSON.stringify(e.arguments, null, 2)));
        tools.set(e.id, { d, summary, name: e.name, args: e.arguments });
        t.agent.append(d);
        break;
      }
      case 'tool_call_finished': {
        const tool = tools.get(e.id);
        if (!tool) break;
        tool.summary.textContent = (e.error ? '✗ ' : '✓ ') + tool.name + '(' + args(tool.args) + ')';
        tool.d.append(el('div', 'note', e.error ? 'error' : 'result'), el('pre', 'result' + (e.error ? ' error' : ''), e.result));
        break;
      }
      case 'turn_completed': {
        const r = e.result;
        const done = r.status === 'completed' ? '' : ' (' + r.status.replace('_', ' ') + ')';
        t.agent.append(el('div', 'note done', r.iterations + ' model call' + (r.iterations === 1 ? '' : 's') + ', ' + r.usage.totalTokens + ' tokens' + done));
        setRunning(false);
        break;
      }
      case 'turn_failed': {
        t.agent.append(el('div', 'note error', 'The turn failed: ' + e.error));
        setRunning(false);
        break;
      }
    }
    scroll();
  }

  function listen() {
    if (source) return;
    source = new EventSource('/conversations/' + encodeURIComponent(conversationId) + '/events');
    source.onmessage = (m) => onEvent(JSON.parse(m.data));
    source.onopen = () => status('live: ' + conversationId);
    source.onerror = () => {
      if (source && source.readyState === EventSource.CLOSED) {
        status('no live events for ' + conversationId + ' (not started yet, or closed)');
        source = undefined;
      } else status('reconnecting…');
    };
    source.addEventListener('error', (m) => {
      if (m.data) status('stream error: ' + JSON.parse(m.data).error);
    });
    // The conversation closed: nothing more will come.
    source.addEventListener('end', () => {
      status('conversation ' + conversationId + ' is closed');
      source.close();
      source = undefined;
    });
  }

  async function send() {
    const message = $('message').value.trim();
    if (!message || running) return;
    $('message').value = '';
    const agent = $('agent').value;
    try {
      setRunning(true);
      await api('/conversations/' + encodeURIComponent(conversationId) + '/messages', { method: 'POST', headers: { prefer: 'wait=0' }, body: JSON.stringify(agent && !started ? { message, agent } : { message }) });
      started = true;
      $('agent').disabled = true;
      showLink();
      listen();
    } catch (err) {
      setRunning(false);
      log.append(el('div', 'note error', 'Could not send: ' + err.message));
    }
  }

  async function decide(callId, approve, reason) {
    try {
      await api('/conversations/' + encodeURIComponent(conversationId) + '/approvals/' + encodeURIComponent(callId), { method: 'POST', body: JSON.stringify(reason ? { approve, reason } : { approve }) });
    } catch (err) {
      log.append(el('div', 'note error', 'Could not decide: ' + err.message));
    }
  }

  async function cancel() {
    try {
      await api('/conversations/' + encodeURIComponent(conversationId) + '/cancel', { method: 'POST', body: '{}' });
    } catch (err) {
      log.append(el('div', 'note error', 'Could not cancel: ' + err.message));
    }
  }

  $('send').onclick = send;
  $('cancel').onclick = cancel;
  $('message').addEventListener('keydown', (k) => { if (k.key === 'Enter' && !k.shiftKey) { k.preventDefault(); send(); } });
  $('new').onclick = () => show('chat-' + Math.random().toString(36).slice(2, 10), true);
  $('resume-form').onsubmit = (ev) => { ev.preventDefault(); const id = $('resume-id').value.trim(); if (id) show(id, false); };
  $('agent').onchange = () => { log.replaceChildren(); showEmpty(); };

  api('/agents').then((listed) => {
    for (const a of listed.agents) {
      agents.set(a.name, a);
      const o = el('option', '', a.name);
      o.value = a.name;
      if (a.description) o.title = a.description;
      $('agent').append(o);
    }
    // A worker with named agents: the first answers unless another is picked.
    if (listed.agents.length && !started) {
      $('agent').value = listed.agents[0].name;
      log.replaceChildren();
      showEmpty();
    }
  }).catch(() => status('could not list agents (is a worker running?)'));

  const fromHash = /conversation=([^&]+)/.exec(location.hash);
  if (fromHash) show(decodeURIComponent(fromHash[1]), false);
  else show('chat-' + Math.random().toString(36).slice(2, 10), true);
})();
</script>
</body>
</html>
`;
