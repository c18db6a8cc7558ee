// The toolwire web chat. Every text from a model, a tool or the server is inserted as a text
// node (textContent, createTextNode); no HTML from outside is ever parsed.
"use strict";

const CSRF = document.querySelector('meta[name="csrf-token"]').content;
const COLLAPSED = document.querySelector('meta[name="cards-collapsed"]').content === "true";
const PREVIEW_CHARS = 160;
const STATE_RANK = { streaming: 0, ready: 1, awaiting: 2, running: 3 };

const $ = (id) => document.getElementById(id);
const transcript = $("transcript");
const statusLine = $("status");
const statusText = $("status-text");
const prompt = $("prompt");
const sendButton = $("send");
const stopButton = $("stop");

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": CSRF },
    body: JSON.stringify(body || {}),
    credentials: "same-origin",
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

// -- conversations ------------------------------------------------------------------------------

let current = null;
let source = null;
let running = false;

async function loadConversations() {
  const response = await fetch("/api/conversations", { credentials: "same-origin" });
  const data = await response.json();
  const list = $("conversations");
  list.replaceChildren();
  for (const item of data.conversations) {
    const li = el("li", { "data-id": item.id, text: item.title, title: item.title });
    if (item.id === current) li.classList.add("active");
    if (item.running) li.classList.add("running");
    li.addEventListener("click", () => select(item.id));
    list.append(li);
  }
  return data.conversations;
}

