// Small DOM helpers shared by every view.

/** Make an element: h("button", {class: "x", onclick: f}, "text", child...). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = value;
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key in el && typeof value !== "string") {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

/** Say something to screen readers (and keep it in the polite live region). */
export function announce(text) {
  const region = $("#announcer");
  region.textContent = "";
  // a new text node each time so repeated messages are read again
  setTimeout(() => { region.textContent = text; }, 30);
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** "1 move", "3 moves". */
export const plural = (n, word, words = `${word}s`) => `${fmt(n)} ${Number(n) === 1 ? word : words}`;

/** The page's title: "What — nimlab". */
export function setTitle(what) {
  document.title = what ? `${what} — nimlab` : "nimlab";
}

/** The connection to the server as the header shows it: true (reachable), false (not). */
let online = true;
export function setOnline(ok) {
  const el = $("#conn");
  if (!el) return;
  if (ok === online && el.textContent) return;
  const was = online;
  online = ok;
  el.className = `conn ${ok ? "online" : "offline"}`;
  el.textContent = ok ? (was ? "" : "Connected again") : "Offline: the server cannot be reached, retrying…";
  el.hidden = ok && was;
  if (ok && !was) setTimeout(() => { if (online) { el.hidden = true; el.textContent = ""; } }, 4000);
}
export const isOnline = () => online;

/** Numbers of any size (BigInt beyond 2^53) with thousands separators. */
export function fmt(n) {
  return typeof n === "bigint" ? n.toLocaleString("en-US") : Number(n).toLocaleString("en-US");
}

/** Colours of seats (seat 0, 1, ...): blues, purples, ambers and browns, never the green and red
 * of winning and losing moves. */
const SEAT_COLOURS = ["#1f5fa8", "#8e44ad", "#d98a00", "#4a5a6a", "#6d4c41", "#3f51b5", "#b04bb5", "#0d6e8a"];
export const seatColour = (seat) => SEAT_COLOURS[seat % SEAT_COLOURS.length];

/** A modal dialog; resolves with the value of the button pressed (Escape: null). With
 * `closeAfterMs` (news nobody has to answer) it closes by itself after that long (null). A
 * confirmation marks its Cancel button `cancel: true`: the dialog opens with the focus on it
 * (one Enter too many never confirms), else on the primary button. */
export function dialog({ title, text = "", big = "", buttons = [{ label: "Ok", value: true, primary: true }], closeAfterMs = 0 }) {
  const dlg = $("#dialog");
  if (dlg.open) dlg.close();
  return new Promise((resolve) => {
    let settled = false;
    let timer = null;
    const done = (value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (dlg.open) dlg.close();
      resolve(value);
    };
    const actions = buttons.map((b) =>
      h("button", { class: b.primary ? "primary" : "", type: "button", onclick: () => done(b.value) }, b.label));
    dlg.replaceChildren(...[
      big ? h("div", { class: "big", "aria-hidden": "true" }, big) : null,
      h("h2", { id: "dialog-title" }, title),
      text ? h("p", {}, text) : null,
      h("div", { class: "actions" }, actions),
    ].filter(Boolean));
    dlg.oncancel = (e) => { e.preventDefault(); done(null); };
    dlg.showModal();
    if (closeAfterMs > 0) timer = setTimeout(() => { if (dlg.contains(actions[0] || null) || !actions.length) done(null); }, closeAfterMs);
    const cancel = buttons.findIndex((b) => b.cancel);
    const primary = cancel >= 0 ? actions[cancel] : actions.find((b) => b.classList.contains("primary")) || actions[0];
    if (primary) primary.focus();
  });
}
