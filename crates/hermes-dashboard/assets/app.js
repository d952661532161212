'use strict';
/* Hermes dashboard front-end: plain DOM, no framework, no build step, so the
 * server can embed this file as-is.
 * Rules kept on purpose:
 *  - server data reaches the page only via text nodes and setAttribute, never
 *    innerHTML, so a transcript, log line or skill cannot inject markup;
 *  - no inline scripts or style attributes: the CSP forbids them;
 *  - every state-changing request carries the per-process CSRF token. */

// ---------- DOM toolkit ----------

const $ = (sel, root = document) => root.querySelector(sel);
const enc = encodeURIComponent;
const view = $('#view');
const CSRF = $('meta[name="csrf-token"]')?.content || '';

// Attributes: functions become listeners ("onclick" -> "click"), true becomes
// an empty boolean attribute, null/false are skipped so callers can write
// `hidden: !x` or `title: maybeNull` inline.
function setAttrs(n, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (typeof v === 'function') n.addEventListener(k.replace(/^on/, ''), v);
    else if (k === 'value') n.value = v; // textarea has no value attribute
    else n.setAttribute(k, v === true ? '' : v);
  }
}
// Non-Node children become text nodes: this is the XSS guarantee.
function addKids(n, kids) {
  for (const k of kids.flat(Infinity)) {
    if (k != null && k !== false) n.append(k instanceof Node ? k : String(k));
  }
  return n;
}
// replaceChildren() would stringify nested arrays; this flattens them first.
const setKids = (n, ...kids) => { n.replaceChildren(); return addKids(n, kids); };
function el(tag, attrs, ...kids) {
  const n = document.createElement(tag);
  setAttrs(n, attrs);
  return addKids(n, kids);
}
function svg(tag, attrs, ...kids) {
  const n = document.createElementNS('http://www.w3.org/2000/svg', tag);
  setAttrs(n, attrs);
  return addKids(n, kids);
}
const button = (label, attrs) => el('button', { type: 'button', ...attrs }, label);

function table(id, heads) {
  return el('table', { id },
    el('thead', null, el('tr', null, heads.map(h => el('th', { scope: 'col' }, h)))),
    el('tbody'));
}
const td = (c, cls) => el('td', cls ? { class: cls } : null, c ?? '—');
const tr = (attrs, ...cells) =>
  el('tr', attrs, cells.map(c => (c instanceof HTMLTableCellElement ? c : td(c))));
// Replaces a table body; an empty list gets one explanatory row instead.
function fillTable(t, rows, emptyText) {
  const body = t.tBodies[0];
  body.replaceChildren(...rows);
  if (!rows.length) {
    body.append(el('tr', { class: 'empty' },
      el('td', { colspan: t.tHead.rows[0].cells.length }, emptyText)));
  }
}

// ---------- formatting ----------

const nf = new Intl.NumberFormat();
const compactNf = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
const isNum = n => typeof n === 'number' && isFinite(n);
const num = n => (isNum(n) ? nf.format(n) : '—');
const money = c => (isNum(c) ? '$' + c.toFixed(Math.abs(c) >= 1 ? 2 : 4) : '—');
const asText = v => (v == null ? '' : typeof v === 'string' ? v : JSON.stringify(v));

// Tool arguments arrive either as a JSON string or as an object; indent both.
function pretty(v) {
  if (typeof v === 'string') {
    try {
      const p = JSON.parse(v);
      if (p && typeof p === 'object') return JSON.stringify(p, null, 2);
    } catch { /* not JSON: show as-is */ }
    return v;
  }
  return v == null ? '' : JSON.stringify(v, null, 2);
}

// Times from the API are Unix seconds (float); tolerate ISO strings too.
function toDate(t) {
  if (t == null || t === '') return null;
  const secs = typeof t === 'number' || /^\d+(\.\d+)?$/.test(t);
  const d = new Date(secs ? Number(t) * 1000 : t);
  return isNaN(d) ? null : d;
}
function rel(t) {
  const d = toDate(t);
  if (!d) return '—';
  const diff = (Date.now() - d) / 1000, s = Math.abs(diff);
  if (s < 45) return diff >= 0 ? 'just now' : 'in a moment';
  const [v, u] = s < 3600 ? [s / 60, 'm'] : s < 86400 ? [s / 3600, 'h']
    : s < 2592000 ? [s / 86400, 'd'] : s < 31536000 ? [s / 2592000, 'mo'] : [s / 31536000, 'y'];
  const txt = Math.round(v) + u;
  return diff >= 0 ? txt + ' ago' : 'in ' + txt;
}
function timeEl(t) {
  const d = toDate(t);
  return d ? el('time', { datetime: d.toISOString(), title: d.toLocaleString() }, rel(t)) : '—';
}

// Message content may be a string, null, or a list of content parts.
function contentText(c) {
  if (Array.isArray(c)) return c.map(p => (typeof p === 'string' ? p : p?.text ?? asText(p))).join('\n');
  return asText(c);
}

// ---------- flash messages & API ----------

// Flashes live at the top of the current view, so navigating clears them.
function flash(msg, kind = 'error') {
  let box = $('.flashes', view);
  if (!box) view.prepend(box = el('div', { class: 'flashes', role: 'alert' }));
  // The log page polls every 2 s: don't stack the same failure over and over.
  for (const f of box.children) if (f.dataset.msg === msg) return;
  const f = el('div', { class: `flash ${kind}`, 'data-msg': msg }, el('span', null, msg),
    button('×', { class: 'close', 'aria-label': 'Dismiss', onclick: () => f.remove() }));
  box.append(f);
  if (kind === 'ok') setTimeout(() => f.remove(), 4000);
}

let routeGen = 0; // bumped on navigation so late errors don't land on the next page

async function api(method, path, body, { quiet = false } = {}) {
  const gen = routeGen;
  const opts = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (method !== 'GET') {
    opts.headers['X-CSRF-Token'] = CSRF;
    // POST/PATCH always send JSON (an empty object at least) so the server's
    // JSON extractor never sees a missing content type.
    if (body !== undefined || method === 'POST' || method === 'PATCH') {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body ?? {});
    }
  }
  const fail = msg => {
    if (!quiet && gen === routeGen) flash(msg);
    throw Object.assign(new Error(msg), { shown: true });
  };
  let res, data = null;
  try {
    res = await fetch(path, opts);
    const text = await res.text();
    try { data = text ? JSON.parse(text) : null; } catch { /* e.g. a proxy's HTML error page */ }
  } catch (e) {
    return fail(`Network error: ${e.message}`);
  }
  if (!res.ok) return fail(data?.error || `${res.status} ${res.statusText}`.trim());
  return data ?? {};
}

