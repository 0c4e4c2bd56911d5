// The registry (players, rankings) and the stored games (history, replay).

import { h, $, fmt, dialog } from "./dom.js";
import { get, post } from "./api.js";
import { drawBoard } from "./board.js";

const kindText = (p) => (p.ai ? `AI (${p.bot} bot)` : "human");

function table(head, rows, caption) {
  return h("div", { class: "table-wrap" }, h("table", {},
    caption ? h("caption", { class: "visually-hidden" }, caption) : null,
    h("thead", {}, h("tr", {}, head.map(([t, num]) => h("th", { class: num ? "num" : "", scope: "col" }, t)))),
    h("tbody", {}, rows)));
}

// -- players ----------------------------------------------------------------------------------

export function showPlayers(main) {
  let closed = false;
  const list = h("div", { id: "players-table" }, h("p", { class: "muted" }, "Loading…"));
  const error = h("p", { class: "error", role: "alert", id: "players-error" });
  const username = h("input", { id: "reg-username", placeholder: "username", autocomplete: "off", "aria-label": "Username" });
  const given = h("input", { id: "reg-given", placeholder: "given name", autocomplete: "off", "aria-label": "Given name" });
  const family = h("input", { id: "reg-family", placeholder: "family name", autocomplete: "off", "aria-label": "Family name" });
  // The bot kinds come from the server (GET /api/options), like the setup screen's.
  const kind = h("select", { id: "reg-kind", "aria-label": "Kind" }, h("option", { value: "" }, "human"));
  get("/api/options").then((options) => {
    if (closed) return;
    kind.append(...options.bot_kinds.map((b) => b.kind === "lookahead"
      ? h("option", { value: "lookahead:3" }, `AI: ${b.title} 3 bot`)
      : h("option", { value: b.kind }, `AI: ${b.title} bot`)));
  }).catch(() => {});

  function draw(players) {
    if (!players.length) {
      list.replaceChildren(h("p", { class: "muted" }, "No registered players yet. Registered players keep statistics; add them to a game from the setup screen."));
      return;
    }
    list.replaceChildren(table(
      [["Username"], ["Name"], ["Kind"], ["Games", 1], ["Won", 1], ["Win %", 1], ["", 0]],
      players.map((p) => h("tr", {},
        h("td", {}, `@${p.username}`), h("td", {}, `${p.given_name} ${p.family_name}`), h("td", {}, kindText(p)),
        h("td", { class: "num" }, p.games_played), h("td", { class: "num" }, p.games_won), h("td", { class: "num" }, `${p.win_percent}%`),
        h("td", {},
          h("button", { type: "button", class: "small", onclick: () => act("reset", p) }, "Reset statistics"), " ",
          h("button", { type: "button", class: "small", onclick: () => act("remove", p) }, "Remove")))),
      "Registered players"));
  }

  async function act(action, p) {
    const ok = await dialog({
      title: action === "remove" ? `Remove @${p.username}?` : `Reset @${p.username}'s statistics?`,
      text: action === "remove" ? "Their past games stay in the history." : "Games played and won go back to 0.",
      buttons: [{ label: action === "remove" ? "Remove" : "Reset", value: true, primary: true }, { label: "Cancel", value: false }],
    });
    if (!ok) return;
    try {
      draw(await post(`/api/players/${action}`, { username: p.username }));
      error.textContent = "";
    } catch (e) { error.textContent = e.message; }
  }

  main.append(
    h("h1", {}, "Players"),
    h("section", { class: "card" }, list),
    h("section", { class: "card", "aria-labelledby": "reg-title" },
      h("h2", { id: "reg-title" }, "Register a player"),
      h("form", { class: "row-form", onsubmit: async (e) => {
        e.preventDefault();
        try {
          await post("/api/players", { username: username.value, given: given.value, family: family.value, bot: kind.value || null });
          username.value = given.value = family.value = "";
          error.textContent = "";
          draw(await get("/api/players"));
        } catch (err) { error.textContent = err.message; }
      } }, username, given, family, kind, h("button", { type: "submit", class: "primary" }, "Register")),
      error));
  get("/api/players").then((p) => { if (!closed) draw(p); }).catch((e) => { error.textContent = e.message; });
  return () => { closed = true; };
}

// -- rankings ---------------------------------------------------------------------------------

export function showRankings(main) {
  let closed = false;
  let order = "desc";
  const body = h("div", { id: "rankings-table" }, h("p", { class: "muted" }, "Loading…"));
  const toggle = h("button", { type: "button", onclick: () => { order = order === "desc" ? "asc" : "desc"; load(); } });
  async function load() {
    toggle.textContent = order === "desc" ? "Show lowest first" : "Show highest first";
    try {
      const players = await get(`/api/rankings?order=${order}&limit=10`);
      if (closed) return;
      body.replaceChildren(players.length ? table(
        [["#", 1], ["Player"], ["Games", 1], ["Win %", 1]],
        players.map((p, i) => h("tr", {}, h("td", { class: "num" }, i + 1),
          h("td", {}, `${p.given_name} ${p.family_name} `, h("span", { class: "muted" }, `@${p.username}${p.ai ? " · AI" : ""}`)),
          h("td", { class: "num" }, p.games_played), h("td", { class: "num" }, `${p.win_percent}%`))),
        "Rankings") : h("p", { class: "muted" }, "No registered players yet."));
    } catch (e) { body.textContent = e.message; }
  }
  main.append(h("h1", {}, "Rankings"),
    h("p", { class: "muted" }, "The top ten registered players by win rate (a player with no games counts as 0 %; ties by username)."),
    h("p", {}, toggle), h("section", { class: "card" }, body));
  load();
  return () => { closed = true; };
}

