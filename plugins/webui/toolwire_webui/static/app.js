// The toolwire web chat. Every text from a model, a tool or the server is inserted as a text
// node (textContent, createTextNode); no HTML from outside is ever parsed. Markdown arrives as a
// tree the server made, and is built here from an allowlist of elements.
"use strict";

const CSRF = document.querySelector('meta[name="csrf-token"]').content;
const STATE_RANK = { streaming: 0, ready: 1, awaiting: 2, granted: 3, running: 3 };
const PREVIEW_TAIL = 240;
const VALUE_PREVIEW = 60;
const LABELS = {
  ok: "done", error: "failed", blocked: "blocked", denied: "denied", not_run: "not run",
  provider: "run by the provider", cancelled: "cancelled",
};
const BLOCK_TAGS = new Set([
  "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "hr",
  "table", "thead", "tbody", "tr", "th", "td", "strong", "em", "del", "code", "br", "a", "cite",
]);

const $ = (id) => document.getElementById(id);
const transcript = $("transcript");
const statusLine = $("status");
const statusText = $("status-text");
const prompt = $("prompt");
const sendButton = $("send");
const stopButton = $("stop");
const toolChoice = $("tool-choice");
const announcer = $("announcer");

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("data-") || key.startsWith("aria-") || key === "role") node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

async function request(method, path, body) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (method !== "GET") {
    init.headers = { "Content-Type": "application/json", "X-CSRF-Token": CSRF };
    init.body = JSON.stringify(body || {});
  }
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}
const post = (path, body) => request("POST", path, body);
const get = (path) => request("GET", path);

function announce(text) {
  // A fresh text node each time, so the same words are announced again.
  announcer.replaceChildren(document.createTextNode(text));
}

function safeUrl(text) {
  let url = null;
  try { url = new URL(text); } catch { return null; }
  return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.href : null;
}

async function copyText(text, button) {
  let done = false;
  try {
    await navigator.clipboard.writeText(text);
    done = true;
  } catch {
    // Outside a secure context there is no clipboard API: copy through a selection.
    const area = el("textarea", { class: "visually-hidden", value: text, "aria-hidden": "true" });
    document.body.append(area);
    area.select();
    try { done = document.execCommand("copy"); } catch { done = false; }
    area.remove();
  }
  const before = button.dataset.label || button.textContent;
  button.dataset.label = before;
  button.textContent = done ? "Copied" : "Copy failed";
  announce(done ? "Copied" : "Copy failed");
  setTimeout(() => { button.textContent = before; }, 1500);
}

function copyButton(label, text) {
  const button = el("button", { type: "button", class: "copy", text: "Copy", "aria-label": label });
  button.addEventListener("click", () => copyText(typeof text === "function" ? text() : text, button));
  return button;
}