// Wraps event handlers: API errors are already flashed, anything else is a bug
// worth surfacing instead of an unhandled rejection in the console.
const safe = fn => async (...args) => {
  try { return await fn(...args); } catch (e) {
    if (!e?.shown) { console.error(e); flash(String(e?.message || e)); }
  }
};

// ---------- router ----------

let cleanups = []; // run when leaving a page (timers)
let currentPage = null;

function route() {
  routeGen++;
  cleanups.splice(0).forEach(f => f());
  const [name, ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  const page = pages[name] ? name : 'chat';
  currentPage = page;
  let arg = rest.join('/') || null;
  try { arg = arg && decodeURIComponent(arg); } catch { /* keep raw */ }
  for (const a of document.querySelectorAll('nav a[data-nav]')) {
    const on = a.dataset.nav === page;
    a.classList.toggle('active', on);
    if (on) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  document.title = `Hermes · ${page}`;
  view.replaceChildren();
  safe(pages[page])(arg);
}

// ---------- chat ----------

// One server-side conversation per page load, kept (with its DOM) while the
// user visits other pages; events keep streaming into the detached log.
const chat = {
  id: null, session: null, es: null, creating: null, ui: null,
  running: false, turn: 0, bubble: null, calls: new Map(), cards: new Map(),
};

function chatUI() {
  if (chat.ui) return chat.ui;
  const u = {};
  u.session = el('code', { id: 'chat-session' }, '—');
  u.model = el('span', { id: 'chat-model-name' }, '—');
  u.provider = el('span', { class: 'muted' });
  u.log = el('div', { id: 'chat-log', class: 'chat-log', tabindex: '0', 'aria-label': 'Conversation' });
  u.input = el('textarea', {
    id: 'chat-input', rows: '3', 'aria-label': 'Message',
    placeholder: 'Message Hermes — Enter sends, Shift+Enter adds a line, /new starts over',
  });
  u.send = el('button', { id: 'chat-send', type: 'submit', class: 'primary' }, 'Send');
  u.modelIn = el('input', { id: 'chat-model', placeholder: 'model', 'aria-label': 'Model to switch to' });
  u.input.addEventListener('keydown', e => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); safe(send)(); }
  });
  u.modelIn.addEventListener('keydown', e => {
    if (e.key === 'Enter') { e.preventDefault(); safe(switchModel)(); }
  });
  u.root = el('section', { class: 'chat' },
    el('div', { class: 'chat-head' },
      el('span', null, 'Session ', u.session), el('span', null, 'Model ', u.model, ' ', u.provider),
      el('span', { class: 'spacer' }), u.modelIn,
      button('Switch model', { id: 'chat-model-set', onclick: safe(switchModel) })),
    u.log,
    el('form', { class: 'chat-form', onsubmit: e => { e.preventDefault(); safe(send)(); } },
      u.input,
      el('div', { class: 'row' }, u.send,
        button('Stop', { id: 'chat-stop', onclick: safe(interrupt) }),
        button('New chat', { id: 'chat-new', onclick: safe(newChat) }))));
  return (chat.ui = u);
}

async function pageChat(sessionId) {
  const u = chatUI();
  view.append(u.root);
  scrollLog();
  u.input.focus();
  await ensureChat(sessionId);
}

async function ensureChat(sessionId) {
  if (chat.creating) await chat.creating.catch(() => {});
  if (chat.id && (!sessionId || sessionId === chat.session)) return;
  await startChat(sessionId);
}

// chat.creating covers the whole start (history included), so a second
// navigation waits for it instead of starting a chat in parallel.
function startChat(sessionId) {
  const p = (async () => {
    chat.es?.close();
    chat.es = null;
    chat.id = null;
    resetLog();
    setRunning(false);
    const r = await api('POST', '/api/chat', sessionId ? { session_id: sessionId } : {});
    chat.id = r.chat_id;
    setSession(r.session_id, false);
    setModel(r.model, r.provider);
    if (sessionId) {
      await loadHistory(sessionId);
      logLine('note', `Continuing session ${sessionId}`);
    }
    openEvents();
  })();
  chat.creating = p;
  return p.finally(() => { if (chat.creating === p) chat.creating = null; });
}

// Shows the earlier turns of a continued session; capped so a huge session
// doesn't freeze the page (the full transcript is on its Sessions page).
async function loadHistory(id) {
  const r = await api('GET', `/api/sessions/${enc(id)}`, undefined, { quiet: true }).catch(() => null);
  const msgs = r?.messages || [];
  const shown = msgs.slice(-200);
  if (msgs.length > shown.length) {
    chat.ui.log.append(el('div', { class: 'note' }, `${num(msgs.length - shown.length)} earlier messages not shown — `,
      el('a', { href: `#/sessions/${enc(id)}` }, 'full transcript')));
  }
  chat.ui.log.append(...shown.map(msgNode));
}

function openEvents() {
  const es = new EventSource(`/api/chat/${enc(chat.id)}/events`);
  chat.es = es;
  const onMsg = e => {
    if (chat.es !== es) return; // a late event from a replaced chat
    let ev;
    try { ev = JSON.parse(e.data); } catch { return; }
    const stick = nearBottom();
    try { handlers[ev.type]?.(ev); } catch (err) { console.error(err); }
    if (stick) scrollLog();
  };
  es.onmessage = onMsg;
  // Also accept named SSE events, in case the server tags them with `event:`.
  for (const t of Object.keys(handlers)) es.addEventListener(t, onMsg);
  es.onerror = () => {
    // CONNECTING means the browser retries by itself (with Last-Event-ID).
    if (chat.es === es && es.readyState === EventSource.CLOSED) {
      logLine('error', 'Lost the connection to this chat. Press “New chat” to start again.');
      setRunning(false);
    }
  };
}

const NORMAL_END = new Set(['completed', 'complete', 'stop', 'end_turn', 'done', 'finished']);

const handlers = {
  text: e => appendText(e.text),
  reasoning: e => appendReasoning(e.text),
  tool_started: toolStarted,
  tool_finished: toolFinished,
  approval: approvalCard,
  clarify: clarifyCard,
  question_closed: e => closeCard(e.request_id),
  status: e => logLine('status', e.message),
  error: e => logLine('error', e.message),
  turn_complete: turnComplete,
  session_changed: e => setSession(e.session_id, true),
  model_changed: e => setModel(e.model, e.provider),
};

