// The registry (players, rankings) and the stored games (history, replay).

import { h, $, fmt, plural, dialog, setTitle, seatColour } from "./dom.js";
import { get, post, del } from "./api.js";
import { drawBoard, selKey } from "./board.js";
import { notFound } from "./router.js";
import { valueStepText, valueHistoryChart, explanationBlocks } from "./game.js";

const kindText = (p) => (p.ai ? `AI (${p.bot} bot)` : "human");

/** A table in a box of its own that scrolls sideways when the table is wider than the screen
 * (never the page): the box is a Tab stop (keys scroll it), shadows at its edges show there is
 * more, and a line above it says so while it does not fit. */
function table(head, rows, caption) {
  const cue = h("p", { class: "scroll-cue muted", hidden: true, "aria-hidden": "true" }, "The table is wider than the screen: scroll it sideways →");
  const wrap = h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": `${caption} (scrolls sideways)` }, h("table", {},
    caption ? h("caption", { class: "visually-hidden" }, caption) : null,
    h("thead", {}, h("tr", {}, head.map(([t, num]) => h("th", { class: num ? "num" : "", scope: "col" }, t)))),
    h("tbody", {}, rows)));
  const fits = () => { if (wrap.isConnected) cue.hidden = wrap.scrollWidth <= wrap.clientWidth + 1; };
  new ResizeObserver(fits).observe(wrap);
  return h("div", { class: "table-box" }, cue, wrap);
}

// -- players ----------------------------------------------------------------------------------

export function showPlayers(main) {
  let closed = false;
  const list = h("div", { id: "players-table" }, h("p", { class: "muted" }, "Loading…"));
  const error = h("p", { class: "error", role: "alert", id: "players-error" });
  const username = h("input", { id: "reg-username", placeholder: "e.g. lee", autocomplete: "off" });
  const given = h("input", { id: "reg-given", placeholder: "e.g. Bruce", autocomplete: "off" });
  const family = h("input", { id: "reg-family", placeholder: "e.g. Lee", autocomplete: "off" });
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
        h("td", { class: "name" }, `@${p.username}`), h("td", { class: "name" }, `${p.given_name} ${p.family_name}`), h("td", {}, kindText(p)),
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
      buttons: [{ label: action === "remove" ? "Remove" : "Reset", value: true, primary: true }, { label: "Cancel", value: false, cancel: true }],
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
      } }, h("label", { for: "reg-username" }, "Username"), username, h("label", { for: "reg-given" }, "Given name"), given,
      h("label", { for: "reg-family" }, "Family name"), family, h("label", { for: "reg-kind" }, "Kind"), kind,
      h("button", { type: "submit", class: "primary" }, "Register")),
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
          h("td", { class: "name" }, `${p.given_name} ${p.family_name} `, h("span", { class: "muted" }, `@${p.username}${p.ai ? " · AI" : ""}`)),
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
  const error = h("p", { class: "error", role: "alert", id: "history-error" });
  main.append(h("h1", {}, "History"), h("section", { class: "card" }, body, error));
  async function remove(g, button) {
    const ok = await dialog({
      title: `Delete game #${g.id}?`, text: "It leaves the history for good (players' statistics stay).",
      buttons: [{ label: "Delete", value: true, primary: true }, { label: "Cancel", value: false, cancel: true }],
    });
    if (!ok || closed) { button.focus(); return; }
    try {
      await del(`/api/history/${g.id}`);
      load();
      $("h1", main).focus();
    } catch (e) { error.textContent = e.message; }
  }
  const load = () => get("/api/history?limit=100").then(({ games }) => {
    if (closed) return;
    if (!games.length) { body.replaceChildren(h("p", { class: "muted" }, "No finished games yet.")); return; }
    body.replaceChildren(table(
      [["#", 1], [""], ["Finished"], ["Game"], ["Players"], ["Moves", 1]],
      games.map((g) => h("tr", {},
        h("td", { class: "num" }, g.id),
        h("td", { class: "open" }, h("a", { href: `/history/${g.id}`, "data-link": "" }, "Replay"), " ",
          h("button", { type: "button", class: "small", "aria-label": `Delete game #${g.id}`, onclick: (e) => remove(g, e.currentTarget) }, "Delete")),
        h("td", {}, g.finished_at.replace("T", " ").replace(/\+00:00$/, " UTC")),
        h("td", { class: "game" }, g.description),
        h("td", { class: "name" }, g.players.map((name, i) => [i ? ", " : "", (g.winners || [g.winner]).includes(name) ? h("strong", {}, `${name} (won)`) : name]),
          g.ending ? h("span", { class: "muted" }, ` · ${g.ending}`) : null),
        h("td", { class: "num" }, fmt(g.move_count)))),
      "Stored games"));
  }).catch((e) => { body.textContent = e.message; });
  $("h1", main).setAttribute("tabindex", "-1");
  load();
  return () => { closed = true; };
}