// -- history and replay -----------------------------------------------------------------------

export function showHistory(main) {
  let closed = false;
  const body = h("div", { id: "history-table" }, h("p", { class: "muted" }, "Loading…"));
  main.append(h("h1", {}, "History"), h("section", { class: "card" }, body));
  get("/api/history?limit=100").then(({ games }) => {
    if (closed) return;
    if (!games.length) { body.replaceChildren(h("p", { class: "muted" }, "No finished games yet.")); return; }
    body.replaceChildren(table(
      [["#", 1], ["Finished"], ["Game"], ["Players"], ["Moves", 1], [""]],
      games.map((g) => h("tr", {},
        h("td", { class: "num" }, g.id),
        h("td", {}, g.finished_at.replace("T", " ").replace(/\+00:00$/, " UTC")),
        h("td", {}, g.description),
        h("td", {}, g.players.map((name, i) => [i ? ", " : "", name === g.winner ? h("strong", {}, `${name} (won)`) : name])),
        h("td", { class: "num" }, g.move_count),
        h("td", {}, h("a", { href: `/history/${g.id}`, "data-link": "" }, "Replay")))),
      "Stored games"));
  }).catch((e) => { body.textContent = e.message; });
  return () => { closed = true; };
}

export function showReplay(main, id) {
  let closed = false;
  let frames = [];
  let at = 0;
  let rows = false;
  let timer = null;
  const title = h("h1", {}, `Game #${id}`);
  const about = h("p", { class: "rules" });
  const board = h("div", { class: "board", id: "replay-board", "aria-label": "Board" });
  const text = h("p", { class: "frame-text", id: "frame-text", "aria-live": "polite" });
  const slider = h("input", { type: "range", min: "0", max: "0", value: "0", "aria-label": "Move", oninput: () => go(Number(slider.value)) });
  const playButton = h("button", { type: "button", onclick: () => toggle() }, "▶ Play");
  const list = h("ol", { class: "log", start: "0" });
  const btn = (label, aria, fn) => h("button", { type: "button", class: "icon", "aria-label": aria, onclick: fn }, label);

  function go(n) {
    at = Math.max(0, Math.min(frames.length - 1, n));
    const f = frames[at];
    slider.value = String(at);
    text.textContent = `${at === 0 ? "Start" : `Move ${f.number}: ${f.text}`}${f.note ? ` — ${f.note}` : ""}`;
    drawBoard(board, { board: at === 0 ? f.board : f.before, takes: null, maxTake: null, live: false, selection: null, cursor: null, values: null, taken: f.taken });
    [...list.children].forEach((li, i) => li.toggleAttribute("aria-current", i === at));
    [...list.children].forEach((li, i) => { li.style.fontWeight = i === at ? "700" : ""; });
  }
  function toggle() {
    if (timer) { clearInterval(timer); timer = null; playButton.textContent = "▶ Play"; return; }
    if (at >= frames.length - 1) go(0);
    playButton.textContent = "❚❚ Pause";
    timer = setInterval(() => { if (at >= frames.length - 1) toggle(); else go(at + 1); }, 1100);
  }
  function keys(e) {
    if (e.target.closest("input, select, textarea")) return;
    if (e.key === "ArrowRight") go(at + 1);
    else if (e.key === "ArrowLeft") go(at - 1);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(frames.length - 1);
    else return;
    e.preventDefault();
  }
  document.addEventListener("keydown", keys);

  main.append(title, about,
    h("div", { class: "layout" },
      h("section", { "aria-label": "Replay" }, board, text,
        h("div", { class: "replay-controls" },
          btn("«", "First position", () => go(0)), btn("◀", "Previous move", () => go(at - 1)), playButton,
          btn("▶", "Next move", () => go(at + 1)), btn("»", "Last position", () => go(frames.length - 1)), slider),
        h("p", { class: "muted" }, "Keys: ← and → step through the moves, Home and End jump.")),
      h("section", { class: "card" }, h("h2", {}, "Moves"), list)));

  get(`/api/history/${id}`).then((replay) => {
    if (closed) return;
    frames = replay.frames;
    rows = replay.rows;
    const g = replay.game;
    about.textContent = `${g.description}. ${g.players.join(", ")}. ${g.winner ? `${g.winner} won` : "No winner"} in ${g.move_count} moves (${g.finished_at.replace("T", " ").replace(/\+00:00$/, " UTC")}).`;
    slider.max = String(frames.length - 1);
    list.replaceChildren(...frames.map((f, i) => h("li", {},
      h("a", { href: "#", onclick: (e) => { e.preventDefault(); go(i); } }, i === 0 ? "Start" : f.text), f.note ? ` — ${f.note}` : "")));
    go(frames.length - 1);
  }).catch((e) => { text.textContent = e.message; });
  return () => {
    closed = true;
    if (timer) clearInterval(timer);
    document.removeEventListener("keydown", keys);
  };
}