// The assistant bubble of the running turn. Text, reasoning, tool calls and
// cards are appended in arrival order; b.text / b.think point at the segment
// that deltas currently extend (null = start a new one).
function bubble() {
  if (!chat.bubble) {
    const n = el('div', { class: 'msg assistant' });
    chat.ui.log.append(n);
    chat.bubble = { el: n, text: null, think: null, gotText: false };
  }
  return chat.bubble;
}
function appendText(t) {
  const b = bubble();
  if (!b.text) {
    b.text = document.createTextNode('');
    b.el.append(el('div', { class: 'text' }, b.text));
    b.think = null;
  }
  b.text.appendData(t ?? '');
  b.gotText = true;
}
function appendReasoning(t) {
  const b = bubble();
  if (!b.think) {
    b.think = document.createTextNode('');
    b.el.append(el('details', { class: 'reasoning' }, el('summary', null, 'Thinking'),
      el('div', { class: 'think' }, b.think)));
    b.text = null;
  }
  b.think.appendData(t ?? '');
}
// Puts a block (tool line, card, status) into the running bubble if there is one.
function appendBlock(n) {
  if (chat.bubble) {
    chat.bubble.el.append(n);
    chat.bubble.text = chat.bubble.think = null;
  } else chat.ui.log.append(n);
}
function logLine(cls, text) { appendBlock(el('div', { class: cls }, text ?? '')); }

function toolStarted(e) {
  bubble();
  const state = el('span', { class: 'state' }, 'running');
  const result = el('pre', { class: 'result' });
  const d = el('details', { class: 'tool running', 'data-call': e.call_id },
    el('summary', null, '⚙ ', el('span', { class: 'name' }, e.name || 'tool'), ' … ', state),
    el('pre', { class: 'args' }, pretty(e.arguments)), result);
  chat.calls.set(e.call_id, { d, state, result });
  appendBlock(d);
}
function toolFinished(e) {
  if (!chat.calls.has(e.call_id)) toolStarted(e); // missed the start (e.g. reconnect)
  const c = chat.calls.get(e.call_id);
  c.d.classList.remove('running');
  c.d.classList.add(e.ok ? 'ok' : 'failed');
  c.state.textContent = e.ok ? `${num(e.duration_ms ?? 0)} ms` : 'failed';
  if (!e.ok && isNum(e.duration_ms)) c.state.title = `${num(e.duration_ms)} ms`;
  c.result.textContent = typeof e.result === 'string' ? e.result : pretty(e.result);
}

function lockCard(card, locked) {
  for (const n of card.querySelectorAll('button, input')) n.disabled = locked;
}
// Shared answer flow of approval and clarify cards.
async function answerCard(card, path, body, doneText) {
  lockCard(card, true);
  try {
    await api('POST', path, body);
  } catch (e) {
    lockCard(card, false);
    throw e;
  }
  card.classList.add('answered');
  $('.outcome', card).textContent = doneText;
}
function addCard(id, card) {
  chat.cards.set(id, card);
  appendBlock(card);
}

function approvalCard(e) {
  const path = `/api/chat/${enc(chat.id)}/approval`;
  const choices = [['once', 'Allow once'], ['session', 'Allow for session'], ['always', 'Always allow'], ['deny', 'Deny']];
  const card = el('div', { class: 'approval', 'data-request': e.request_id },
    el('div', { class: 'reason' }, '⚠ Approval needed', e.reason ? `: ${e.reason}` : ''),
    el('pre', null, asText(e.command)),
    el('div', { class: 'row' }, choices.map(([choice, label]) => button(label, {
      'data-choice': choice, class: choice === 'deny' ? 'danger' : null,
      onclick: safe(() => answerCard(card, path, { request_id: e.request_id, choice }, `Chosen: ${label}`)),
    }))),
    el('div', { class: 'outcome', 'aria-live': 'polite' }));
  addCard(e.request_id, card);
}

function clarifyCard(e) {
  const path = `/api/chat/${enc(chat.id)}/clarify`;
  const input = el('input', { type: 'text', placeholder: 'Your answer', 'aria-label': 'Your answer' });
  const answer = a => a && safe(answerCard)(card, path, { request_id: e.request_id, answer: a }, `Answered: ${a}`);
  input.addEventListener('keydown', ev => {
    if (ev.key === 'Enter') { ev.preventDefault(); answer(input.value.trim()); }
  });
  const choices = (e.choices || []).map(c => button(asText(c), { 'data-answer': asText(c), onclick: () => answer(asText(c)) }));
  const card = el('div', { class: 'clarify', 'data-request': e.request_id },
    el('div', { class: 'question' }, e.question ?? ''),
    choices.length ? el('div', { class: 'row' }, choices) : null,
    el('div', { class: 'row' }, input, button('Answer', { class: 'send', onclick: () => answer(input.value.trim()) })),
    el('div', { class: 'outcome', 'aria-live': 'polite' }));
  addCard(e.request_id, card);
}

// The agent stopped waiting (timeout, interrupt, answered elsewhere).
function closeCard(id) {
  const card = chat.cards.get(id);
  if (!card || card.classList.contains('answered')) return;
  lockCard(card, true);
  card.classList.add('closed');
  $('.outcome', card).textContent = 'No longer waiting for an answer.';
}

function turnComplete(e) {
  if (!chat.bubble?.gotText && e.final_text) appendText(e.final_text);
  const u = e.usage || {};
  const bits = [];
  if (isNum(u.input_tokens) || isNum(u.output_tokens)) {
    bits.push(`${num(u.input_tokens ?? 0)} in · ${num(u.output_tokens ?? 0)} out tokens`);
  }
  if (e.reason && !NORMAL_END.has(e.reason)) bits.push(asText(e.reason));
  if (bits.length) bubble().el.append(el('div', { class: 'foot' }, bits.join(' · ')));
  chat.bubble = null;
  setRunning(false);
}

function setSession(id, fromEvent) {
  chat.session = id || null;
  chat.ui.session.textContent = id || '—';
  // replaceState does not fire hashchange, so the page is not re-rendered.
  if (fromEvent && id && currentPage === 'chat') {
    history.replaceState(null, '', `#/chat/${enc(id)}`);
  }
}
function setModel(model, provider) {
  chat.ui.model.textContent = model || '—';
  chat.ui.provider.textContent = provider ? `(${provider})` : '';
}
function setRunning(on) {
  chat.running = on;
  if (!chat.ui) return;
  chat.ui.send.disabled = on;
  chat.ui.root.classList.toggle('running', on);
}
function resetLog() {
  chat.ui.log.replaceChildren();
  chat.bubble = null;
  chat.calls.clear();
  chat.cards.clear();
}
function nearBottom() {
  const l = chat.ui.log;
  return l.scrollHeight - l.scrollTop - l.clientHeight < 60;
}
function scrollLog() { chat.ui.log.scrollTop = chat.ui.log.scrollHeight; }