function select(id) {
  current = id;
  history.replaceState(null, "", `#c=${encodeURIComponent(id)}`);
  for (const li of $("conversations").children) li.classList.toggle("active", li.dataset.id === id);
  if (source) source.close();
  view.reset();
  source = new EventSource(`/api/conversations/${encodeURIComponent(id)}/events`);
  source.onmessage = (message) => {
    let batch;
    try { batch = JSON.parse(message.data); } catch { return; }
    if (!Array.isArray(batch)) return;
    for (const item of batch) view.apply(item);
    // After the replayed log, the server says whether a turn runs: a log cut short by a restart
    // must not leave the page waiting for a turn that is gone.
    if (batch.length && batch[0].kind === "hello") setRunning(Boolean(batch[0].running));
    view.scroll();
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
}

// -- the view -----------------------------------------------------------------------------------

class Card {
  constructor(item) {
    this.key = item.card;
    this.callId = item.call_id;
    this.chevron = el("span", { class: "chevron", text: "▸" });
    this.state = el("span", { class: "card-state", text: "arguments…" });
    const head = el("div", { class: "card-head" }, this.chevron);
    if (item.icon) head.append(el("span", { class: "card-icon", text: item.icon }));
    head.append(el("span", { class: "card-title", text: item.title || item.name }));
    head.append(el("span", { class: "card-name", text: item.name }));
    for (const risk of item.risk || []) {
      head.append(el("span", { class: `chip risk-${String(risk).replace(/[^a-z_]/g, "")}`, text: risk }));
    }
    if (item.approval) head.append(el("span", { class: "chip", text: "asks first" }));
    head.append(this.state);
    head.addEventListener("click", () => this.toggle());
    this.preview = el("div", { class: "card-preview" });
    this.previewLength = 0;
    this.args = el("div", { class: "args" });
    this.values = new Map();
    this.argsJson = el("pre", { class: "json", hidden: true });
    const jsonToggle = el("button", { type: "button", class: "toggle-json", text: "JSON" });
    jsonToggle.addEventListener("click", () => {
      this.argsJson.hidden = !this.argsJson.hidden;
      this.args.hidden = !this.argsJson.hidden;
    });
    this.progress = el("div", { class: "progress", hidden: true });
    this.progressBar = el("progress", { max: 1 });
    this.progressText = el("span");
    this.progress.append(this.progressBar, this.progressText);
    this.result = el("div", { class: "result-box", hidden: true });
    this.notes = el("div", { class: "card-notes" });
    this.approval = el("div", { class: "approval", hidden: true });
    this.body = el(
      "div",
      { class: "card-body" },
      el("h4", {}, "Arguments", jsonToggle),
      this.args,
      this.argsJson,
      this.progress,
      this.result,
      this.notes,
      this.approval,
    );
    this.node = el("div", { class: "card", "data-card": item.card, "data-call": item.call_id, "data-status": "streaming" }, head, this.preview, this.body);
    if (!COLLAPSED) this.toggle(true);
  }

  toggle(open) {
    const isOpen = this.node.classList.toggle("open", open);
    this.chevron.textContent = isOpen ? "▾" : "▸";
  }

  setState(status, text) {
    // A card only moves forward (streaming → ready → awaiting → running → an end), whatever
    // order its messages come in.
    if ((STATE_RANK[status] ?? 4) < (STATE_RANK[this.node.dataset.status] ?? 4)) return;
    this.node.dataset.status = status;
    this.state.textContent = text;
  }

  addPreview(text) {
    // The one-line preview stops growing at PREVIEW_CHARS: it never costs more than that.
    if (this.previewLength >= PREVIEW_CHARS) return;
    const piece = text.slice(0, PREVIEW_CHARS - this.previewLength);
    this.previewLength += piece.length;
    this.preview.append(document.createTextNode(piece));
  }

  key_(key) {
    let value = this.values.get(key);
    if (!value) {
      value = el("span", { class: "arg-value", "data-key": key });
      this.values.set(key, value);
      this.args.append(el("div", { class: "arg" }, el("span", { class: "arg-key", text: `${key}:` }), value));
      this.addPreview(`${this.values.size > 1 ? ", " : ""}${key}=`);
    }
    return value;
  }

  append(key, text) {
    // Appending a text node keeps a long streamed value linear: nothing already shown is redone.
    this.key_(key).append(document.createTextNode(text));
    this.addPreview(text);
  }

  showArguments(args) {
    // The complete arguments, once: they replace what streaming showed where they differ
    // (a relaxed repair, or arguments a person edited before approving).
    this.argsJson.textContent = JSON.stringify(args, null, 2);
    for (const [key, value] of Object.entries(args)) {
      const shown = typeof value === "string" ? value : JSON.stringify(value);
      const node = this.key_(key);
      if (node.textContent !== shown) node.textContent = shown;
    }
    if (this.previewLength === 0) this.addPreview(JSON.stringify(args));
  }

  complete(item) {
    if (item.arguments) {
      this.showArguments(item.arguments);
    } else if (item.raw !== null && item.raw !== undefined) {
      this.argsJson.textContent = item.raw;
      this.args.replaceChildren(el("div", { class: "arg-value", text: item.raw }));
      this.addPreview(item.raw);
    }
    if (item.invalid) this.note(`Arguments could not be read: ${item.invalid}`);
    this.setState("ready", item.provider ? "run by the provider" : "ready");
  }

  running(item) {
    if (item.arguments && this.argsJson.textContent !== JSON.stringify(item.arguments, null, 2)) {
      this.showArguments(item.arguments);
    }
    this.setState("running", "running…");
    this.progress.hidden = false;
    this.progressBar.removeAttribute("value");
  }

  progressed(item) {
    this.reported = true;
    this.progress.hidden = false;
    if (typeof item.fraction === "number") this.progressBar.value = item.fraction;
    this.progressText.textContent = item.message || "";
  }

  finish(item) {
    const labels = { ok: "done", error: "failed", blocked: "blocked", denied: "denied", not_run: "not run", provider: "run by the provider" };
    this.setState(item.status, labels[item.status] || item.status);
    this.approval.hidden = true;
    // The bar stays, full, only for a tool that reported progress.
    if (item.status === "ok" && this.reported) this.progressBar.value = 1;
    else this.progress.hidden = true;
    const box = this.result;
    box.replaceChildren();
    box.hidden = false;
    const title = el("h4", {}, "Result");
    box.append(title);
    if (item.text) box.append(el("pre", { class: "result", text: item.text }));
    if (item.data) {
      const data = el("pre", { class: "json result-json", text: item.data });
      box.append(el("h4", {}, "Result JSON"), data);
    }
    if (item.truncated) box.append(el("div", { class: "note", text: "(cut: the result is longer than the page shows)" }));
    if (item.sources && item.sources.length) {
      const list = el("div", { class: "sources" });
      for (const src of item.sources) list.append(sourceLink(src));
      box.append(el("h4", {}, "Sources"), list);
    }
  }

  note(text) {
    this.notes.append(el("div", { text }));
  }

  await_(item) {
    this.setState("awaiting", "waits for you");
    this.toggle(true);
    const box = this.approval;
    box.replaceChildren();
    box.hidden = false;
    const edit = el("textarea", { class: "edit-arguments", rows: 4, hidden: true });
    edit.value = JSON.stringify(item.arguments || {}, null, 2);
    const reason = el("input", { class: "deny-message", type: "text", placeholder: "Tell the model why (optional)" });
    const error = el("div", { class: "error" });
    const approve = el("button", { type: "button", class: "approve", text: "Approve" });
    const editButton = el("button", { type: "button", class: "edit", text: "Edit arguments" });
    const deny = el("button", { type: "button", class: "deny", text: "Deny" });
    const send = async (decision) => {
      error.textContent = "";
      try {
        await post(`/api/conversations/${encodeURIComponent(current)}/decisions/${encodeURIComponent(this.callId)}`, decision);
      } catch (exc) {
        error.textContent = exc.message;
      }
    };
    approve.addEventListener("click", () => {
      if (edit.hidden) return send({ action: "approve" });
      let edited;
      try { edited = JSON.parse(edit.value); } catch (exc) { error.textContent = `The arguments are not JSON: ${exc.message}`; return; }
      send({ action: "approve", arguments: edited });
    });
    editButton.addEventListener("click", () => { edit.hidden = !edit.hidden; approve.textContent = edit.hidden ? "Approve" : "Approve with these arguments"; });
    deny.addEventListener("click", () => send({ action: "deny", message: reason.value }));
    box.append(el("p", { text: item.detail || "This call needs your approval." }), edit, reason, approve, editButton, deny, error);
  }

  decided(item) {
    this.approval.hidden = true;
    this.setState(item.action === "approved" ? "running" : "denied", item.action);
  }
}

function sourceLink(src) {
  let url = null;
  try { url = new URL(src.url); } catch { url = null; }
  const label = src.title || src.url;
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return el("span", { class: "source", text: label });
  }
  return el("a", { href: url.href, text: label, target: "_blank", rel: "noopener noreferrer nofollow" });
}