function elapsed(seconds) {
  if (!(seconds >= 0)) return "";
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds - minutes * 60)} s`;
}

// -- theme, drawer, settings --------------------------------------------------------------------

const THEMES = ["auto", "light", "dark"];
const THEME_LABELS = { auto: "follows the system", light: "light", dark: "dark" };

function applyTheme(theme) {
  if (!THEMES.includes(theme)) theme = "auto";
  if (theme === "auto") document.documentElement.removeAttribute("data-theme");
  else document.documentElement.setAttribute("data-theme", theme);
  $("theme").setAttribute("aria-label", `Colour theme: ${THEME_LABELS[theme]}`);
  $("theme").textContent = theme === "dark" ? "☾" : theme === "light" ? "☀" : "◐";
  for (const radio of document.querySelectorAll('input[name="theme"]')) radio.checked = radio.value === theme;
  try { localStorage.setItem("toolwire.theme", theme); } catch { /* storage off */ }
}
function storedTheme() {
  try { return localStorage.getItem("toolwire.theme") || "auto"; } catch { return "auto"; }
}
applyTheme(storedTheme());
$("theme").addEventListener("click", () => {
  applyTheme(THEMES[(THEMES.indexOf(storedTheme()) + 1) % THEMES.length]);
  announce(`Colour theme: ${THEME_LABELS[storedTheme()]}`);
});
for (const radio of document.querySelectorAll('input[name="theme"]')) {
  radio.addEventListener("change", () => applyTheme(radio.value));
}

function setDrawer(open) {
  $("sidebar").classList.toggle("open", open);
  $("scrim").hidden = !open;
  $("open-drawer").setAttribute("aria-expanded", String(open));
  if (open) ($("conversations").querySelector("button") || $("new-conversation")).focus();
}
$("open-drawer").addEventListener("click", () => setDrawer(true));
$("close-drawer").addEventListener("click", () => { setDrawer(false); $("open-drawer").focus(); });
$("scrim").addEventListener("click", () => setDrawer(false));
const narrow = window.matchMedia("(max-width: 760px)");
narrow.addEventListener("change", () => setDrawer(false));

async function showGrants() {
  const list = $("grant-list");
  list.replaceChildren();
  let data;
  try {
    data = await get(current ? `/api/conversations/${encodeURIComponent(current)}/grants` : "/api/grants");
  } catch (exc) {
    list.append(el("li", { text: exc.message }));
    return;
  }
  $("grant-empty").hidden = data.grants.length > 0;
  for (const grant of data.grants) {
    const where = grant.lasting ? "always" : "in this conversation";
    const revoke = el("button", { type: "button", text: "Revoke", "aria-label": `Revoke: ${grant.label}, ${where}` });
    revoke.addEventListener("click", async () => {
      const path = current ? `/api/conversations/${encodeURIComponent(current)}/grants/revoke` : "/api/grants/revoke";
      try {
        await post(path, { scope: grant.scope, value: grant.value, lasting: grant.lasting });
        announce(`Revoked: ${grant.label}`);
      } catch (exc) { announce(exc.message); }
      showGrants();
    });
    list.append(el("li", { "data-scope": grant.scope, "data-value": grant.value, "data-lasting": String(grant.lasting) },
      el("span", {}, `${grant.label} `, el("span", { class: "hint", text: `(${where})` })), revoke));
  }
}
$("open-settings").addEventListener("click", () => { $("settings").showModal(); showGrants(); });
$("close-settings").addEventListener("click", () => $("settings").close());

// -- conversations ------------------------------------------------------------------------------

let current = null;
let source = null;
let running = false;
let clockOffset = 0; // server time minus this page's time, in seconds

async function loadConversations() {
  const data = await get("/api/conversations");
  const list = $("conversations");
  list.replaceChildren();
  for (const item of data.conversations) {
    const button = el("button", { type: "button", class: item.running ? "running" : "", "data-id": item.id, text: item.title, title: item.title });
    if (item.id === current) {
      button.setAttribute("aria-current", "true");
      $("conversation-title").textContent = item.title;
    }
    if (item.running) button.setAttribute("aria-label", `${item.title} (running)`);
    button.addEventListener("click", () => { select(item.id); setDrawer(false); prompt.focus(); });
    list.append(el("li", {}, button));
  }
  return data.conversations;
}

function select(id) {
  current = id;
  history.replaceState(null, "", `#c=${encodeURIComponent(id)}`);
  for (const button of $("conversations").querySelectorAll("button")) {
    const here = button.dataset.id === id;
    if (here) {
      button.setAttribute("aria-current", "true");
      $("conversation-title").textContent = button.textContent;
    } else button.removeAttribute("aria-current");
  }
  if (source) source.close();
  view.reset();
  source = new EventSource(`/api/conversations/${encodeURIComponent(id)}/events`);
  source.onmessage = (message) => {
    let batch;
    try { batch = JSON.parse(message.data); } catch { return; }
    if (!Array.isArray(batch)) return;
    view.replaying = batch.length > 0 && batch[0].kind === "hello";
    for (const item of batch) view.apply(item);
    // After the replayed log, the server says whether a turn runs: a log cut short by a restart
    // must not leave the page waiting for a turn that is gone.
    if (view.replaying) setRunning(Boolean(batch[0].running));
    view.replaying = false;
    view.scrollSoon();
  };
}

async function newConversation() {
  const made = await post("/api/conversations", { title: "New conversation" });
  await loadConversations();
  select(made.id);
  return made.id;
}

function setRunning(value) {
  running = value;
  sendButton.disabled = value;
  stopButton.disabled = !value;
  if (value) view.dropActions();
}

// -- cards --------------------------------------------------------------------------------------

let allOpen = document.querySelector('meta[name="cards-collapsed"]').content !== "true";
try {
  const kept = localStorage.getItem("toolwire.cardsOpen");
  if (kept !== null) allOpen = kept === "true";
} catch { /* storage off */ }

function showCardsSwitch() {
  const button = $("toggle-cards");
  button.setAttribute("aria-pressed", String(allOpen));
  button.textContent = allOpen ? "Collapse all" : "Expand all";
}
showCardsSwitch();

function setAllCards(open) {
  allOpen = open;
  try { localStorage.setItem("toolwire.cardsOpen", String(open)); } catch { /* storage off */ }
  for (const card of view.cards.values()) card.toggle(open);
  showCardsSwitch();
  announce(open ? "Every card expanded" : "Every card collapsed");
}
$("toggle-cards").addEventListener("click", () => setAllCards(!allOpen));

let cardCount = 0;
const dirty = new Set(); // cards whose live parts change before the next frame
let frame = 0;

