// A tiny router over the History API: each page is a function (main, match) -> cleanup?.

import { $, $$, h, setTitle } from "./dom.js";

const routes = [];
let cleanup = null;

/** Register a page: `pattern` matches location.pathname; `nav` names the menu entry. */
export function route(pattern, view, nav = null) {
  routes.push({ pattern, view, nav });
}

export function navigate(path, { replace = false } = {}) {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  render();
}

export function render() {
  if (cleanup) { try { cleanup(); } catch (e) { console.error(e); } }
  cleanup = null;
  const main = $("#main");
  main.replaceChildren();
  const path = location.pathname.replace(/\/+$/, "") || "/";
  for (const { pattern, view, nav } of routes) {
    const m = path.match(pattern);
    if (!m) continue;
    for (const a of $$("[data-nav]")) {
      if (a.dataset.nav === nav) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
    setTitle(TITLES[nav] || "");
    cleanup = view(main, m) || null;
    return;
  }
  for (const a of $$("[data-nav]")) a.removeAttribute("aria-current");
  notFound(main);
}

const TITLES = { setup: "New game", players: "Players", rankings: "Rankings", history: "History" };

/** The app's "no such page". */
export function notFound(main, title = "There is no such page", text = `Nothing lives at ${location.pathname}.`) {
  setTitle("No such page");
  main.replaceChildren(h("section", { class: "not-found card" },
    h("h1", {}, title),
    h("p", {}, text),
    h("p", {}, h("a", { href: "/", "data-link": "" }, "Set up a new game"), " · ",
      h("a", { href: "/history", "data-link": "" }, "Finished games"))));
}

export function start() {
  document.addEventListener("click", (e) => {
    const a = e.target.closest("a[data-link]");
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    if (a.origin !== location.origin) return;
    e.preventDefault();
    navigate(a.pathname + a.search);
  });
  window.addEventListener("popstate", render);
  // a seat's link opened on its own game's page changes only the part after "#"
  window.addEventListener("hashchange", () => { if (location.hash.includes("token=")) render(); });
  render();
}