const view = {
  cards: new Map(),
  texts: new Map(),

  reset() {
    this.cards.clear();
    this.texts.clear();
    transcript.replaceChildren();
    statusLine.hidden = true;
    setRunning(false);
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
    }
    return card;
  },

  text(turn) {
    let node = this.texts.get(turn);
    if (!node) {
      node = el("div", { class: "message assistant", "data-turn": turn });
      this.texts.set(turn, node);
      transcript.append(node);
    }
    return node;
  },

  apply(item) {
    switch (item.kind) {
      case "hello": this.reset(); setRunning(Boolean(item.running)); break;
      case "user": transcript.append(el("div", { class: "message user", text: item.text })); setRunning(true); break;
      case "status": statusText.textContent = item.text; statusLine.hidden = false; break;
      case "status_clear": statusLine.hidden = true; break;
      case "text": this.text(item.turn).append(document.createTextNode(item.text)); break;
      case "text_final": this.text(item.turn).textContent = item.text; break;
      case "card_open": this.card(item); break;
      case "arg_key": this.card(item).key_(item.key); break;
      case "arg_append": this.card(item).append(item.key, item.text); break;
      case "card_args": this.card(item).complete(item); break;
      case "card_running": this.card(item).running(item); break;
      case "card_progress": this.card(item).progressed(item); break;
      case "card_result": this.card(item).finish(item); break;
      case "card_note": this.card(item).note(item.text); break;
      case "card_awaiting": this.card(item).await_(item); break;
      case "card_decided": this.card(item).decided(item); break;
      case "warning":
        transcript.append(el("div", { class: `note warning${item.filter ? " filter" : ""}`, text: item.text }));
        break;
      case "finished":
        statusLine.hidden = true;
        setRunning(false);
        if (item.stop_reason !== "answered") {
          transcript.append(el("div", { class: "note finished", "data-stop": item.stop_reason, text: `Turn ended: ${item.stop_reason}${item.detail ? ` (${item.detail})` : ""}` }));
        }
        loadConversations();
        break;
      default:  // kinds other scripts handle (elicit.js: a tool's questions to the person)
        document.dispatchEvent(new CustomEvent("toolwire:view", { detail: { item, conversation: current } }));
        break;
    }
  },
};

// -- wiring -------------------------------------------------------------------------------------

$("composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = prompt.value.trim();
  if (!text || running) return;
  const id = current || (await newConversation());
  setRunning(true);
  try {
    await post(`/api/conversations/${encodeURIComponent(id)}/messages`, { text });
    prompt.value = "";
    loadConversations();
  } catch (exc) {
    setRunning(false);
    transcript.append(el("div", { class: "note warning", text: exc.message }));
  }
});

prompt.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
});

stopButton.addEventListener("click", async () => {
  if (!current) return;
  try { await post(`/api/conversations/${encodeURIComponent(current)}/stop`); }
  catch (exc) { transcript.append(el("div", { class: "note warning", text: exc.message })); }
});

$("new-conversation").addEventListener("click", () => newConversation());

(async () => {
  const conversations = await loadConversations();
  const match = /^#c=([0-9a-f]+)$/.exec(location.hash);
  if (match) select(match[1]);
  else if (conversations.length) select(conversations[0].id);
})();