function redrawSoon(card) {
  dirty.add(card);
  if (!frame) frame = requestAnimationFrame(flush);
}

function flush() {
  frame = 0;
  for (const card of dirty) card.redraw();
  dirty.clear();
  view.scroll();
}

class Card {
  constructor(item) {
    const number = ++cardCount;
    this.key = item.card;
    this.callId = item.call_id;
    this.name = item.name;
    this.title = item.title || item.name;
    this.provider = Boolean(item.provider);
    this.openedAt = typeof item.at === "number" ? item.at : null;
    this.endedAt = null;
    this.chevron = el("span", { class: "chevron", text: "▸", "aria-hidden": "true" });
    this.state = el("span", { class: "card-state", text: this.provider ? "the provider runs it" : "arguments…" });
    this.time = el("span", { class: "card-time", role: "timer", "aria-label": "elapsed time" });
    const bodyId = `card-body-${number}`;
    this.toggleButton = el("button", { type: "button", class: "card-toggle", "aria-expanded": "false", "aria-controls": bodyId }, this.chevron);
    if (item.icon) this.toggleButton.append(el("span", { class: "card-icon", text: item.icon, "aria-hidden": "true" }));
    this.toggleButton.append(el("span", { class: "card-title", text: this.title }));
    this.toggleButton.append(el("span", { class: "card-name mono", text: item.name }));
    this.chips = el("span", { class: "chips" });
    if (this.provider) this.chips.append(el("span", { class: "chip provider", text: "run by the provider" }));
    for (const risk of item.risk || []) {
      this.chips.append(el("span", { class: `chip risk-${String(risk).replace(/[^a-z_]/g, "")}`, text: risk }));
    }
    if (item.approval) this.chips.append(el("span", { class: "chip", text: "asks first" }));
    this.toggleButton.append(this.chips);
    this.toggleButton.addEventListener("click", () => this.toggle());
    const head = el("div", { class: "card-head" }, this.toggleButton, this.state, this.time);

    // The live line of a collapsed card: the key being written and the tail of its value.
    this.preview = el("div", { class: "card-preview mono" });
    this.previewKey = el("span", { class: "preview-key" });
    this.previewText = el("span", { class: "preview-text" });
    this.preview.append(this.previewKey, this.previewText);
    this.tail = "";
    this.currentKey = null;

    this.progress = el("div", { class: "progress", hidden: true, role: "status", "aria-live": "polite", "aria-atomic": "true" });
    this.progressBar = el("progress", { max: 1, "aria-label": `${this.title}: progress` });
    this.percent = el("span", { class: "percent" });
    this.progressText = el("span", { class: "message" });
    this.progress.append(this.progressBar, this.percent, this.progressText);

    this.args = el("div", { class: "args mono" });
    this.values = new Map();
    this.arguments = null;
    this.argsJson = el("pre", { class: "json", hidden: true });
    const jsonToggle = el("button", { type: "button", class: "link-button toggle-json", text: "JSON", "aria-pressed": "false" });
    jsonToggle.addEventListener("click", () => {
      this.argsJson.hidden = !this.argsJson.hidden;
      this.args.hidden = !this.argsJson.hidden;
      jsonToggle.setAttribute("aria-pressed", String(!this.argsJson.hidden));
    });
    const copyArgs = copyButton(`Copy the arguments of ${this.title}`, () => this.argumentsText());
    this.result = el("div", { class: "result-box", hidden: true });
    this.notes = el("div", { class: "card-notes" });
    this.approval = el("div", { class: "approval", hidden: true });
    this.body = el(
      "div",
      { class: "card-body", id: bodyId },
      el("h4", {}, "Arguments", jsonToggle, copyArgs),
      this.args,
      this.argsJson,
      this.result,
      this.notes,
      this.approval,
    );
    this.node = el("article", { class: "card", "data-card": item.card, "data-call": item.call_id, "data-status": "streaming", "aria-label": `Tool call: ${this.title}` },
      head, this.preview, this.progress, this.body);
    this.toggle(allOpen);
    this.redraw();
  }

  toggle(open) {
    const isOpen = this.node.classList.toggle("open", open);
    this.chevron.textContent = isOpen ? "▾" : "▸";
    this.toggleButton.setAttribute("aria-expanded", String(isOpen));
  }

  get ended() { return this.endedAt !== null || ["ok", "error", "blocked", "denied", "not_run", "provider", "cancelled"].includes(this.node.dataset.status); }

  setState(status, text) {
    // A card only moves forward (streaming → ready → awaiting → running → an end), whatever
    // order its messages come in.
    if ((STATE_RANK[status] ?? 4) < (STATE_RANK[this.node.dataset.status] ?? 4)) return;
    this.node.dataset.status = status;
    this.state.textContent = text;
  }

