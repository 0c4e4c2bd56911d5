// Setting up a game in one screen (the main menu and its options): players, piles, rules, who
// starts. Every change is checked by the server (the core's rules and messages): Play stays
// disabled, with the reason shown, until the setup is valid.

import { h, $, seatColour, fmt, plural } from "./dom.js";
import { get, post } from "./api.js";
import { lastSetup, saveSetup, saveToken, saveInvites, tokensFor, saveRandomFirst, saveOwnerToken, myUnfinishedGames } from "./local.js";
import { navigate } from "./router.js";

// The games, bot kinds and default end positions come from the server (/api/options, built
// from the core's game registry), so adding a game there adds it here.

const DEFAULT_SETUP = {
  players: [
    { name: "You", kind: "human", error: 0, here: true },
    { name: "Hal", kind: "perfect", error: 0 },
  ],
  piles: ["3", "4", "5"],
  game: "nim",
  params: {},
  misere: false,
  ends: [],
  first: "first",
  analysis: true,
  public: false,
};

/** "2, 2,2" -> "[2,2,2]": heap sizes separated by commas, spaces or dots; order and empty heaps
 * do not matter. Returns {end} or {problem} (why it is not an end position one can add). */
function canonicalEnd(text) {
  const t = text.trim().replace(/^\[|\]$/g, "");
  if (!/^[\d\s,.;]+$/.test(t) || !/\d/.test(t)) {
    return { problem: `"${text.trim()}" is not an end position: write heap sizes like 2,2,2 or 1 2 3` };
  }
  const heaps = (t.match(/\d+/g) || []).map((d) => BigInt(d)).filter((n) => n > 0n);
  if (!heaps.length) {
    return { problem: `"${text.trim()}" has no heaps: the empty board always ends the game already` };
  }
  heaps.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { end: `[${heaps.join(",")}]` };
}

const toInt = (digits) => {
  const big = BigInt(digits);
  return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
};

function kindLabel(p) {
  if (p.username) return p.bot ? `registered AI (${p.bot})` : "registered player";
  if (p.kind === "human") return "human";
  let text = p.kind === "lookahead" ? `look-ahead ${p.depth || 2} bot` : `${p.kind} bot`;
  if (Number(p.error)) text += `, ${p.error}% errors`;
  return text;
}