async function send() {
  const u = chat.ui, text = u.input.value;
  if (!text.trim() || chat.running) return;
  if (text.trim() === '/new') { u.input.value = ''; return newChat(); }
  await ensureChat();
  if (!chat.id) return;
  chat.bubble = null;
  u.log.append(el('div', { class: 'msg user' }, text));
  u.input.value = '';
  scrollLog();
  setRunning(true);
  chat.turn++;
  try {
    await api('POST', `/api/chat/${enc(chat.id)}/send`, { text });
  } catch (e) {
    setRunning(false);
    u.input.value ||= text; // give the text back so it isn't lost
    throw e;
  }
}

async function interrupt() {
  if (!chat.id) return;
  const turn = chat.turn;
  await api('POST', `/api/chat/${enc(chat.id)}/interrupt`, {});
  // turn_complete normally follows; don't leave Send disabled if it never does.
  setTimeout(() => { if (chat.turn === turn && chat.running) setRunning(false); }, 5000);
}

async function newChat() {
  if (!chat.id) return startChat(null); // e.g. the first POST /api/chat failed
  await api('POST', `/api/chat/${enc(chat.id)}/new`, {});
  resetLog();
  setRunning(false);
}

async function switchModel() {
  const m = chat.ui.modelIn.value.trim();
  if (!m || !chat.id) return;
  const r = await api('POST', `/api/chat/${enc(chat.id)}/model`, { model: m });
  chat.ui.modelIn.value = '';
  if (r.model) setModel(r.model, r.provider);
}

// ---------- sessions ----------

function sessionRow(s) {
  const label = s.title || s.preview || s.id;
  return tr(null,
    td(el('a', { class: s.title ? 'open' : 'open preview', href: `#/sessions/${enc(s.id)}`, title: label }, label)),
    s.source, s.model, td(num(s.message_count), 'num'),
    timeEl(s.last_active ?? s.started_at), td(money(s.cost_usd), 'num'));
}

async function pageSessions(id) {
  if (id) return pageSession(id);
  const search = el('input', {
    id: 'sessions-search', type: 'search', placeholder: 'Search all messages', 'aria-label': 'Search all messages',
  });
  const results = el('ul', { id: 'search-results', class: 'results', hidden: true });
  const t = table('sessions-table', ['Title', 'Source', 'Model', 'Messages', 'Last active', 'Cost']);
  const more = button('More', { id: 'sessions-more', hidden: true });
  const list = el('div', null, t, more);
  view.append(el('div', { class: 'toolbar' }, el('h2', null, 'Sessions'), search), results, list);

  const showList = () => { results.hidden = true; list.hidden = false; };
  search.addEventListener('keydown', e => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    const q = search.value.trim();
    if (!q) return showList();
    list.hidden = true;
    safe(runSearch)(q, results);
  });
  search.addEventListener('input', () => { if (!search.value.trim()) showList(); });

  // Pages of 50 keep the first paint fast even with tens of thousands of sessions.
  let offset = 0;
  const load = async () => {
    more.disabled = true;
    try {
      const r = await api('GET', `/api/sessions?limit=50&offset=${offset}`);
      const rows = (r.sessions || []).map(sessionRow);
      if (offset === 0) fillTable(t, rows, 'No sessions yet.');
      else t.tBodies[0].append(...rows);
      offset += rows.length;
      more.hidden = !r.has_more || !rows.length;
    } finally { more.disabled = false; }
  };
  more.addEventListener('click', safe(load));
  await load();
}

async function runSearch(q, ul) {
  ul.hidden = false;
  ul.replaceChildren(el('li', { class: 'muted' }, 'Searching…'));
  const r = await api('GET', `/api/sessions/search?q=${enc(q)}`);
  const items = (r.results || []).map(x => el('li', null,
    el('a', { href: `#/sessions/${enc(x.session_id)}` }, x.title || x.session_id),
    el('span', { class: 'muted' }, ' ', [x.source, x.model].filter(Boolean).join(' · '), ' · ', timeEl(x.when)),
    el('div', { class: 'snippet' }, (x.parts || []).map(p => (p.hit ? el('mark', null, p.text) : asText(p.text))))));
  ul.replaceChildren(...(items.length ? items : [el('li', { class: 'muted' }, `No messages match “${q}”.`)]));
}

function msgNode(m) {
  const content = contentText(m.content);
  if (m.role === 'tool') {
    return el('details', { class: 'tool-result' },
      el('summary', null, `result of ${m.tool_name || m.tool_call_id || 'tool'}`), el('pre', null, content));
  }
  const role = ['user', 'assistant', 'system'].includes(m.role) ? m.role : 'system';
  return el('div', { class: `msg ${role}` },
    content ? el('div', { class: 'text' }, content) : null,
    (m.tool_calls || []).map(c => el('details', { class: 'tool' },
      el('summary', null, `⚙ ${c.name || 'tool'}`), el('pre', null, pretty(c.arguments)))),
    m.timestamp ? el('div', { class: 'foot' }, timeEl(m.timestamp)) : null);
}

async function pageSession(id) {
  const box = el('div', { class: 'muted' }, 'Loading…');
  view.append(el('p', null, el('a', { href: '#/sessions' }, '← All sessions')), box);
  let r;
  try { r = await api('GET', `/api/sessions/${enc(id)}`); } catch (e) {
    box.textContent = 'This session could not be loaded.';
    throw e;
  }
  const s = r.session || {};
  const title = el('h2', null, s.title || '(untitled)');
  const rename = el('input', { id: 'rename-input', value: s.title || '', placeholder: 'Title', 'aria-label': 'Session title' });
  const confirmDel = button('Really delete', { id: 'delete-confirm', class: 'danger', hidden: true });
  const exp = fmt => el('a', {
    id: `export-${fmt}`, class: 'button', href: `/api/sessions/${enc(id)}/export?format=${fmt}`, download: `${id}.${fmt}`,
  }, `Export ${fmt === 'md' ? 'Markdown' : 'JSONL'}`);
  const doRename = safe(async () => {
    const t = rename.value.trim();
    await api('PATCH', `/api/sessions/${enc(id)}`, { title: t });
    title.textContent = t || '(untitled)';
    flash('Renamed.', 'ok');
  });
  rename.addEventListener('keydown', e => { if (e.key === 'Enter') doRename(); });
  confirmDel.addEventListener('click', safe(async () => {
    await api('DELETE', `/api/sessions/${enc(id)}`);
    location.hash = '#/sessions';
  }));
  box.replaceWith(
    title,
    el('p', { class: 'meta' }, [
      s.source, s.model, s.started_at && ['started ', timeEl(s.started_at)],
      `${num(s.message_count ?? r.messages?.length)} messages`,
      `${num(s.input_tokens ?? 0)} in / ${num(s.output_tokens ?? 0)} out tokens`, money(s.cost_usd),
    ].filter(Boolean).flatMap((x, i) => (i ? [' · ', x] : [x]))),
    el('div', { class: 'row' }, rename, button('Rename', { id: 'rename-save', onclick: doRename }),
      exp('md'), exp('jsonl'),
      button('Continue in chat', { id: 'continue-session', class: 'primary', onclick: () => { location.hash = `#/chat/${enc(id)}`; } }),
      button('Delete', { id: 'delete-session', class: 'danger', onclick: () => { confirmDel.hidden = false; confirmDel.focus(); } }),
      confirmDel),
    el('div', { id: 'transcript' }, (r.messages || []).map(msgNode)));
}