  redraw() {
    // Once a frame at most: the live line and the time (their cost never grows with the value).
    if (this.currentKey !== null) {
      this.previewKey.textContent = `${this.currentKey}: `;
      this.previewText.textContent = this.tail.length >= PREVIEW_TAIL ? `…${this.tail}` : this.tail;
    }
    this.tick();
    if (this.followValue && this.node.classList.contains("open")) {
      const box = this.followValue;
      box.scrollTop = box.scrollHeight;
    }
    this.followValue = null;
  }

  tick() {
    if (this.openedAt === null) return;
    const end = this.endedAt ?? (this.ended ? null : Date.now() / 1000 + clockOffset);
    if (end === null) return;
    this.time.textContent = elapsed(end - this.openedAt);
  }

  key_(key) {
    let value = this.values.get(key);
    if (!value) {
      value = el("span", { class: "arg-value", "data-key": key });
      this.values.set(key, value);
      this.args.append(el("div", { class: "arg" }, el("span", { class: "arg-key", text: `${key}:` }), value));
    }
    if (this.currentKey !== key) {
      this.currentKey = key;
      this.tail = "";
      redrawSoon(this);
    }
    return value;
  }

  append(key, text) {
    // Appending a text node keeps a long streamed value linear: nothing already shown is redone;
    // the live line keeps a bounded tail of the value.
    const value = this.key_(key);
    value.append(document.createTextNode(text));
    this.tail = (this.tail + text).slice(-PREVIEW_TAIL);
    this.followValue = value;
    redrawSoon(this);
  }

  showArguments(args) {
    // The complete arguments, once: they replace what streaming showed where they differ
    // (a relaxed repair, or arguments a person edited before approving).
    this.arguments = args;
    this.argsJson.textContent = JSON.stringify(args, null, 2);
    const parts = [];
    for (const [key, value] of Object.entries(args)) {
      const shown = typeof value === "string" ? value : JSON.stringify(value);
      const node = this.values.get(key) || this.key_(key);
      if (node.textContent !== shown) node.textContent = shown;
      const short = shown.replace(/\s+/g, " ");
      parts.push(`${key}=${short.length > VALUE_PREVIEW ? `${short.slice(0, VALUE_PREVIEW - 1)}…` : short}`);
    }
    this.currentKey = null;
    this.previewKey.textContent = "";
    this.previewText.textContent = parts.join(", ");
  }

  argumentsText() {
    if (this.arguments) return JSON.stringify(this.arguments, null, 2);
    return this.argsJson.textContent || "";
  }

  complete(item) {
    if (item.arguments) {
      this.showArguments(item.arguments);
    } else if (item.raw !== null && item.raw !== undefined) {
      this.argsJson.textContent = item.raw;
      this.args.replaceChildren(el("div", { class: "arg-value", text: item.raw }));
      this.currentKey = null;
      this.previewKey.textContent = "";
      this.previewText.textContent = item.raw.slice(0, 200);
    }
    if (item.invalid) this.note(`Arguments could not be read: ${item.invalid}`);
    this.setState("ready", this.provider ? "the provider runs it" : "ready");
  }

  running(item) {
    if (item.arguments && this.argsJson.textContent !== JSON.stringify(item.arguments, null, 2)) {
      this.showArguments(item.arguments);
    }
    this.setState("running", "running…");
    if (typeof item.at === "number" && this.openedAt === null) this.openedAt = item.at;
    this.progress.hidden = false;
    this.progressBar.removeAttribute("value");
    this.percent.textContent = "";
    live.add(this);
  }

  progressed(item) {
    this.reported = true;
    this.progress.hidden = false;
    if (typeof item.fraction === "number") {
      const fraction = Math.max(0, Math.min(1, item.fraction));
      this.progressBar.value = fraction;
      this.percent.textContent = `${Math.round(fraction * 100)}%`;
    } else {
      this.progressBar.removeAttribute("value");
      this.percent.textContent = "";
    }
    this.progressText.textContent = item.message || "";
  }