export function showReplay(main, id) {
  setTitle(`Replay of game #${id}`);
  let closed = false;
  let frames = [];
  let shape = "one-pile"; // as in play: moves on several piles are listed under the piles
  let words; // what the piles are and what is on them (Staircase Nim: steps of coins)
  let at = 0;
  let timer = null;
  let players = [];
  let history = [];
  let seq = 0;
  const cache = new Map(); // move number -> analysis
  // a private game is read with the id it had in play (the game page's link gives it)
  const key = new URLSearchParams(location.search).get("key");
  const withKey = key ? `key=${encodeURIComponent(key)}` : "";
  const title = h("h1", {}, `Game #${id}`);
  const about = h("p", { class: "rules" });
  const board = h("div", { class: "board", id: "replay-board", "aria-label": "Board" });
  const text = h("p", { class: "frame-text", id: "frame-text", "aria-live": "polite" });
  const slider = h("input", { type: "range", min: "0", max: "0", value: "0", "aria-label": "Move", oninput: () => go(Number(slider.value)) });
  const playButton = h("button", { type: "button", onclick: () => toggle() }, "▶ Play");
  const list = h("ol", { class: "log", start: "0", id: "replay-moves" });
  const valuesToggle = h("input", { type: "checkbox", id: "replay-values", checked: true, onchange: () => go(at) });
  const verdict = h("p", { class: "verdict", id: "replay-verdict" });
  const explanation = h("div", { id: "replay-explanation" });
  const valueList = h("ol", { class: "vh-list", start: "0", id: "replay-history" });
  const valueChart = h("div", { id: "replay-chart" });
  const btn = (label, aria, fn) => h("button", { type: "button", class: "icon", "aria-label": aria, onclick: fn }, label);

  async function analysisAt(n) {
    if (cache.has(n)) return cache.get(n);
    const a = await get(`/api/history/${id}/analysis?at=${n}${withKey ? "&" + withKey : ""}`);
    cache.set(n, a);
    if (!history.length) { history = a.history; drawHistory(); }
    return a;
  }

  function valuesOf(a) {
    if (!a || !valuesToggle.checked) return null;
    const map = new Map();
    for (const m of a.moves) map.set(selKey(m), m);
    return map;
  }

  function drawHistory() {
    valueChart.replaceChildren(...(history.length > 1
      ? [valueHistoryChart(history, at, players, (i) => go(i), valueList.clientWidth || valueChart.clientWidth || 340)] : []));
    valueList.style.paddingLeft = `${String(history.length).length + 2}ch`;
    valueList.replaceChildren(...history.map((s, i) => h("li", { class: [s.mistake ? "mistake" : "", i === at ? "current" : ""].join(" ").trim(), "aria-current": i === at ? "step" : null },
      h("button", { type: "button", class: "step", onclick: () => go(i) }, valueStepText(s, players)),
      s.mistake ? h("span", { class: "mistake-tag" }, " — a mistake") : null)));
    for (const li of list.children) {
      const i = Number(li.dataset.frame);
      const mistake = history[i] && history[i].mistake;
      if (mistake && !li.querySelector(".mistake-tag")) li.append(h("span", { class: "mistake-tag" }, " — a mistake"));
    }
  }

  async function go(n) {
    at = Math.max(0, Math.min(frames.length - 1, n));
    const f = frames[at];
    slider.value = String(at);
    text.textContent = `${at === 0 ? "Start" : `Move ${f.number}: ${f.text}`}${f.note ? ` — ${f.note}` : ""}`;
    // The position before move `at` with the move marked; at the start, the start itself.
    const show = (values) => drawBoard(board, { board: at === 0 ? f.board : f.before, takes: null, maxTake: null, live: false,
      shape, words, selection: null, cursor: null, values, taken: f.taken });
    show(null);
    [...list.children].forEach((li, i) => li.toggleAttribute("aria-current", i === at));
    const current = list.children[at];
    if (current) {
      const top = current.offsetTop - list.offsetTop;
      if (top < list.scrollTop || top + current.offsetHeight > list.scrollTop + list.clientHeight) {
        list.scrollTop = Math.max(0, top - list.clientHeight / 2);
      }
    }
    drawHistory();
    const mine = ++seq;
    try {
      // the values of the moves from the position shown: the position before move `at`
      const a = await analysisAt(Math.max(0, at - 1));
      if (closed || mine !== seq) return;
      if (at === 0) {
        const start = await analysisAt(0);
        if (closed || mine !== seq) return;
        verdict.textContent = start.available ? start.verdict : start.note;
        explanation.replaceChildren(...(start.available ? explanationBlocks(start) : []));
        show(valuesOf(start));
        return;
      }
      verdict.textContent = a.available ? `Before this move: ${a.verdict}` : a.note;
      explanation.replaceChildren(...(a.available ? explanationBlocks(a) : []));
      show(valuesOf(a));
    } catch (e) {
      if (!closed && mine === seq) verdict.textContent = e.message;
    }
  }
  function toggle() {
    if (timer) { clearInterval(timer); timer = null; playButton.textContent = "▶ Play"; return; }
    if (at >= frames.length - 1) go(0);
    playButton.textContent = "❚❚ Pause";
    timer = setInterval(() => { if (at >= frames.length - 1) toggle(); else go(at + 1); }, 1100);
  }
  function keys(e) {
    if (e.target.closest("input, select, textarea, dialog")) return;
    if (e.key === "ArrowRight") go(at + 1);
    else if (e.key === "ArrowLeft") go(at - 1);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(frames.length - 1);
    else return;
    e.preventDefault();
  }

  get(`/api/history/${id}${withKey ? "?" + withKey : ""}`).then((replay) => {
    if (closed) return;
    frames = replay.frames;
    shape = replay.move_shape;
    words = replay.words;
    const g = replay.game;
    players = g.players.map((name, seat) => ({ name, seat }));
    document.addEventListener("keydown", keys);
    main.append(title, about,
      h("div", { class: "layout" },
        h("section", { "aria-label": "Replay" }, board, text,
          h("div", { class: "replay-controls" },
            btn("«", "First position", () => go(0)), btn("◀", "Previous move", () => go(at - 1)), playButton,
            btn("▶", "Next move", () => go(at + 1)), btn("»", "Last position", () => go(frames.length - 1)), slider),
          h("p", { class: "muted" }, "Keys: ← and → step through the moves, Home and End jump."),
          h("section", { class: "card learn" }, h("h2", {}, "Analysis"),
            h("label", { class: "toggle" }, valuesToggle, "Show move values"),
            h("p", { class: "legend" }, h("span", { class: "l-win" }, "winning move (filled)"), h("span", { class: "l-lose" }, "losing move (hollow)")),
            verdict, explanation, h("h3", {}, "Value history"), valueChart, valueList)),
        h("section", { class: "card" }, h("h2", {}, "Moves"), list)));
    const result = g.ending === "abandoned" ? "Abandoned, no winner, after"
      : g.ending === "resigned" ? `${(g.winners || []).join(" and ")} won by resignation after`
      : g.winner ? `${g.winner} won in` : "No winner in";
    about.textContent = `${g.description}. ${g.players.join(", ")}. ${result} ${plural(g.move_count, "move")} (${g.finished_at.replace("T", " ").replace(/\+00:00$/, " UTC")}).`;
    slider.max = String(frames.length - 1);
    list.style.paddingLeft = `${String(frames.length).length + 2.2}ch`;
    list.replaceChildren(...frames.map((f, i) => h("li", { dataset: { frame: String(i) } },
      h("a", { href: "#", onclick: (e) => { e.preventDefault(); go(i); } }, i === 0 ? "Start" : f.text), f.note ? ` — ${f.note}` : "")));
    go(frames.length - 1);
  }).catch((e) => {
    if (closed) return;
    if (e.status === 404 || e.status === 422) notFound(main, "No such game", `There is no stored game #${id}: ${e.message}.`);
    else main.replaceChildren(title, h("p", { class: "error" }, e.message));
  });
  return () => {
    closed = true;
    if (timer) clearInterval(timer);
    document.removeEventListener("keydown", keys);
  };
}