// ---------- usage ----------

let usageDays = 30;

async function pageUsage() {
  const range = el('select', { id: 'usage-range', 'aria-label': 'Period' },
    [7, 30, 90].map(d => el('option', { value: d, selected: d === usageDays }, `Last ${d} days`)));
  const body = el('div', null, el('p', { class: 'muted' }, 'Loading…'));
  view.append(el('div', { class: 'toolbar' }, el('h2', null, 'Usage'), range), body);
  const load = async () => body.replaceChildren(...usageContent(await api('GET', `/api/usage?days=${usageDays}`)));
  range.addEventListener('change', safe(() => { usageDays = Number(range.value); return load(); }));
  await load();
}

function usageContent(r) {
  const days = r.days || [], sum = k => days.reduce((a, d) => a + (d[k] || 0), 0);
  const sessLink = s => el('a', { href: `#/sessions/${enc(s.id)}` }, s.title || s.id);
  const models = table('usage-models', ['Model', 'Sessions', 'Input tokens', 'Output tokens', 'Cost']);
  fillTable(models, (r.models || []).map(m => tr(null, m.model || '—', td(num(m.sessions), 'num'),
    td(num(m.input_tokens), 'num'), td(num(m.output_tokens), 'num'), td(money(m.cost_usd), 'num'))), 'No usage yet.');
  const busiest = table('usage-busiest', ['Session', 'Input tokens', 'Output tokens', 'Cost']);
  fillTable(busiest, (r.busiest || []).map(s => tr(null, td(sessLink(s)),
    td(num(s.input_tokens), 'num'), td(num(s.output_tokens), 'num'), td(money(s.cost_usd), 'num'))), 'No sessions yet.');
  return [
    el('p', { class: 'summary' }, `${num(sum('input_tokens'))} input + ${num(sum('output_tokens'))} output tokens · `,
      `${money(sum('cost_usd'))} · ${num(sum('sessions'))} sessions`),
    el('h3', null, 'Tokens per day'),
    barChart('usage-chart', days, d => [d.input_tokens || 0, d.output_tokens || 0], ['in', 'out'],
      d => `${d.day}: ${num(d.input_tokens ?? 0)} input, ${num(d.output_tokens ?? 0)} output tokens`, n => compactNf.format(n)),
    el('p', { class: 'legend' }, el('span', { class: 'key in' }), 'input ', el('span', { class: 'key out' }), 'output'),
    el('h3', null, 'Cost per day'),
    barChart('usage-cost', days, d => [d.cost_usd || 0], ['cost'],
      d => `${d.day}: ${money(d.cost_usd ?? 0)} · ${num(d.sessions ?? 0)} sessions`, money, 90),
    el('h3', null, 'By model'), models,
    el('h3', null, 'Busiest sessions'), busiest,
  ];
}