  finish(item) {
    const status = item.status;
    this.setState(status, item.provider && status === "ok" ? "done by the provider" : LABELS[status] || status);
    if (this.node.dataset.status !== status && status !== "cancelled") return;
    if (status === "cancelled") { this.node.dataset.status = "cancelled"; this.state.textContent = LABELS.cancelled; }
    if (typeof item.at === "number") this.endedAt = item.at;
    live.delete(this);
    this.tick();
    this.approval.hidden = true;
    // The bar stays, full, only for a tool that reported progress.
    if (status === "ok" && this.reported) {
      this.progressBar.value = 1;
      this.percent.textContent = "100%";
    } else this.progress.hidden = true;
    const box = this.result;
    box.replaceChildren();
    box.hidden = false;
    const text = [item.text, item.data].filter(Boolean).join("\n");
    box.append(el("h4", {}, "Result", copyButton(`Copy the result of ${this.title}`, text)));
    if (item.text) box.append(el("pre", { class: "result", text: item.text }));
    if (item.data) box.append(el("h4", {}, "Result JSON"), el("pre", { class: "json result-json", text: item.data }));
    if (item.truncated) box.append(el("div", { class: "note", text: "(cut: the result is longer than the page shows)" }));
    if (item.sources && item.sources.length) {
      const list = el("div", { class: "sources" });
      for (const src of item.sources) list.append(sourceLink(src));
      box.append(el("h4", {}, "Sources"), list);
    }
    if (status !== "ok" && status !== "provider" && !view.replaying) announce(`${this.title}: ${LABELS[status] || status}`);
  }

  note(text) {
    for (const seen of this.notes.children) if (seen.textContent === text) return;
    this.notes.append(el("div", { text }));
  }

  granted(item) {
    this.setState("granted", `allowed (${item.lasting ? "always" : "this conversation"})`);
    this.chips.append(el("span", { class: "chip granted", text: "allowed ahead" }));
    this.note(`Ran without asking: ${item.label} is allowed ${item.lasting ? "always" : "in this conversation"}.`);
  }

  await_(item) {
    this.setState("awaiting", "waits for you");
    this.toggle(true);
    live.add(this);
    const box = this.approval;
    box.replaceChildren();
    box.hidden = false;
    const schema = item.schema || null;
    const original = item.arguments || {};
    const edit = el("textarea", { class: "edit-arguments", hidden: true, spellcheck: false, "aria-label": `Arguments of ${this.title} as JSON` });
    edit.value = JSON.stringify(original, null, 2);
    edit.rows = Math.min(20, Math.max(4, edit.value.split("\n").length + 1));
    const check = el("div", { class: "check", "aria-live": "polite" });
    const format = el("button", { type: "button", class: "format", text: "Format", hidden: true });
    const reason = el("input", { class: "deny-message", type: "text", placeholder: "Tell the model why (optional)", "aria-label": "Why you deny it or ask for another call (the model reads this)" });
    const error = el("div", { class: "error", role: "alert" });
    const approve = el("button", { type: "button", class: "approve", text: "Approve" });
    const editButton = el("button", { type: "button", class: "edit", text: "Edit arguments", "aria-expanded": "false" });
    const deny = el("button", { type: "button", class: "deny", text: "Deny" });
    const retry = el("button", { type: "button", class: "retry", text: "Ask for another call" });
    const validate = () => {
      const found = checkArguments(edit.value, schema);
      check.replaceChildren(el("span", { class: found.problems.length ? "error" : "check-ok", text: found.problems.length ? found.problems.join("\n") : "Valid JSON; it fits the tool's schema." }));
      return found;
    };
    let timer = 0;
    edit.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(validate, 150); });
    edit.addEventListener("keydown", (event) => {
      if (event.key === "Tab" && !event.shiftKey) {
        event.preventDefault();
        edit.setRangeText("  ", edit.selectionStart, edit.selectionEnd, "end");
      }
    });
    format.addEventListener("click", () => {
      try { edit.value = JSON.stringify(JSON.parse(edit.value), null, 2); } catch { /* validate says why */ }
      validate();
    });
    const send = async (decision) => {
      error.textContent = "";
      try {
        await post(`/api/conversations/${encodeURIComponent(current)}/decisions/${encodeURIComponent(this.callId)}`, decision);
      } catch (exc) {
        error.textContent = exc.message;
      }
    };
    const approval = () => {
      if (edit.hidden) return { action: "approve" };
      const found = validate();
      if (found.problems.length) { error.textContent = "Fix the arguments first: nothing was sent."; edit.focus(); return null; }
      return { action: "approve", arguments: found.value };
    };
    approve.addEventListener("click", () => { const decision = approval(); if (decision) send(decision); });
    editButton.addEventListener("click", () => {
      edit.hidden = !edit.hidden;
      format.hidden = edit.hidden;
      check.hidden = edit.hidden;
      editButton.setAttribute("aria-expanded", String(!edit.hidden));
      approve.textContent = edit.hidden ? "Approve" : "Approve with these arguments";
      if (!edit.hidden) { validate(); edit.focus(); }
    });
    deny.addEventListener("click", () => send({ action: "deny", message: reason.value }));
    retry.addEventListener("click", () => send({ action: "retry", message: reason.value }));
    const parts = [el("p", { text: item.detail || "This call needs your approval." }), edit, check, format, reason,
      el("div", { class: "buttons" }, approve, editButton, deny, retry)];
    const choices = item.grants || [];
    if (choices.length) {
      const scope = el("select", { class: "grant-scope", "aria-label": "What to allow from now on" });
      for (const choice of choices) {
        const label = choice.scope === "tool" ? `this tool (${choice.value})`
          : choice.scope === "server" ? `every tool of MCP server ${choice.value}`
          : `every call with side effect ${choice.value}`;
        scope.append(el("option", { value: JSON.stringify(choice), text: label }));
      }
      const grant = (lasting) => {
        const decision = approval();
        if (!decision) return;
        send({ ...decision, grant: { ...JSON.parse(scope.value), lasting } });
      };
      const here = el("button", { type: "button", class: "allow-conversation", text: "Allow in this conversation" });
      const always = el("button", { type: "button", class: "allow-always", text: "Always allow" });
      here.addEventListener("click", () => grant(false));
      always.addEventListener("click", () => grant(true));
      parts.push(el("div", { class: "grant-row" }, el("span", { text: "Allow" }), scope, here, always));
    }
    parts.push(error);
    box.append(...parts);
    check.hidden = true;
    if (!view.replaying) announce(`${this.title} waits for your approval`);
  }

  decided(item) {
    this.approval.hidden = true;
    if (item.edited) {
      this.chips.append(el("span", { class: "chip edited", text: "edited" }));
      this.note("Approved with arguments you edited.");
    }
    const label = item.edited ? "approved, edited" : item.action === "retry" ? "sent back to the model" : item.action;
    this.setState(item.action === "denied" ? "denied" : "running", label);
  }
}