export function showSetup(main) {
  const saved = lastSetup();
  const s = saved && Array.isArray(saved.players) ? { ...DEFAULT_SETUP, ...saved } : structuredClone(DEFAULT_SETUP);
  let registered = [];
  let checkSeq = 0;
  let checkTimer = null;
  let closed = false;

  let games = [];         // the registry's entries (GET /api/options)
  let defaultEnds = [];   // the classic end positions, as "[2,2,2]"
  const boards = new Map(); // game text -> "piles" | "rows", as the core reads it (GET /api/game)
  s.params = { ...(s.params || {}) };
  for (const old of ["octal", "subtraction"]) if (typeof s[old] === "string" && !(old in s.params)) s.params[old] = s[old];
  const entry = () => games.find((g) => g.name === s.game);
  const param = () => {
    const e = entry();
    return e && e.parameter ? (s.params[e.name] ?? e.example) : "";
  };
  const gameName = () => (param() ? `${s.game}:${param().trim()}` : s.game);
  const rowsGame = () => {
    const e = entry();
    if (!e) return false;
    if (e.board) return e.board === "rows";
    const known = boards.get(gameName());
    if (known === undefined) learnBoard(gameName());
    return known === "rows";
  };
  function learnBoard(text) {
    boards.set(text, null);
    get(`/api/game?name=${encodeURIComponent(text)}`).then((kind) => {
      boards.set(text, kind.board);
      if (!closed && gameName() === text) changed(false);
    }).catch(() => {});
  }
  const payload = () => ({
    players: s.players.map((p) => ({
      name: p.name,
      kind: p.username ? "human" : p.kind,
      depth: p.kind === "lookahead" && p.depth ? Number(p.depth) : null,
      error: p.kind === "human" || p.username ? 0 : Number(p.error) || 0,
      username: p.username || null,
    })),
    piles: s.piles.map(toInt),
    game: gameName(),
    misere: s.misere,
    end_positions: s.ends,
    first: s.first,
    analysis: s.analysis !== false,
    public: s.public === true,
  });

  // -- players ---------------------------------------------------------------------------------
  const playersList = h("ol", { class: "players", "aria-label": "Players in turn order" });
  const humanName = h("input", { id: "human-name", placeholder: "e.g. Ann", maxlength: "40", autocomplete: "off" });
  const botName = h("input", { id: "bot-name", placeholder: "e.g. Hal", maxlength: "40", autocomplete: "off" });
  const botKind = h("select", { id: "bot-kind", "aria-label": "Bot kind" });
  const depth = h("input", { id: "bot-depth", type: "number", min: "1", value: "2", "aria-label": "Look-ahead depth", style: "width:4.5rem", hidden: true });
  const errorOut = h("output", { for: "bot-error" }, "0%");
  const errorRate = h("input", { id: "bot-error", type: "range", min: "0", max: "100", step: "5", value: "0", "aria-label": "Error rate",
    oninput: () => { errorOut.textContent = `${errorRate.value}%`; } });
  botKind.addEventListener("change", () => { depth.hidden = botKind.value !== "lookahead"; });
  const registeredSelect = h("select", { id: "registered", "aria-label": "Registered player" });
  const registeredForm = h("form", { class: "row-form", hidden: true, onsubmit: (e) => {
    e.preventDefault();
    const r = registered.find((p) => p.username === registeredSelect.value);
    if (!r) return;
    s.players.push({ name: `${r.given_name} ${r.family_name}`, kind: r.ai ? "perfect" : "human", username: r.username, bot: r.bot, here: true, error: 0 });
    changed();
  } }, registeredSelect, h("button", { type: "submit" }, "Add registered player"));

  const firstChoices = h("fieldset", {},
    h("legend", {}, "Who starts"),
    [["first", "the first player listed"], ["random", "a random player"], ["auto", "whoever can win (two players)"]].map(([v, t]) =>
      h("label", {}, h("input", { type: "radio", name: "first", value: v, checked: s.first === v,
        onchange: () => { s.first = v; changed(); } }), " ", t)));

  const playersCard = h("section", { class: "card", "aria-labelledby": "players-title" },
    h("h2", { id: "players-title" }, "Players"),
    playersList,
    h("h3", { class: "sub" }, "Add a person"),
    h("form", { class: "row-form", onsubmit: (e) => {
      e.preventDefault();
      s.players.push({ name: humanName.value.trim() || "Player", kind: "human", error: 0, here: true });
      humanName.value = "";
      changed();
    } }, h("label", { for: "human-name" }, "Name"), humanName, h("button", { type: "submit", id: "add-human" }, "Add player")),
    h("form", { class: "row-form", onsubmit: (e) => {
      e.preventDefault();
      s.players.push({ name: botName.value.trim(), kind: botKind.value, depth: botKind.value === "lookahead" ? depth.value : null, error: Number(errorRate.value) });
      botName.value = "";
      changed();
    } }, h("h3", { class: "sub", style: "flex-basis:100%" }, "Add a bot"), h("label", { for: "bot-name" }, "Name"), botName,
    h("label", { for: "bot-kind" }, "Kind"), botKind, depth,
    h("span", { class: "slider" }, h("label", { for: "bot-error" }, "error rate"), errorRate, errorOut),
    h("button", { type: "submit", id: "add-bot" }, "Add bot")),
    registeredForm,
    h("div", { style: "margin-top:.6rem" }, firstChoices));

  function drawPlayers() {
    playersList.replaceChildren(...s.players.map((p, i) => {
      const name = p.name || `${p.kind[0].toUpperCase()}${p.kind.slice(1)} bot`;
      const human = p.kind === "human" && !(p.username && p.bot);
      return h("li", {},
        h("span", { class: "seat-dot", style: `background:${seatColour(i)}`, "aria-hidden": "true" }),
        h("span", { class: "who" }, h("strong", {}, name), " ", h("span", { class: "kind" }, kindLabel(p))),
        human ? h("label", { class: "here", title: "Unticked: this player gets a share link to play from their own browser" },
          h("input", { type: "checkbox", checked: p.here !== false, onchange: (e) => { p.here = e.target.checked; changed(false); } }),
          "plays here") : null,
        h("button", { type: "button", class: "icon small", "aria-label": `Move ${name} up`, disabled: i === 0,
          onclick: () => { [s.players[i - 1], s.players[i]] = [s.players[i], s.players[i - 1]]; changed(); } }, "↑"),
        h("button", { type: "button", class: "icon small", "aria-label": `Move ${name} down`, disabled: i === s.players.length - 1,
          onclick: () => { [s.players[i + 1], s.players[i]] = [s.players[i], s.players[i + 1]]; changed(); } }, "↓"),
        h("button", { type: "button", class: "icon small", "aria-label": `Remove ${name}`,
          onclick: () => { s.players.splice(i, 1); changed(); } }, "✕"));
    }));
    if (!s.players.length) playersList.append(h("li", { class: "muted" }, "No players yet: add two or more."));
  }

  // -- piles -----------------------------------------------------------------------------------
  const pilesTitle = h("h2", { id: "piles-title" }, "Piles");
  const pilesList = h("ul", { class: "chips", "aria-label": "Piles" });
  const pileSize = h("input", { id: "pile-size", inputmode: "numeric", placeholder: "Size, e.g. 7", autocomplete: "off", "aria-label": "Size of a new pile" });
  const pileError = h("p", { class: "error", role: "alert" });
  const addPileButton = h("button", { type: "submit", id: "add-pile" }, "Add pile");
  const pilesCard = h("section", { class: "card", "aria-labelledby": "piles-title" },
    pilesTitle, pilesList,
    h("form", { class: "row-form", onsubmit: (e) => {
      e.preventDefault();
      const text = pileSize.value.replace(/[\s,_]/g, "");
      if (!text) return;
      if (!/^\d+$/.test(text)) {
        pileError.textContent = "Type the size as digits only, e.g. 7.";
        return;
      }
      if (BigInt(text) === 0n) {
        pileError.textContent = rowsGame() ? "A row needs at least one stone." : "A pile needs at least one match.";
        return;
      }
      pileError.textContent = "";
      s.piles.push(BigInt(text).toString());
      pileSize.value = "";
      changed();
    } }, h("label", { for: "pile-size" }, "Size"), pileSize, addPileButton,
    h("button", { type: "button", id: "random-piles", onclick: () => {
      const rnd = (a, b) => a + Math.floor(Math.random() * (b - a + 1));
      s.piles = rowsGame()
        ? Array.from({ length: rnd(1, 3) }, () => String(rnd(4, 12)))
        : Array.from({ length: rnd(3, 5) }, () => String(rnd(1, 9)));
      changed();
    } }, "Random piles")),
    pileError);

  function drawPiles() {
    const rows = rowsGame();
    pilesTitle.textContent = rows ? "Rows of stones" : "Piles";
    addPileButton.textContent = rows ? "Add row" : "Add pile";
    pilesList.setAttribute("aria-label", rows ? "Rows" : "Piles");
    pilesList.replaceChildren(...s.piles.map((n, i) =>
      h("li", { class: "chip" }, `${fmt(BigInt(n))}`,
        h("button", { type: "button", "aria-label": `Remove ${rows ? "row" : "pile"} ${i + 1} (${n})`,
          onclick: () => { s.piles.splice(i, 1); changed(); } }, "✕"))));
    if (!s.piles.length) pilesList.append(h("li", { class: "muted" }, "None yet."));
  }

  // -- rules -----------------------------------------------------------------------------------
  const gameKind = h("select", { id: "game-kind", "aria-label": "Game" });
  const parameter = h("input", { id: "game-parameter", "aria-label": "Game parameter", style: "width:9rem", hidden: true });
  gameKind.addEventListener("change", () => {
    s.game = gameKind.value;
    const e = entry(); // a game played on a fixed number of piles gets its example's piles
    if (e && e.piles && s.piles.length !== e.piles) s.piles = e.start.map(String);
    changed();
  });
  parameter.addEventListener("input", () => { s.params[s.game] = parameter.value; changed(); });
  const endsList = h("ul", { class: "chips", "aria-label": "End positions" });
  const endText = h("input", { id: "end-text", placeholder: "e.g. 2,2,2", autocomplete: "off" });
  const endError = h("p", { class: "error", role: "alert", id: "end-error" });
  const carried = h("p", { class: "note", id: "carried", hidden: true });
  const analysisBox = h("input", { type: "checkbox", id: "allow-analysis", checked: s.analysis !== false,
    onchange: () => { s.analysis = analysisBox.checked; changed(); } });
  const publicBox = h("input", { type: "checkbox", id: "public-game", checked: s.public === true,
    onchange: () => { s.public = publicBox.checked; changed(); } });
  // known once the server's options arrive: until then a click would add nothing
  const addDefaults = h("button", { type: "button", id: "add-defaults", disabled: true, onclick: () => {
    for (const e of defaultEnds) if (!s.ends.includes(e)) s.ends.push(e);
    changed();
  } }, "Add defaults");
  const rulesCard = h("section", { class: "card", "aria-labelledby": "rules-title" },
    h("h2", { id: "rules-title" }, "Rules"),
    h("div", { class: "row-form" }, h("label", { for: "game-kind" }, "Game"), gameKind, parameter),
    h("fieldset", {},
      h("legend", {}, "Who moves into an end position"),
      h("label", {}, h("input", { type: "radio", name: "play", value: "normal", checked: !s.misere, onchange: () => { s.misere = false; changed(); } }), " wins (normal play)"),
      h("label", {}, h("input", { type: "radio", name: "play", value: "misere", checked: s.misere, onchange: () => { s.misere = true; changed(); } }), " loses (misère)")),
    h("h3", {}, "End positions"),
    endsList,
    h("form", { class: "row-form", onsubmit: (e) => {
      e.preventDefault();
      const text = endText.value.trim();
      if (!text) return;
      const { end, problem } = canonicalEnd(text);
      if (problem) { endError.textContent = `${problem}.`; return; }
      endError.textContent = "";
      if (!s.ends.includes(end)) s.ends.push(end);
      endText.value = "";
      changed();
    } }, h("label", { for: "end-text" }, "Heaps"), endText, h("button", { type: "submit", id: "add-end" }, "Add end position"),
    addDefaults),
    endError,
    h("h3", {}, "Learning"),
    h("label", { class: "toggle" }, analysisBox, "Hints and move values during play in games between people"),
    h("p", { class: "muted" }, "Always there after the game, in replays and in games against bots."),
    h("h3", {}, "Watching"),
    h("label", { class: "toggle" }, publicBox, "List this game among the games in play, for anyone to watch"),
    h("p", { class: "muted" }, "Otherwise only those given its link can watch it."));

  function drawRules() {
    const e = entry();
    parameter.hidden = !(e && e.parameter);
    if (e && e.parameter) {
      parameter.setAttribute("aria-label", `${e.title}: ${e.parameter}`);
      parameter.placeholder = e.example;
      if (document.activeElement !== parameter) parameter.value = param();
    }
    endsList.replaceChildren(
      h("li", { class: "chip fixed", title: "The empty board always ends the game" }, "[ ] empty board"),
      ...s.ends.map((e, i) => h("li", { class: "chip" }, e,
        h("button", { type: "button", "aria-label": `Remove end position ${e}`, onclick: () => { s.ends.splice(i, 1); changed(); } }, "✕"))));
  }

  // -- go --------------------------------------------------------------------------------------
  const reason = h("p", { class: "reason", id: "setup-reason", role: "status" }, "Checking…");
  const play = h("button", { class: "primary", id: "play", type: "button", disabled: true, onclick: start }, "Play!");
  const goCard = h("section", { class: "card wide go", "aria-label": "Start" }, play, reason, carried);
  const inPlay = h("section", { class: "card wide", "aria-labelledby": "inplay-title", hidden: true },
    h("h2", { id: "inplay-title" }, "Games in play"), h("ul", { class: "in-play" }));

  // The unfinished games this browser plays a seat of (a client may have only so many in play:
  // this is where to finish one).
  const mineList = myUnfinishedGames();
  const yours = mineList.length ? h("section", { class: "card wide", "aria-labelledby": "yours-title", id: "your-games" },
    h("h2", { id: "yours-title" }, `Your games in play (${mineList.length})`),
    h("ul", { class: "in-play" }, mineList.slice(0, 50).map((g) => h("li", {},
      h("a", { href: `/game/${g.id}`, "data-link": "" }, g.players ? g.players.join(" vs ") : `Game ${g.id}`),
      g.description ? ` — ${g.description}` : "", g.status ? `; ${g.status}` : "",
      g.moves !== undefined ? ` (${plural(g.moves, "move")})` : "")))) : null;

  main.append(
    h("h1", { class: "visually-hidden" }, "Set up a game"),
    h("div", { class: "setup" }, playersCard, h("div", {}, pilesCard, rulesCard), goCard, yours, inPlay));

  // What a new game keeps from the last setup beyond players and piles: said next to Play.
  const fresh = !saved;
  const loaded = { ends: s.ends.join(" "), misere: s.misere, first: s.first, analysis: s.analysis };
  function drawCarried() {
    // only what came from the last setup and is still as it came (changes here are the user's)
    const kept = [];
    if (s.ends.length && s.ends.join(" ") === loaded.ends) kept.push(`extra end positions ${s.ends.join(", ")}`);
    if (s.misere && loaded.misere) kept.push("misère play");
    if (s.first !== "first" && s.first === loaded.first) kept.push(s.first === "random" ? "a random first player" : "the winning side starts");
    if (s.analysis === false && loaded.analysis === false) kept.push("no hints during play between people");
    carried.hidden = fresh || !kept.length;
    carried.replaceChildren(`Kept from your last setup: ${kept.join("; ")}. `,
      h("button", { type: "button", class: "small", id: "clear-carried", onclick: () => {
        s.ends = []; s.misere = false; s.first = "first"; s.analysis = true;
        for (const r of $$radio("play")) r.checked = r.value === "normal";
        for (const r of $$radio("first")) r.checked = r.value === "first";
        analysisBox.checked = true;
        changed();
      } }, "Back to the usual rules"));
  }
  const $$radio = (name) => [...main.querySelectorAll(`input[name="${name}"]`)];

  function changed(recheck = true) {
    saveSetup(s);
    drawCarried();
    drawPlayers();
    drawPiles();
    drawRules();
    if (recheck) scheduleCheck();
  }

  function scheduleCheck() {
    play.disabled = true;
    clearTimeout(checkTimer);
    checkTimer = setTimeout(check, 150);
  }

  /** What the page can say without asking the server (it reads requests strictly). */
  function missing() {
    if (s.players.length < 2) return "a game needs at least two players";
    if (!s.piles.length) return "a game needs at least one pile";
    return null;
  }

  async function check() {
    const seq = ++checkSeq;
    const lacking = missing();
    if (lacking) {
      play.disabled = true;
      reason.className = "reason error";
      reason.textContent = `Cannot play yet: ${lacking}`;
      return;
    }
    try {
      const result = await post("/api/setup/check", payload());
      if (seq !== checkSeq || closed) return;
      play.disabled = false;
      reason.className = "reason ok";
      reason.textContent = `${result.description}. Players: ${result.players.join(", ")}.`;
    } catch (e) {
      if (seq !== checkSeq || closed) return;
      play.disabled = true;
      reason.className = "reason error";
      reason.textContent = `Cannot play yet: ${e.message}`;
    }
  }

  async function start() {
    play.disabled = true;
    reason.className = "reason";
    reason.textContent = "Starting…";
    try {
      const created = await post("/api/games", payload());
      const id = created.state.id;
      const invites = {};
      created.seats.forEach((seat) => {
        const p = s.players[seat.seat];
        if (p && p.here === false) invites[seat.seat] = seat.link;
        else saveToken(id, seat.seat, seat.token);
      });
      saveInvites(id, invites);
      if (created.owner_token) saveOwnerToken(id, created.owner_token);
      if (s.first === "random") saveRandomFirst(id);
      navigate(`/game/${id}`);
    } catch (e) {
      play.disabled = false;
      reason.className = "reason error";
      reason.textContent = `Cannot play: ${e.message}`;
    }
  }

  changed();
  get("/api/options").then((options) => {
    if (closed) return;
    games = options.games;
    defaultEnds = options.default_end_positions.map((e) => `[${e.join(",")}]`);
    addDefaults.disabled = false;
    if (!entry()) s.game = games[0].name;
    gameKind.replaceChildren(...games.map((g) =>
      h("option", { value: g.name, selected: s.game === g.name }, g.parameter ? `${g.title}…` : g.title)));
    botKind.replaceChildren(...options.bot_kinds.map((b) => h("option", { value: b.kind }, b.title)));
    const look = options.bot_kinds.find((b) => b.kind === "lookahead");
    if (look && look.max_depth) depth.max = String(look.max_depth);
    changed();
    registered = options.registered || [];
    registeredForm.hidden = !registered.length;
    registeredSelect.replaceChildren(...registered.map((p) =>
      h("option", { value: p.username }, `@${p.username} — ${p.given_name} ${p.family_name}${p.ai ? ` (AI, ${p.bot})` : ""}`)));
  }).catch(() => {});
  get("/api/games").then((list) => {
    if (closed || !list.games.length) return;
    inPlay.hidden = false;
    $(".in-play", inPlay).replaceChildren(...list.games.slice(0, 20).map((g) => {
      const mine = Object.keys(tokensFor(g.id)).length > 0;
      return h("li", {}, h("a", { href: `/game/${g.id}`, "data-link": "" }, `${g.players.join(" vs ")}`),
        ` — ${g.description}; ${g.status} (${plural(g.move_count, "move")})${mine ? " · you play" : ""}`);
    }));
  }).catch(() => {});
  return () => { closed = true; clearTimeout(checkTimer); };
}