// Stacked bar chart in a scalable viewBox; each day is a <g> whose <title>
// is the tooltip, with a transparent full-height rect so tiny bars still hover.
function barChart(id, days, valuesOf, classes, tip, fmtAxis, H = 160) {
  const W = 900, left = 56, bottom = 18, padT = 6, plotH = H - bottom - padT;
  const peak = Math.max(0, ...days.map(d => valuesOf(d).reduce((a, b) => a + b, 0)));
  const max = peak || 1; // all-zero days still draw (flat) without dividing by zero
  const slot = (W - left) / Math.max(days.length, 1), bw = Math.max(1, slot * 0.8);
  const r1 = n => Math.round(n * 10) / 10;
  const s = svg('svg', { id, class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': id.replace('-', ' ') },
    svg('line', { class: 'axis', x1: left, y1: H - bottom, x2: W, y2: H - bottom }),
    peak ? svg('text', { x: left - 4, y: padT + 9, 'text-anchor': 'end' }, fmtAxis(peak)) : null,
    svg('text', { x: left - 4, y: H - bottom, 'text-anchor': 'end' }, '0'));
  if (!days.length) s.append(svg('text', { x: (W + left) / 2, y: H / 2, 'text-anchor': 'middle' }, 'No data for this period'));
  days.forEach((d, i) => {
    const x = r1(left + i * slot + (slot - bw) / 2);
    const g = svg('g', null, svg('title', null, tip(d)),
      svg('rect', { class: 'hit', x, y: padT, width: r1(bw), height: plotH }));
    let y = H - bottom;
    valuesOf(d).forEach((v, k) => {
      const h = (v / max) * plotH;
      y -= h;
      if (h > 0) g.append(svg('rect', { class: classes[k], x, y: r1(y), width: r1(bw), height: r1(h) }));
    });
    s.append(g);
  });
  if (days.length) {
    s.append(svg('text', { x: left, y: H - 3 }, days[0].day),
      svg('text', { x: W, y: H - 3, 'text-anchor': 'end' }, days[days.length - 1].day));
  }
  return s;
}

// ---------- cron ----------

async function pageCron() {
  const f = {
    schedule: el('input', { id: 'cron-schedule', placeholder: 'every 1h / 0 9 * * * / 30m', 'aria-label': 'Schedule', required: true }),
    prompt: el('textarea', { id: 'cron-prompt', rows: '3', placeholder: 'Prompt', 'aria-label': 'Prompt', required: true }),
    name: el('input', { id: 'cron-name', placeholder: 'Name (optional)', 'aria-label': 'Name' }),
    add: el('button', { id: 'cron-add', type: 'submit', class: 'primary' }, 'Add job'),
    cancel: button('Cancel', { hidden: true }),
  };
  const form = el('form', { id: 'cron-form', class: 'card' }, f.schedule, f.name, f.prompt, el('div', { class: 'row' }, f.add, f.cancel));
  const msg = el('div', { id: 'cron-message', class: 'message', 'aria-live': 'polite' });
  const t = table('cron-table', ['Name', 'Schedule', 'Next run', 'Last status', 'State', '']);
  const runsTitle = el('h3');
  const runs = el('ul', { id: 'cron-runs', class: 'runs' });
  const out = el('pre', { id: 'cron-output', hidden: true });
  const runsBox = el('section', { hidden: true }, runsTitle, runs, out);
  view.append(el('h2', null, 'Scheduled jobs'), form, msg, t, runsBox);

  let jobs = new Map(), editing = null;
  const setEdit = j => {
    editing = j?.id ?? null;
    f.schedule.value = j ? asText(j.schedule) : '';
    f.prompt.value = j?.prompt ?? '';
    f.name.value = j?.name ?? '';
    f.add.textContent = j ? 'Save' : 'Add job';
    f.cancel.hidden = !j;
  };
  const load = async () => {
    const r = await api('GET', '/api/cron');
    jobs = new Map((r.jobs || []).map(j => [String(j.id), j]));
    fillTable(t, [...jobs.values()].map(cronRow), 'No jobs yet.');
  };
  const showRuns = async j => {
    runsBox.hidden = false;
    out.hidden = true;
    runsTitle.textContent = `Runs of ${j.name || j.id}`;
    const r = await api('GET', `/api/cron/${enc(j.id)}/runs`);
    runs.replaceChildren(...(r.runs || []).map(x => el('li', null,
      button(asText(x.run), { 'data-run': asText(x.run), onclick: safe(async () => {
        out.hidden = false;
        out.textContent = 'Loading…';
        out.textContent = (await api('GET', `/api/cron/${enc(j.id)}/runs/${enc(x.run)}`)).text ?? '';
      }) }),
      ' ', el('span', { class: x.ok ? 'badge ok' : 'badge err' }, x.ok ? 'ok' : 'failed'))));
    if (!runs.children.length) runs.append(el('li', { class: 'muted' }, 'No runs yet.'));
  };
  const actions = {
    run: async (j, b) => {
      b.disabled = true;
      b.textContent = 'Running…';
      msg.textContent = `Running ${j.name || j.id}…`;
      try {
        const r = await api('POST', `/api/cron/${enc(j.id)}/run`);
        msg.textContent = r.ok ? `✓ ${j.name || j.id} ran${r.output_name ? ` — output ${r.output_name}` : ''}`
          : `✗ ${j.name || j.id} failed: ${r.error || 'unknown error'}`;
        msg.className = `message ${r.ok ? 'ok' : 'err'}`;
      } catch (e) { msg.textContent = ''; throw e; } finally { await load(); }
    },
    pause: j => api('POST', `/api/cron/${enc(j.id)}/pause`).then(load),
    resume: j => api('POST', `/api/cron/${enc(j.id)}/resume`).then(load),
    edit: j => { setEdit(j); f.schedule.focus(); form.scrollIntoView({ block: 'nearest' }); },
    runs: showRuns,
    delete: async j => {
      if (!confirm(`Delete the job “${j.name || j.id}”?`)) return;
      await api('DELETE', `/api/cron/${enc(j.id)}`);
      if (editing === j.id) setEdit(null);
      runsBox.hidden = true;
      await load();
    },
  };
  t.tBodies[0].addEventListener('click', safe(async e => {
    const b = e.target.closest('button[data-action]'), row = b?.closest('tr[data-job]');
    const j = row && jobs.get(row.dataset.job);
    if (j) await actions[b.dataset.action]?.(j, b);
  }));
  f.cancel.addEventListener('click', () => setEdit(null));
  form.addEventListener('submit', safe(async e => {
    e.preventDefault();
    const body = { schedule: f.schedule.value.trim(), prompt: f.prompt.value.trim() };
    const name = f.name.value.trim();
    if (name || editing) body.name = name;
    if (editing) await api('PATCH', `/api/cron/${enc(editing)}`, body);
    else await api('POST', '/api/cron', body);
    msg.className = 'message ok';
    msg.textContent = editing ? 'Job saved.' : 'Job added.';
    setEdit(null);
    await load();
  }));
  await load();
}

function cronRow(j) {
  const paused = j.enabled === false || j.state === 'paused';
  const ok = ['ok', 'success', 'succeeded'].includes(String(j.last_status).toLowerCase());
  const act = (action, label, cls) => button(label, { 'data-action': action, class: cls });
  return tr({ 'data-job': j.id }, j.name || j.id, el('code', null, asText(j.schedule)),
    paused ? '—' : timeEl(j.next_run_at),
    j.last_status ? [el('span', { class: ok ? 'badge ok' : 'badge err', title: j.last_error || null }, asText(j.last_status)),
      ' ', timeEl(j.last_run_at)] : 'never run',
    j.state || (paused ? 'paused' : 'scheduled'),
    td([act('run', 'Run'), paused ? act('resume', 'Resume') : act('pause', 'Pause'),
      act('edit', 'Edit'), act('runs', 'Runs'), act('delete', 'Delete', 'danger')], 'actions'));
}

// ---------- gateway ----------

// A platform with what the running gateway last said of it (gateway_state.json).
function platformLine(p) {
  const state = p.state || (p.configured ? 'configured' : 'not configured');
  const badge = state === 'connected' ? 'badge ok' : state === 'retrying' ? 'badge err' : 'badge';
  const when = t => (t ? rel(Date.parse(t) / 1000) : null);
  return el('li', { 'data-platform': p.name }, p.name, ' ', el('span', { class: badge }, state),
    p.error ? el('span', { class: 'error' }, ` ${p.error}`) : null,
    p.updated_at ? el('span', { class: 'muted' }, ` · since ${when(p.updated_at)}`) : null,
    p.last_message_at ? el('span', { class: 'muted' }, ` · last message ${when(p.last_message_at)}`) : null,
    allowedNote(p.allowed));
}

// Who may talk to a platform without pairing.
function allowedNote(a) {
  if (!a) return null;
  if (a.everyone) return el('span', { class: 'muted' }, ' · open to everyone');
  const users = a.users || [];
  return el('span', { class: 'muted' }, users.length ? ` · allowed: ${users.join(', ')}` : ' · strangers pair first');
}

async function pageGateway() {
  const body = el('div', null, el('p', { class: 'muted' }, 'Loading…'));
  view.append(el('h2', null, 'Messaging gateway'), body);
  const load = async () => {
    const r = await api('GET', '/api/gateway');
    const user = p => (p.user_name ? `${p.user_name} (${p.user_id})` : asText(p.user_id));
    // Only a hash of each code is kept: the owner types the code the user
    // was sent in their chat.
    const pending = table('pairing-pending', ['Platform', 'User', 'Asked', 'Code they were sent', '']);
    fillTable(pending, (r.pairing?.pending || []).map(p => {
      const code = el('input', { class: 'pairing-code', placeholder: 'code', 'aria-label': `Pairing code of ${user(p)}`, autocomplete: 'off' });
      return tr(null, p.platform, user(p),
        isNum(p.age_secs) ? rel(Date.now() / 1000 - p.age_secs) : '—', td(code),
        td(button('Approve', { 'data-action': 'approve', class: 'primary',
          onclick: safe(() => api('POST', '/api/gateway/pairing/approve', { platform: p.platform, code: code.value.trim() }).then(load)) })));
    }), 'No pairing requests.');
    const approved = table('pairing-approved', ['Platform', 'User', '']);
    fillTable(approved, (r.pairing?.approved || []).map(p => tr(null, p.platform, user(p),
      td(button('Revoke', { 'data-action': 'revoke', class: 'danger',
        onclick: safe(() => api('POST', '/api/gateway/pairing/revoke', { platform: p.platform, user_id: p.user_id }).then(load)) })))),
    'Nobody is paired yet.');
    const api_ = r.api_server || {};
    setKids(body,
      el('p', { id: 'gateway-status', class: r.running ? 'ok' : 'muted' }, r.running
        ? `● Running${r.pid ? ` (pid ${r.pid})` : ''}`
        : ['○ Not running — start it with ', el('code', null, 'hermes gateway run')]),
      el('h3', null, 'Platforms'),
      el('ul', { class: 'platforms' }, (r.platforms || []).map(platformLine),
      r.platforms?.length ? null : el('li', { class: 'muted' }, 'No platforms known.')),
      el('p', null, 'API server: ', api_.enabled ? ['enabled at ', el('code', null, asText(api_.address))] : 'disabled'),
      el('h3', null, 'Pairing requests'), pending,
      el('h3', null, 'Approved users'), approved);
  };
  await load();
}

// ---------- config ----------

async function pageConfig() {
  const filter = el('input', { id: 'config-filter', type: 'search', placeholder: 'Filter settings', 'aria-label': 'Filter settings' });
  const ct = table('config-table', ['Key', 'Value', 'Source']);
  const key = el('input', { id: 'config-key', placeholder: 'key, e.g. model.default', 'aria-label': 'Setting key' });
  const value = el('input', { id: 'config-value', placeholder: 'value', 'aria-label': 'Setting value' });
  const msg = el('div', { id: 'config-message', class: 'message', 'aria-live': 'polite' });
  const et = table('env-table', ['Variable', 'Value']);
  const envName = el('input', { id: 'env-name', placeholder: 'NAME', 'aria-label': 'Variable name' });
  const envValue = el('input', { id: 'env-value', type: 'password', autocomplete: 'off', placeholder: 'value', 'aria-label': 'Variable value' });
  const envMsg = el('div', { id: 'env-message', class: 'message', 'aria-live': 'polite' });
  let entries = new Map();

  // The four buttons share one flow: need a name, call, report (with the
  // server's warnings), reload the tables.
  const change = (input, box, call) => safe(async () => {
    const k = input.value.trim();
    if (!k) return input.focus();
    const [r, text] = await call(k);
    setKids(box, el('span', null, text, r.file ? ` (${r.file})` : '', '.'),
      (r.warnings || []).map(w => el('div', { class: 'flash warn' }, w)));
    await load();
  });
  // The value goes as the raw text typed: the server knows each key's type.
  const setConfig = change(key, msg, async k => [await api('POST', '/api/config', { key: k, value: value.value }), `Set ${k}`]);
  const unsetConfig = change(key, msg, async k => [await api('DELETE', `/api/config/${enc(k)}`), `Removed ${k}; it is back to its default`]);
  const setEnv = change(envName, envMsg, async n => {
    const r = await api('POST', '/api/env', { name: n, value: envValue.value });
    envValue.value = ''; // don't leave the secret sitting in the page
    return [r, `Set ${n}`];
  });
  const unsetEnv = change(envName, envMsg, async n => [await api('DELETE', `/api/env/${enc(n)}`), `Removed ${n}`]);

  view.append(
    el('div', { class: 'toolbar' }, el('h2', null, 'Configuration'), filter),
    // Forms so that Enter in a field means Set (and the password field sits in a form).
    el('form', { class: 'row card', onsubmit: e => { e.preventDefault(); setConfig(); } }, key, value,
      button('Set', { id: 'config-set', class: 'primary', type: 'submit' }),
      button('Unset', { id: 'config-unset', onclick: unsetConfig })),
    msg, ct,
    el('h2', null, 'Environment (.env)'),
    el('p', { class: 'muted' }, 'Secret values are never shown here, only whether they are set.'),
    el('form', { class: 'row card', onsubmit: e => { e.preventDefault(); setEnv(); } }, envName, envValue,
      button('Set', { id: 'env-set', class: 'primary', type: 'submit' }),
      button('Unset', { id: 'env-unset', onclick: unsetEnv })),
    envMsg, et);

  const applyFilter = () => {
    const q = filter.value.trim().toLowerCase();
    for (const row of ct.tBodies[0].rows) row.hidden = !!q && !row.textContent.toLowerCase().includes(q);
  };
  filter.addEventListener('input', applyFilter);
  // Rows are clickable (and keyboard-selectable) to fill the edit form.
  const pick = (t, fn) => {
    const go = e => { const row = e.target.closest('tr[tabindex]'); if (row) fn(row); };
    t.tBodies[0].addEventListener('click', go);
    t.tBodies[0].addEventListener('keydown', e => { if (e.key === 'Enter') go(e); });
  };
  pick(ct, row => {
    key.value = row.dataset.key;
    value.value = valueText(entries.get(row.dataset.key));
    value.focus();
  });
  pick(et, row => { envName.value = row.dataset.name; envValue.focus(); });

  async function load() {
    const r = await api('GET', '/api/config');
    entries = new Map((r.entries || []).map(e => [e.key, e.value]));
    const srcClass = { 'config.yaml': 'file', environment: 'env' };
    fillTable(ct, (r.entries || []).map(e => tr({ 'data-key': e.key, tabindex: '0' },
      el('code', null, e.key), td(valueText(e.value), 'value'),
      el('span', { class: `src ${srcClass[e.source] || 'default'}` }, e.source))), 'No settings.');
    applyFilter();
    fillTable(et, (r.env || []).map(v => tr({ 'data-name': v.name, tabindex: '0' }, el('code', null, v.name),
      v.set ? el('code', null, v.masked || '••••') : el('span', { class: 'muted' }, 'not set'))), 'No variables.');
  }
  await load();
}
const valueText = v => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));