// A tiny check of edited arguments against the tool's schema before they are sent (the server
// checks them again with the full validator): JSON, an object, required keys, known keys when
// no others are allowed, and the type of each top-level value.
function checkArguments(text, schema) {
  let value;
  try { value = JSON.parse(text); } catch (exc) { return { problems: [`Not JSON: ${exc.message}`], value: null }; }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { problems: ["The arguments must be a JSON object ({…})."], value: null };
  }
  const problems = [];
  if (schema && typeof schema === "object") {
    const properties = schema.properties || {};
    for (const key of schema.required || []) {
      if (!(key in value)) problems.push(`${key} is required.`);
    }
    for (const [key, item] of Object.entries(value)) {
      const spec = properties[key];
      if (!spec) {
        if (schema.additionalProperties === false) problems.push(`${key} is not an argument of this tool (${Object.keys(properties).join(", ") || "none"}).`);
        continue;
      }
      const types = [].concat(spec.type || []);
      if (types.length && !types.some((type) => fitsType(item, type))) problems.push(`${key} must be ${types.join(" or ")}; it is ${jsonType(item)}.`);
      if (Array.isArray(spec.enum) && !spec.enum.some((allowed) => JSON.stringify(allowed) === JSON.stringify(item))) {
        problems.push(`${key} must be one of ${spec.enum.map((v) => JSON.stringify(v)).join(", ")}.`);
      }
    }
  }
  return { problems, value };
}
function jsonType(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}
function fitsType(value, type) {
  const actual = jsonType(value);
  return actual === type || (type === "number" && actual === "integer");
}

function sourceLink(src) {
  const url = src.link === false ? null : safeUrl(src.url);
  const label = src.title || src.url;
  const number = src.n ? `[${src.n}] ` : "";
  if (!url || url.startsWith("mailto:")) {
    return el("span", { class: "source" }, number, label, src.title ? el("span", { class: "address", text: ` ${src.url}` }) : null);
  }
  const link = el("a", { href: url, target: "_blank", rel: "noopener noreferrer nofollow" }, number, label);
  return el("span", {}, link, src.title ? el("span", { class: "address", text: ` ${src.url}` }) : null);
}

// -- Markdown -----------------------------------------------------------------------------------

function buildTree(nodes, parent, ctx) {
  for (const node of nodes) {
    if (typeof node === "string") { parent.append(document.createTextNode(node)); continue; }
    if (!node || typeof node !== "object" || !BLOCK_TAGS.has(node.t)) continue;
    if (node.t === "cite") {
      const target = ctx.sources > 0 && node.n <= ctx.sources ? `${ctx.id}-${node.n}` : null;
      parent.append(target
        ? el("a", { class: "cite", href: `#${target}`, text: `[${node.n}]`, "aria-label": `source ${node.n}` })
        : document.createTextNode(`[${node.n}]`));
      continue;
    }
    if (node.t === "a") {
      const href = safeUrl(String(node.href || ""));
      const link = href ? el("a", { href, target: "_blank", rel: "noopener noreferrer nofollow" }) : el("span");
      buildTree(node.c || [], link, ctx);
      parent.append(link);
      continue;
    }
    if (node.t === "pre") {
      const code = el("code", { text: (node.c || []).filter((c) => typeof c === "string").join("") });
      const pre = el("pre", { "data-lang": node.lang ? String(node.lang) : null }, code);
      pre.append(copyButton("Copy this code", () => code.textContent));
      parent.append(pre);
      continue;
    }
    const element = document.createElement(node.t);
    if (node.t === "ol" && Number.isInteger(node.start)) element.start = node.start;
    if ((node.t === "th" || node.t === "td") && ["left", "center", "right"].includes(node.align)) element.style.textAlign = node.align;
    buildTree(node.c || [], element, ctx);
    parent.append(element);
  }
}

