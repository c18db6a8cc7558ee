// A tool's question to the person, as a form made from its fields (the "elicitation" views of
// app.js). Every text from outside is inserted as text (textContent); nothing is parsed as HTML.
"use strict";

(() => {
  const CSRF = document.querySelector('meta[name="csrf-token"]').content;
  const forms = new Map();

  function node(tag, props, ...children) {
    const made = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null) continue;
      if (key === "class") made.className = value;
      else if (key === "text") made.textContent = value;
      else made.setAttribute(key, value);
    }
    for (const child of children) if (child) made.append(child);
    return made;
  }

  function input(field) {
    const id = `elicit-${field.name}-${Math.random().toString(36).slice(2)}`;
    let control;
    if (field.choices.length) {
      control = node("select", { id, name: field.name });
      if (!field.required) control.append(node("option", { value: "", text: "" }));
      for (const choice of field.choices) control.append(node("option", { value: choice, text: choice }));
      if (field.default !== null) control.value = String(field.default);
    } else if (field.type === "boolean") {
      control = node("input", { id, name: field.name, type: "checkbox" });
      control.checked = field.default === true;
    } else {
      const type = field.type === "string" ? "text" : "number";
      control = node("input", { id, name: field.name, type, step: field.type === "integer" ? "1" : "any" });
      if (field.default !== null) control.value = String(field.default);
      if (field.required) control.required = true;
    }
    const label = node("label", { for: id, text: field.title + (field.required ? " *" : "") });
    const row = node("div", { class: "elicit-field" }, label, control);
    if (field.description) row.append(node("div", { class: "elicit-help", text: field.description }));
    return { row, value: () => {
      if (field.type === "boolean" && !field.choices.length) return control.checked;
      const text = control.value.trim();
      if (text === "") return undefined;
      if (field.type === "integer" && !field.choices.length) return Number.parseInt(text, 10);
      if (field.type === "number" && !field.choices.length) return Number(text);
      return text;
    } };
  }

  async function send(conversation, id, body, status) {
    const response = await fetch(
      `/api/conversations/${encodeURIComponent(conversation)}/elicitations/${encodeURIComponent(id)}`,
      { method: "POST", credentials: "same-origin", body: JSON.stringify(body),
        headers: { "Content-Type": "application/json", "X-CSRF-Token": CSRF } });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      status.textContent = data.error || `HTTP ${response.status}`;
    }
  }

  function open(item, conversation) {
    const status = node("div", { class: "elicit-status", role: "status" });
    const form = node("form", { class: "elicitation", "data-id": item.id });
    const who = item.tool ? `${item.source} asks (while running ${item.tool})` : `${item.source} asks`;
    form.append(node("div", { class: "elicit-who", text: who }), node("p", { text: item.message }));
    if (item.url) form.append(node("p", { class: "elicit-url", text: `It asks you to open: ${item.url}` }));
    const inputs = item.fields.map(input);
    for (const one of inputs) form.append(one.row);
    const accept = node("button", { type: "submit", text: item.url ? "Open it" : "Send" });
    const decline = node("button", { type: "button", text: "Decline" });
    const cancel = node("button", { type: "button", text: "Cancel" });
    form.append(node("div", { class: "elicit-actions" }, accept, decline, cancel), status);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const content = {};
      item.fields.forEach((field, index) => {
        const value = inputs[index].value();
        if (value !== undefined) content[field.name] = value;
      });
      send(conversation, item.id, { action: "accept", content }, status);
    });
    decline.addEventListener("click", () => send(conversation, item.id, { action: "decline" }, status));
    cancel.addEventListener("click", () => send(conversation, item.id, { action: "cancel" }, status));
    forms.set(item.id, form);
    document.getElementById("transcript").append(form);
  }

  document.addEventListener("toolwire:view", (event) => {
    const { item, conversation } = event.detail;
    if (item.kind === "elicitation" && !forms.get(item.id)?.isConnected) open(item, conversation);
    if (item.kind === "elicitation_done") {
      const form = forms.get(item.id);
      if (form) {
        for (const control of form.querySelectorAll("input, select, button")) control.disabled = true;
        form.querySelector(".elicit-status").textContent = `Answered: ${item.action}`;
      }
    }
  });
})();