// ---------- skills ----------

async function pageSkills() {
  const list = el('ul', { id: 'skills-list', class: 'skills' }, el('li', { class: 'muted' }, 'Loading…'));
  const pre = el('pre', { id: 'skill-view', class: 'muted' }, 'Pick a skill to read it.');
  view.append(el('h2', null, 'Skills'), el('div', { class: 'split' }, list, pre));
  const r = await api('GET', '/api/skills');
  const groups = new Map();
  for (const s of r.skills || []) {
    const c = s.category || 'other';
    if (!groups.has(c)) groups.set(c, []);
    groups.get(c).push(s);
  }
  const open = safe(async (s, b) => {
    for (const x of list.querySelectorAll('button.active')) x.classList.remove('active');
    b.classList.add('active');
    pre.classList.remove('muted');
    pre.textContent = 'Loading…';
    pre.textContent = (await api('GET', `/api/skills/${enc(s.name)}`)).content ?? '';
  });
  list.replaceChildren(...[...groups.keys()].sort().map(c => el('li', { class: 'category' }, el('h3', null, c),
    el('ul', null, groups.get(c).sort((a, b) => a.name.localeCompare(b.name)).map(s => {
      const b = button(s.name, { class: 'link', 'data-skill': s.name, title: s.description || null, onclick: () => open(s, b) });
      return el('li', null, b, s.description ? el('div', { class: 'muted small' }, s.description) : null);
    })))));
  if (!groups.size) list.append(el('li', { class: 'muted' }, 'No skills installed.'));
}