let answerCount = 0;

function renderAnswer(node, item) {
  const id = `answer-${++answerCount}`;
  const sources = Array.isArray(item.sources) ? item.sources : [];
  node.classList.remove("streaming");
  node.replaceChildren();
  if (Array.isArray(item.blocks)) buildTree(item.blocks, node, { id, sources: sources.length });
  else { node.classList.add("streaming"); node.textContent = item.text; }
  if (sources.length) {
    const list = el("ol", { class: "answer-sources", "aria-label": "Sources" });
    for (const src of sources) list.append(el("li", { id: `${id}-${src.n}` }, sourceLink({ ...src, n: null })));
    node.append(list);
  }
}

// -- the view -----------------------------------------------------------------------------------

const live = new Set(); // cards whose time still runs

setInterval(() => { for (const card of live) { if (card.ended) live.delete(card); else card.tick(); } }, 500);

const view = {
  cards: new Map(),
  texts: new Map(),
  answers: [],
  actions: null,
  replaying: false,
  stickToBottom: true,

  reset() {
    this.cards.clear();
    this.texts.clear();
    this.answers = [];
    this.actions = null;
    live.clear();
    transcript.replaceChildren();
    statusLine.hidden = true;
    setRunning(false);
  },

  scrollSoon() {
    if (!frame) frame = requestAnimationFrame(flush);
  },

  scroll() {
    const nearBottom = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 400;
    if (nearBottom) transcript.scrollTop = transcript.scrollHeight;
  },

  card(item) {
    let card = this.cards.get(item.card);
    if (!card) {
      card = new Card({ name: item.name || "tool", title: item.title || item.name || "tool", ...item });
      this.cards.set(item.card, card);
      transcript.append(card.node);
      if (!card.ended) live.add(card);
    }
    return card;
  },

  text(turn) {
    let node = this.texts.get(turn);
    if (!node) {
      node = el("div", { class: "message assistant streaming", "data-turn": turn });
      this.texts.set(turn, node);
      transcript.append(node);
    }
    return node;
  },

  dropActions() {
    if (this.actions) this.actions.remove();
    this.actions = null;
  },

  addActions(kind, detail) {
    this.dropActions();
    if (kind === "error") {
      const retry = el("button", { type: "button", class: "retry", text: "Retry" });
      retry.addEventListener("click", () => restart("retry"));
      this.actions = el("div", { class: "note error", role: "alert" }, el("span", { text: detail }), retry);
    } else {
      const regenerate = el("button", { type: "button", class: "regenerate", text: "Regenerate" });
      regenerate.addEventListener("click", () => restart("regenerate"));
      this.actions = el("div", { class: "turn-actions" }, regenerate);
      if (kind !== "answered") {
        const retry = el("button", { type: "button", class: "retry", text: "Retry" });
        retry.addEventListener("click", () => restart("retry"));
        this.actions.replaceChildren(retry);
      }
    }
    transcript.append(this.actions);
  },

  apply(item) {
    switch (item.kind) {
      case "hello":
        this.reset();
        if (typeof item.now === "number") clockOffset = item.now - Date.now() / 1000;
        setRunning(Boolean(item.running));
        break;
      case "user": {
        const message = el("div", { class: "message user", text: item.text });
        if (item.tool_choice) message.append(el("span", { class: "chip", text: `tools: ${item.tool_choice}` }));
        transcript.append(message);
        setRunning(true);
        break;
      }
      case "retry": setRunning(true); break;
      case "regenerate":
        if (this.answers.length) this.answers.pop().remove();
        setRunning(true);
        break;
      case "status": statusText.textContent = item.text; statusLine.hidden = false; break;
      case "status_clear": statusLine.hidden = true; break;
      case "text": this.text(item.turn).append(document.createTextNode(item.text)); break;
      case "text_final": {
        const node = this.text(item.turn);
        renderAnswer(node, item);
        if (this.answers[this.answers.length - 1] !== node) this.answers.push(node);
        break;
      }
      case "card_open": this.card(item); break;
      case "arg_key": this.card(item).key_(item.key); break;
      case "arg_append": this.card(item).append(item.key, item.text); break;
      case "card_args": this.card(item).complete(item); break;
      case "card_running": this.card(item).running(item); break;
      case "card_progress": this.card(item).progressed(item); break;
      case "card_result": this.card(item).finish(item); break;
      case "card_note": this.card(item).note(item.text); break;
      case "card_granted": this.card(item).granted(item); break;
      case "card_awaiting": this.card(item).await_(item); break;
      case "card_decided": this.card(item).decided(item); break;
      case "warning":
        transcript.append(el("div", { class: `note warning${item.filter ? " filter" : ""}`, text: item.text }));
        break;
      case "usage":  // what the turn spent: tokens, and the cost where [prices] has the model
        transcript.append(el("div", { class: "note usage", text: item.text }));
        break;
      case "finished":
        statusLine.hidden = true;
        setRunning(false);
        if (item.stop_reason === "answered") {
          this.addActions("answered");
          if (!this.replaying) announce("The answer is ready");
        } else {
          const text = `Turn ended: ${item.stop_reason}${item.detail ? ` (${item.detail})` : ""}`;
          if (item.stop_reason === "error") {
            this.addActions("error", text);
          } else {
            transcript.append(el("div", { class: "note finished", "data-stop": item.stop_reason, text }));
            this.addActions(item.stop_reason);
          }
          if (!this.replaying) announce(text);
        }
        if (!this.replaying) loadConversations();
        break;
      default:  // kinds other scripts handle (elicit.js: a tool's questions to the person)
        document.dispatchEvent(new CustomEvent("toolwire:view", { detail: { item, conversation: current } }));
        break;
    }
  },
};

async function restart(how) {
  if (!current || running) return;
  setRunning(true);
  try { await post(`/api/conversations/${encodeURIComponent(current)}/${how}`); }
  catch (exc) {
    setRunning(false);
    transcript.append(el("div", { class: "note warning", text: exc.message }));
  }
}

// -- composer -----------------------------------------------------------------------------------

async function loadTools() {
  try {
    const data = await get("/api/tools");
    const group = $("tool-options");
    group.replaceChildren();
    for (const tool of data.tools) {
      group.append(el("option", { value: tool.name, text: `${tool.icon ? `${tool.icon} ` : ""}${tool.title}` }));
    }
  } catch { /* the choice stays auto/none/required */ }
}

let countTimer = 0;
let countSeq = 0;
function countSoon() {
  clearTimeout(countTimer);
  countTimer = setTimeout(async () => {
    const seq = ++countSeq;
    try {
      const count = await post("/api/count", { text: prompt.value, tool_choice: toolChoice.value });
      if (seq !== countSeq) return;
      $("token-count").textContent = `≈ ${count.message} tokens` + (count.instructions ? ` + ${count.instructions} for instructions` : "");
    } catch { /* the count is a hint */ }
  }, 250);
}
prompt.addEventListener("input", countSoon);
toolChoice.addEventListener("change", countSoon);

$("composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = prompt.value.trim();
  if (!text || running) return;
  const id = current || (await newConversation());
  setRunning(true);
  // The tool choice is for this message: the menu is back to auto, and the message box empty,
  // as it is sent (both come back if the server refuses it).
  const choice = toolChoice.value;
  const written = prompt.value;
  toolChoice.value = "auto";
  prompt.value = "";
  countSoon();
  try {
    await post(`/api/conversations/${encodeURIComponent(id)}/messages`, { text, tool_choice: choice });
    loadConversations();
  } catch (exc) {
    setRunning(false);
    toolChoice.value = choice;
    if (!prompt.value) prompt.value = written;
    transcript.append(el("div", { class: "note warning", text: exc.message }));
  }
});

prompt.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
});

stopButton.addEventListener("click", async () => {
  if (!current) return;
  try { await post(`/api/conversations/${encodeURIComponent(current)}/stop`); }
  catch (exc) { transcript.append(el("div", { class: "note warning", text: exc.message })); }
});

$("new-conversation").addEventListener("click", async () => { await newConversation(); setDrawer(false); prompt.focus(); });

document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && $("sidebar").classList.contains("open")) { setDrawer(false); $("open-drawer").focus(); return; }
  const target = event.target;
  const typing = target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
  if (typing || event.ctrlKey || event.metaKey || event.altKey || $("settings").open) return;
  if (event.key === "e" || event.key === "E") { event.preventDefault(); setAllCards(!allOpen); }
});

(async () => {
  loadTools();
  const conversations = await loadConversations();
  const match = /^#c=([0-9a-f]+)$/.exec(location.hash);
  if (match) select(match[1]);
  else if (conversations.length) select(conversations[0].id);
})();