// ---------- MCP ----------

async function pageMcp() {
  const t = table('mcp-table', ['Server', 'Transport', 'Status', 'Tools', 'Error']);
  view.append(el('h2', null, 'MCP servers'), t);
  const r = await api('GET', '/api/mcp');
  const cls = { connected: 'badge ok', failed: 'badge err' };
  fillTable(t, (r.servers || []).flatMap(s => {
    const tools = s.tools || [];
    // The tool list sits in a hidden row right below its server.
    const detail = el('tr', { class: 'tools', hidden: true }, el('td', { colspan: 5 },
      el('ul', null, tools.map(x => el('li', null, el('code', null, x.name), x.description ? ` — ${x.description}` : '')))));
    const toggle = button(`${tools.length} tool${tools.length === 1 ? '' : 's'} ▸`, {
      'aria-expanded': 'false', disabled: !tools.length,
      onclick: () => {
        detail.hidden = !detail.hidden;
        toggle.setAttribute('aria-expanded', String(!detail.hidden));
        toggle.textContent = toggle.textContent.slice(0, -1) + (detail.hidden ? '▸' : '▾');
      },
    });
    return [tr({ 'data-server': s.name }, el('strong', null, s.name), s.transport,
      el('span', { class: cls[s.status] || 'badge' }, s.status || (s.enabled ? 'unknown' : 'disabled')),
      td(toggle), td(s.error || '', 'error-text')), detail];
  }), 'No MCP servers configured.');
}

// ---------- logs ----------

const logPrefs = { file: 'agent', level: 'all' };

async function pageLogs() {
  const select = (id, label, opts, cur) => el('select', { id, 'aria-label': label },
    opts.map(o => el('option', { value: o, selected: o === cur }, o)));
  const file = select('logs-file', 'Log file', ['agent', 'errors', 'gateway'], logPrefs.file);
  const level = select('logs-level', 'Minimum level', ['all', 'INFO', 'WARNING', 'ERROR'], logPrefs.level);
  const pre = el('pre', { id: 'logs-view', class: 'logs', tabindex: '0', 'aria-label': 'Log lines' });
  view.append(el('div', { class: 'toolbar' }, el('h2', null, 'Logs'), file, level), pre);

  let busy = false, last = null;
  const load = async () => {
    if (busy) return; // a slow response must not pile up requests
    busy = true;
    try {
      const lv = level.value === 'all' ? '' : `&level=${enc(level.value)}`;
      const r = await api('GET', `/api/logs/${enc(file.value)}?lines=200${lv}`);
      const lines = r.lines || [], key = lines.join('\n');
      if (key === last) return; // unchanged: keep the user's text selection
      last = key;
      const stick = pre.scrollHeight - pre.scrollTop - pre.clientHeight < 40;
      pre.replaceChildren(...lines.map(l => el('span', { class: lineClass(l) }, l, '\n')));
      if (!lines.length) pre.append(el('span', { class: 'muted' }, '(no lines)'));
      if (stick) pre.scrollTop = pre.scrollHeight;
    } finally { busy = false; }
  };
  const reload = () => {
    logPrefs.file = file.value;
    logPrefs.level = level.value;
    last = null;
    pre.replaceChildren();
    safe(load)();
  };
  file.addEventListener('change', reload);
  level.addEventListener('change', reload);
  const timer = setInterval(() => { if (!document.hidden) load().catch(() => {}); }, 2000);
  cleanups.push(() => clearInterval(timer));
  await load();
}
const lineClass = l => (/\b(ERROR|CRITICAL|FATAL)\b/.test(l) ? 'err' : /\bWARN(ING)?\b/.test(l) ? 'warn' : null);

// ---------- header overview ----------

async function loadOverview() {
  const box = $('#overview');
  try {
    const o = await api('GET', '/api/overview', undefined, { quiet: true });
    setKids(box,
      el('span', null, o.model || 'no model', o.provider ? ` (${o.provider})` : ''), ' · ',
      el('span', { class: o.gateway_running ? 'ok' : 'muted' }, o.gateway_running ? 'gateway running' : 'gateway stopped'),
      o.home ? [' · ', el('span', { class: 'muted', title: o.store ? `store: ${asText(o.store)}` : null }, o.home)] : null);
  } catch {
    box.textContent = 'server unreachable';
  }
}

// ---------- start ----------

const pages = {
  chat: pageChat, sessions: pageSessions, usage: pageUsage, cron: pageCron, gateway: pageGateway,
  config: pageConfig, skills: pageSkills, mcp: pageMcp, logs: pageLogs,
};
window.addEventListener('hashchange', route);
route();
loadOverview();
setInterval(loadOverview, 30000);
