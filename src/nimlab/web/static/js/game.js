// Playing a game (the match board, announcements and victory screens), learning from it, and
// playing together: the server owns the game; this page sends move requests and shows the states
// it receives (from its own requests and, live, over a WebSocket). A state holds a page of turns
// only (`turns_from` says where they start: the new moves, or the last ones): this page keeps
// every turn it has seen and fetches the pages it lacks (`?since=N`). Hints and analyses that
// are worked out after their request was answered are pushed over the WebSocket.

import { h, $, announce, fmt, plural, seatColour, dialog, setTitle, setOnline } from "./dom.js";
import { get, post, del, parseJSON } from "./api.js";
import { tokensFor, saveToken, invitesFor, animationMs, savedAs, saveSavedAs, randomFirst, ownerTokenFor, saveGameNote } from "./local.js";
import { drawBoard, selKey, describeSelection, selectionValue, coarse, partsOf } from "./board.js";
import { navigate, notFound } from "./router.js";

const SVG = "http://www.w3.org/2000/svg";
const capitalWord = (text) => text.charAt(0).toUpperCase() + text.slice(1);

function icon(paths, colour) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 48 48");
  svg.setAttribute("width", "56");
  svg.setAttribute("height", "56");
  for (const d of paths) {
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", d);
    path.setAttribute("fill", colour);
    svg.append(path);
  }
  return svg;
}
const trophy = () => icon([
  "M14 6h20v10a10 10 0 0 1-20 0z",
  "M8 8h6v4h-2a2 2 0 0 0 0 4h3v4h-3a6 6 0 0 1 0-12zM40 8h-6v4h2a2 2 0 0 1 0 4h-3v4h3a6 6 0 0 0 0-12z",
  "M21 26h6v8h-6zM15 36h18v6H15z",
], "#e0a100");
/** Reconnecting to a server that cannot be reached: first after this long, then twice as long
 * each time, at most RETRY_MAX_MS. */
const RETRY_FIRST_MS = 400;
const RETRY_MAX_MS = 5000;
/** In a game of bots only, a move's animation never takes longer than this (the server's pace
 * between bot moves is longer: 0.8 s), so watchers never fall behind. */
const BOTS_ONLY_ANIMATION_MS = 500;
/** News nobody has to answer (a bot eliminated in a game of bots) closes after this long. */
const NEWS_MS = 2500;

/** A press this soon after a press on another control is taken for the second half of a double
 * click or tap that landed elsewhere (the layout moved under it): it opens no confirmation. */
const DOUBLE_PRESS_MS = 600;

const cross = () => icon(["M12 8l12 12 12-12 4 4-12 12 12 12-4 4-12-12-12 12-4-4 12-12L8 12z"], "#c0392b");

export function showGame(main, gameId) {
  // A share link carries the seat's token after "#" (never sent to the server, so no proxy logs
  // it; links of older versions had it in the query): keep it here, and take it out of the
  // address bar.
  const fragment = new URLSearchParams(location.hash.slice(1));
  const params = fragment.has("token") ? fragment : new URLSearchParams(location.search);
  if (params.has("seat") && params.has("token")) {
    saveToken(gameId, params.get("seat"), params.get("token"));
    history.replaceState(null, "", `/game/${gameId}`);
  }
  const tokens = tokensFor(gameId);
  const invites = invitesFor(gameId);
  // The replay of this game once stored: a private game is read with the id it had in play.
  const replayPath = (id) => `/history/${id}?key=${encodeURIComponent(gameId)}`;

  let shown = null; // the state on screen
  let latest = null; // a newer state waiting to be shown
  let pumping = false;
  let closed = false;
  let selection = null;
  let cursor = null;
  let animating = null; // {board, taken} while a move is played out
  let sending = false;
  let analysis = null;
  let analysisFor = -1;
  const mine = new Set(); // numbers of the moves made from this page
  let socket = null;
  let retry = null;
  let retryMs = RETRY_FIRST_MS; // the wait before the next attempt to reconnect (it grows)
  let paused = ""; // why the server could not send live updates now, as shown
  let playing = null; // the state whose new moves are being played out
  let wake = null; // cuts the animation under way short (a newer move is waiting)
  let moving = null; // the seat highlighted while moves are played out (null: the state's)
  let looking = null; // the value-history step looked at (null: the game as it is)
  let past = null; // the analysis of the position looked at
  let hintFor = -1; // the move count the hint shown (or awaited) is for
  let known = []; // every turn from move 1 that this page has seen, in order
  let knownTakebacks = 0;
  let arrivals = Promise.resolve(); // states are completed and shown in the order they arrive
  let logged = 0; // turns in the move list
  let loggedTakebacks = 0;
  let lastPile = null; // the pile or row that had the keyboard focus

  // -- the page --------------------------------------------------------------------------------
  const status = h("h1", { class: "status", id: "status", "aria-live": "polite" }, "Loading…");
  const rules = h("p", { class: "rules", id: "rules" });
  const seats = h("ol", { class: "seats", id: "seats", "aria-label": "Players" });
  const board = h("div", { class: "board", id: "board", "aria-label": "Board" });
  const selectionLine = h("p", { class: "selection", id: "selection", "aria-live": "polite" });
  const error = h("p", { class: "error", id: "error", role: "alert" });
  const finishButton = h("button", { class: "primary", id: "finish", type: "button", onclick: () => finish() }, "Finish");
  const resetButton = h("button", { id: "reset", type: "button", onclick: () => reset() }, "Reset");
  const typed = h("input", { id: "typed-move", autocomplete: "off", "aria-label": "Type a move", placeholder: "e.g. 2 3" });
  const typedPlay = h("button", { type: "submit" }, "Play");
  const typedForm = h("form", { onsubmit: (e) => { e.preventDefault(); typedMove(); } }, typed, typedPlay);
  const controls = h("div", { class: "controls" }, finishButton, resetButton, typedForm);
  const stepper = h("div", { class: "stepper", id: "stepper", hidden: true });
  // The buttons that end or delete a game ask first, and never for the second click of a double
  // click (or tap): a double click on Finish plays one move, and what moved under the pointer
  // meanwhile must not open "Resign this game?". (Keys always reach them: `detail` is 0.)
  let press = { at: -Infinity, el: null, stray: false };
  const onPress = (e) => {
    const now = performance.now();
    const el = e.target.closest("button, input, [data-pile]");
    press = { at: now, el, stray: now - press.at < DOUBLE_PRESS_MS && press.el === finishButton && el !== finishButton };
  };
  main.addEventListener("pointerdown", onPress, true);
  const asking = (fn) => (e) => { if (e.detail > 1 || (e.detail && press.stray)) return; fn(); };
  const undoButton = h("button", { type: "button", id: "undo", onclick: (e) => { if (e.detail < 2) act("undo"); } }, "Take back");
  const resignButton = h("button", { type: "button", id: "resign", onclick: asking(() => act("resign")) }, "Resign");
  const abandonButton = h("button", { type: "button", id: "abandon", onclick: asking(() => act("abandon")) }, "Abandon");
  const ownerToken = ownerTokenFor(gameId);
  const stopButton = h("button", { type: "button", id: "stop", onclick: asking(() => stopGame()) }, "Stop");
  const deleteButton = h("button", { type: "button", id: "delete", onclick: asking(() => removeGame()) }, "Delete this game");
  const actions = h("div", { class: "actions-row", id: "game-actions" }, undoButton, resignButton, abandonButton, stopButton, deleteButton);
  const firstNote = h("p", { class: "note", id: "first-note", hidden: true });
  const lookingBar = h("p", { class: "looking", id: "looking", hidden: true });
  const last = h("p", { class: "last", id: "last" });
  const valuesToggle = h("input", { type: "checkbox", id: "show-values", onchange: () => { renderBoard(); refreshAnalysis(); } });
  const analysisOff = h("p", { class: "note", id: "analysis-off", hidden: true },
    "This game's setup keeps hints and move values for after the game.");
  const hintButton = h("button", { type: "button", id: "hint", onclick: () => hint() }, "Hint");
  const hintOut = h("p", { class: "hint-out", id: "hint-out", "aria-live": "polite" });
  const verdict = h("p", { class: "verdict", id: "verdict" });
  const explanation = h("div", { id: "explanation" });
  const valueChart = h("div", { id: "value-history" });
  const learn = h("details", { class: "card learn", id: "learn", ontoggle: () => refreshAnalysis() },
    h("summary", {}, h("h2", { style: "display:inline" }, "Learn and analyse")),
    analysisOff,
    h("div", { class: "learn-tools", id: "learn-tools" },
      h("label", { class: "toggle" }, valuesToggle, "Show move values"), hintButton),
    h("div", { class: "legend", id: "legend" },
      h("span", { class: "l-win" }, "winning move (filled)"), h("span", { class: "l-lose" }, "losing move (hollow)"),
      h("span", { class: "l-unknown" }, "not proven (dashed)"),
      h("span", {}, "number: moves left until the game ends with best play (remoteness)"),
      h("span", { class: "l-rows" }, "Rows: a mark under a stone takes that stone, under a link the two stones beside it; each line below a row is another amount (or a cut), its mark under the first stone taken.")),
    hintOut, verdict, explanation,
    h("h3", {}, "Value history"), valueChart);
  const share = h("details", { class: "card share", id: "share" }, h("summary", {}, h("h2", { style: "display:inline" }, "Play together")));
  const log = h("ol", { class: "log", id: "log" });
  const logCard = h("section", { class: "card", "aria-labelledby": "log-title" }, h("h2", { id: "log-title" }, "Moves"), log);

  main.append(
    h("div", { class: "game-head" }, status, rules),
    h("div", { class: "layout" },
      h("section", { "aria-label": "Game" },
        firstNote, seats, lookingBar, board, selectionLine, stepper,
        controls,
        error, last, actions),
      h("div", {}, learn, share, logCard)));

  // -- showing states --------------------------------------------------------------------------
  const allBots = (st) => st.players.every((p) => p.bot || p.eliminated);
  const myTurn = () => shown && !shown.over && shown.to_move !== null && tokens[shown.to_move] !== undefined;
  const canPlay = () => myTurn() && !shown.thinking && !animating && !sending && !latest;

  function valueMap() {
    if (!valuesToggle.checked || animating) return null;
    const a = looking === null ? (analysisFor === shown.move_count ? analysis : null) : past;
    if (!a) return null;
    const map = new Map();
    for (const m of a.moves) map.set(selKey(m), m);
    return map;
  }

  function renderBoard() {
    if (!shown) return;
    const values = valueMap();
    const active = document.activeElement;
    if (active && board.contains(active) && active.dataset.pile) lastPile = active.dataset.pile;
    const refocus = active && board.contains(active);
    const seen = looking === null ? null : lookedBoard(looking);
    drawBoard(board, {
      board: seen ? seen.board : animating ? animating.board : shown.board,
      takes: shown.takes,
      moves: shown.moves,
      shape: shown.move_shape,
      maxTake: shown.max_take,
      words: shown.words,
      limit: seen || shown.over ? null : shown.limit,
      live: !seen && canPlay(),
      selection: animating || seen ? null : selection,
      cursor,
      values,
      taken: seen ? seen.taken : animating ? animating.taken : null,
      onSelect: (sel) => { selection = sel; error.textContent = ""; renderBoard(); },
      onCursor: (c) => { cursor = c; renderBoard(); },
      onFinish: () => finish(),
      onReset: () => reset(),
      onMessage: (text) => { error.textContent = text; },
    });
    if (refocus && !board.contains(document.activeElement) && lastPile) {
      const again = board.querySelector(`[data-pile="${lastPile}"][tabindex="0"]`);
      if (again) again.focus();
    }
    const rowsNote = $("#legend .l-rows");
    if (rowsNote) rowsNote.hidden = !shown.rows;
    const playing = canPlay() && looking === null;
    finishButton.disabled = !playing || !selection;
    resetButton.disabled = !playing || !selection;
    typed.disabled = !playing;
    typedPlay.disabled = !playing;
    controls.hidden = !Object.keys(tokens).length || shown.over; // spectators only watch
    renderStepper();
    let line = "";
    if (looking !== null) line = "";
    else if (animating) line = "";
    else if (selection) {
      const v = selectionValue(selection, values);
      // the server's words for the move where the game words its moves its own way
      const listed = (shown.moves || []).find((m) => m.words && selKey(m) === selKey(selection));
      const words = listed ? listed.words : describeSelection(selection, shown.rows);
      line = `You ${words.replace(/^take/, "are taking").replace(/^move/, "are moving")}`
        + (v ? ` — ${v.winning ? "a winning move" : v.winning === false ? "a losing move" : "value unknown"}` : "")
        + ". Finish (Enter) plays it.";
    } else if (playing) {
      const [noun, , pieces] = shown.words || ["pile", "match", "matches"];
      const verb = (shown.moves || []).some((m) => m.words) ? "move" : "take";
      line = shown.rows
        ? rowsHelp()
        : (coarse() ? `Tap a ${noun}, choose how many with − and +, then Finish.`
          : `Click the ${pieces} to ${verb}: the first click chooses the ${noun}. Keys: Tab to a ${noun}, ←/→ or a digit, Enter.`);
    } else if (shown.over) line = "";
    else if (shown.to_move !== null && !shown.players[shown.to_move].bot && !myTurn()) {
      line = Object.keys(tokens).length ? `Waiting for ${shown.players[shown.to_move].name}…` : "You are watching this game.";
    }
    selectionLine.textContent = line;
  }

  /** How to choose a move on rows, as this position's moves allow (only cuts in Grundy's game;
   * only pairs in Dawson's Kayles). */
  function rowsHelp() {
    const moves = shown.moves;
    const single = !moves || moves.some((m) => m.take === 1);
    const onlyCuts = !!moves && moves.length > 0 && moves.every((m) => m.take === 0);
    if (coarse()) {
      if (onlyCuts) return "Tap a mark on the cut line under a row (it cuts the row there), then Finish.";
      return single ? "Tap a stone (tap a neighbour to take more), or a mark in the lines under a row, then Finish."
        : "Tap a mark in the lines under a row (each takes the stones above it), then Finish.";
    }
    const keys = " Keys: Tab to a row, ←/→, Space, | (a cut), Enter.";
    if (onlyCuts) return "Click the link between two stones to cut the row there (a move takes no stones), then Finish." + keys;
    return (single ? "Click a stone, or the link between two adjacent stones, then Finish."
      : "Click a stone (the pair it is part of is chosen), or the link between two stones, then Finish.") + keys;
  }

  /** Thumb-friendly "take k": − and + (and a slider) step through the moves on the piles chosen
   * (one pile: the amounts one may take; several: the moves the server lists on those piles,
   * e.g. "1 + 1", "2 + 2" in Wythoff's game), fewest matches first. */
  function renderStepper() {
    const sel = selection;
    const options = sel && !shown.rows ? stepperMoves(sel) : [];
    if (!canPlay() || looking !== null || !sel || !options.length) {
      // While this page plays a game of piles the stepper keeps its place, empty: Finish and
      // the buttons below it never move up under a pointer (a double click on Finish).
      if (!stepper.classList.contains("idle") && stepper.offsetHeight) stepper.style.minHeight = `${stepper.offsetHeight}px`;
      stepper.hidden = !!shown.rows || controls.hidden;
      stepper.classList.add("idle");
      stepper.replaceChildren();
      return;
    }
    stepper.classList.remove("idle");
    stepper.style.minHeight = "";
    const idx = Math.max(0, options.findIndex((m) => selKey(m) === selKey(sel)));
    const to = (k) => {
      if (k < 0 || k >= options.length) return;
      const m = options[k];
      selection = { pile: m.pile, take: m.take, at: null, also: m.also || [] };
      error.textContent = "";
      renderBoard();
      const again = $(`#stepper [data-role="${document.activeElement && document.activeElement.dataset.role}"]`);
      if (again) again.focus();
    };
    const parts = partsOf(sel);
    const amounts = parts.map(([, t]) => fmt(t)).join(" + ");
    const listed = (shown.moves || []).find((m) => m.words && selKey(m) === selKey(sel));
    const noun = (shown.words || ["pile"])[0];
    const label = parts.length > 1 ? `${capitalWord(noun)}s ${parts.map(([p]) => p).join(" and ")}: take`
      : listed ? `${capitalWord(noun)} ${sel.pile}:` : `${capitalWord(noun)} ${sel.pile}: take`;
    const slider = options.length > 2 ? h("input", {
      type: "range", min: "0", max: String(options.length - 1), step: "1", value: String(idx),
      "aria-label": `How many to take from ${parts.length > 1 ? "piles" : "pile"} ${parts.map(([p]) => p).join(" and ")}`,
      dataset: { role: "slider" },
      "aria-valuetext": describeSelection(sel, false),
      oninput: (e) => to(Number(e.target.value)),
    }) : null;
    stepper.hidden = false;
    stepper.replaceChildren(...[
      h("span", {}, label),
      h("button", { type: "button", class: "icon", id: "take-less", "aria-label": "Take fewer", dataset: { role: "less" },
        disabled: idx === 0, onclick: () => to(idx - 1) }, "−"),
      h("output", { id: "take-count", "aria-live": "polite" }, amounts),
      h("button", { type: "button", class: "icon", id: "take-more", "aria-label": "Take more", dataset: { role: "more" },
        disabled: idx === options.length - 1, onclick: () => to(idx + 1) }, "+"),
      listed ? h("span", { class: "muted step-words" }, listed.words) : null,
      slider,
    ].filter(Boolean));
  }

  /** The moves the stepper goes through for the selection `sel`: the legal moves on the same
   * piles, fewest matches first (only `sel` itself when the server sent no list for several
   * piles). */
  function stepperMoves(sel) {
    const piles = partsOf(sel).map(([p]) => p).join(",");
    const total = (m) => partsOf(m).reduce((n, [, t]) => n + Number(t), 0);
    if (shown.moves) {
      return shown.moves.filter((m) => m.at === null && partsOf(m).map(([p]) => p).join(",") === piles)
        .sort((a, b) => total(a) - total(b) || (selKey(a) < selKey(b) ? -1 : 1));
    }
    if (sel.also && sel.also.length) return [sel];
    return [...(shown.takes[sel.pile - 1] || [])].sort((a, b) => a - b).map((take) => ({ pile: sel.pile, take, at: null, also: [] }));
  }

  /** The position after value-history step `n` (0: the start): the board the next move was
   * made on. */
  function lookedBoard(n) {
    if (n === 0) return { board: shown.start, taken: null };
    const next = shown.turns[n];
    return next ? { board: next.before, taken: null } : null;
  }

  /** Look back at the position after step `n` everywhere (board, move values, the Learn
   * panel), or at the game again (`null`). */
  async function look(n) {
    looking = n === null || n >= shown.move_count ? null : n;
    past = null;
    lookingBar.hidden = looking === null;
    if (looking !== null) {
      const turn = shown.turns[looking - 1];
      lookingBar.replaceChildren(
        looking === 0 ? "You are looking back at the start position. "
          : `You are looking back at the position after move ${looking} (${turn.text}). `,
        h("button", { type: "button", class: "small", id: "back-to-game", onclick: () => { look(null); board.focus(); } }, "Back to the game"));
      lookingBar.scrollIntoView({ block: "nearest" });
      board.scrollIntoView({ block: "nearest" });
    }
    renderBoard();
    if (analysis) renderAnalysis();
    if (looking === null || !shown.analysis_allowed) return;
    const at = looking;
    verdict.textContent = "Working it out…";
    try {
      const result = await get(`/api/games/${gameId}/analysis?at=${at}`);
      if (closed || looking !== at) return;
      past = result;
      renderAnalysis();
      renderBoard();
    } catch (e) {
      if (looking === at) verdict.textContent = e.message;
    }
  }

  function renderActions() {
    const me = Object.keys(tokens).map(Number);
    const playing = !shown.over;
    const humans = shown.players.filter((p) => !p.bot).map((p) => p.seat);
    const seat = me.find((s) => !shown.players[s].eliminated);
    undoButton.hidden = !(playing && humans.length === 1 && me.includes(humans[0])
      && shown.turns.some((t) => t.seat === humans[0]));
    undoButton.disabled = !!shown.thinking || sending;
    resignButton.hidden = !(playing && seat !== undefined && shown.players.filter((p) => !p.eliminated).length === 2);
    abandonButton.hidden = !(playing && seat !== undefined);
    deleteButton.hidden = !(shown.over && me.length);
    stopButton.hidden = !(playing && ownerToken);
    actions.hidden = [undoButton, resignButton, abandonButton, stopButton, deleteButton].every((b) => b.hidden);
  }

  /** The game of bots only this browser started: stop it (stored as abandoned, nobody wins). */
  async function stopGame() {
    const ok = await dialog({
      title: "Stop this game?", text: "The bots stop playing and nobody wins.",
      buttons: [{ label: "Stop", value: true, primary: true }, { label: "Cancel", value: false, cancel: true }],
    });
    if (!ok || closed) { stopButton.focus(); return; }
    try {
      await incoming(await post(`/api/games/${gameId}/stop`, { token: ownerToken }));
      error.textContent = "";
    } catch (e) {
      error.textContent = e.message;
    }
  }

  async function act(what) {
    const seat = what === "undo"
      ? shown.players.find((p) => !p.bot).seat
      : Object.keys(tokens).map(Number).find((s) => !shown.players[s].eliminated);
    if (seat === undefined) return;
    if (what !== "undo") {
      const ok = await dialog({
        title: what === "resign" ? "Resign this game?" : "Abandon this game?",
        text: what === "resign" ? "The other player wins." : "The game stops and nobody wins.",
        buttons: [{ label: what === "resign" ? "Resign" : "Abandon", value: true, primary: true }, { label: "Cancel", value: false, cancel: true }],
      });
      if (!ok || closed) { (what === "resign" ? resignButton : abandonButton).focus(); return; }
    }
    try {
      const state = await post(`/api/games/${gameId}/${what}`, { seat, token: tokens[seat] });
      selection = null;
      error.textContent = "";
      if (what === "undo") {
        announce("Your last move was taken back.");
        last.textContent = "Your last move (and the replies) were taken back.";
      }
      await incoming(state);
      if (what === "undo") undoButton.focus();
    } catch (e) {
      error.textContent = e.message;
    }
  }

  async function removeGame() {
    const ok = await dialog({
      title: "Delete this game?",
      text: shown.saved_as
        ? `Game #${shown.saved_as} leaves your history; it is deleted for good once every player of it asked.`
        : "It is forgotten for good.",
      buttons: [{ label: "Delete", value: true, primary: true }, { label: "Cancel", value: false, cancel: true }],
    });
    if (!ok || closed) { deleteButton.focus(); return; }
    const seat = Object.keys(tokens).map(Number)[0];
    try {
      await del(`/api/games/${gameId}`, { seat, token: tokens[seat] });
      closed = true;
      saveSavedAs(gameId, null);
      navigate("/");
    } catch (e) {
      error.textContent = e.message;
    }
  }

  function renderSeats() {
    const current = moving !== null ? moving : shown.to_move;
    seats.replaceChildren(...shown.players.map((p) => {
      const cls = [];
      if (current === p.seat) cls.push("to-move");
      if (p.eliminated && shown.winner !== p.seat) cls.push("out");
      return h("li", { class: cls.join(" "), "aria-current": current === p.seat ? "true" : null, dataset: { seat: String(p.seat) } },
        h("span", { class: "seat-dot", style: `background:${seatColour(p.seat)}`, "aria-hidden": "true" }),
        p.label,
        tokens[p.seat] !== undefined && p.name !== "You"
          ? h("span", { class: "tag" }, h("span", { class: "visually-hidden" }, "("), "you", h("span", { class: "visually-hidden" }, ")")) : null,
        shown.winner === p.seat ? h("span", { class: "tag win" }, "winner") : null,
        p.eliminated && shown.winner !== p.seat ? h("span", { class: "visually-hidden" }, "(eliminated)") : null);
    }));
  }

  const logEntry = (t) => h("li", { value: String(t.number) }, t.text,
    t.claim && shown && shown.players[t.seat] && shown.players[t.seat].bot ? h("span", { class: "claim" }, ` · ${t.claim}`) : null,
    t.messages.length ? ` — ${t.messages.join(" ")}` : "");

  function logPadding(count) {
    log.style.paddingLeft = `${String(Math.max(1, count)).length + 2.2}ch`;
  }

  /** The move list follows the turns shown: new ones are appended (after a take-back it is
   * drawn again). */
  function renderLog() {
    const turns = shown.turns;
    const takebacks = shown.takebacks || 0;
    if (takebacks !== loggedTakebacks || log.children.length > turns.length || logged !== log.children.length) {
      log.replaceChildren();
      loggedTakebacks = takebacks;
    }
    logPadding(turns.length);
    const start = log.children.length;
    if (start < turns.length) log.append(...turns.slice(start).map(logEntry));
    logged = log.children.length;
    log.scrollTop = log.scrollHeight;
  }

  function renderShare() {
    const base = location.origin;
    const humans = shown.players.filter((p) => !p.bot);
    share.replaceChildren(
      h("summary", {}, h("h2", { style: "display:inline" }, "Play together")),
      h("p", { class: "muted" }, "Each player can play from their own browser with their seat's link; anyone with the watch link can follow the game live."),
      h("ul", {}, humans.map((p) => {
        if (tokens[p.seat] !== undefined) return h("li", {}, h("strong", {}, p.name), " plays in this browser.");
        if (invites[p.seat]) {
          const input = h("input", { readonly: true, value: base + invites[p.seat], "aria-label": `${p.name}'s link`, class: "seat-link", dataset: { seat: String(p.seat) } });
          return h("li", {}, h("strong", {}, `${p.name}'s link`), " (only for them):", input,
            h("button", { type: "button", class: "small", onclick: () => copy(input) }, "Copy"));
        }
        return h("li", {}, h("strong", {}, p.name), " plays from another browser.");
      }),
      h("li", {}, h("strong", {}, "Watch link"), ":",
        h("input", { readonly: true, value: `${base}/game/${shown.id}`, "aria-label": "Watch link", id: "watch-link" }))));
  }

  function copy(input) {
    input.select();
    if (navigator.clipboard) navigator.clipboard.writeText(input.value).catch(() => {});
  }

  function renderAll() {
    status.textContent = shown.status;
    setTitle(`${shown.over ? shown.status : shown.status.replace(/!$/, "")} · ${shown.players.map((p) => p.name).join(" vs ")}`);
    if (shown.saved_as) saveSavedAs(gameId, shown.saved_as);
    if (Object.keys(tokens).length) {
      saveGameNote(gameId, { players: shown.players.map((p) => p.name), description: shown.description,
        status: shown.status, moves: shown.move_count, over: !!shown.over, at: Date.now() });
    }
    if (randomFirst(gameId)) {
      firstNote.hidden = false;
      const starter = shown.players[shown.first].name;
      firstNote.textContent = `${starter} ${starter === "You" ? "were" : "was"} drawn at random to move first.`;
    }
    analysisOff.hidden = !!shown.analysis_allowed;
    hintButton.hidden = !!shown.over; // nothing to hint once the game is over
    $("#learn-tools", learn).hidden = !shown.analysis_allowed;
    if (!shown.analysis_allowed) { valuesToggle.checked = false; verdict.textContent = ""; explanation.replaceChildren(); valueChart.replaceChildren(); }
    renderActions();
    status.classList.toggle("thinking", !!shown.thinking);
    rules.textContent = shown.description;
    renderSeats();
    renderBoard();
    renderLog();
    renderShare();
    if (shown.over) {
      last.replaceChildren(`${shown.status} `, shown.saved_as
        ? h("a", { href: replayPath(shown.saved_as), "data-link": "" }, `Replay game #${shown.saved_as}`) : "",
      " · ", h("a", { href: "/", "data-link": "" }, "New game"));
    }
  }

  /** Complete a state's page of turns with what this page has seen (fetching the pages it
   * lacks) and show it; states are handled one at a time, in the order they arrive. */
  function incoming(state) {
    arrivals = arrivals.then(() => complete(state)).then((full) => { if (full) receive(full); })
      .catch((e) => { if (!closed) error.textContent = e.message; });
    return arrivals;
  }

  async function page(since) {
    return get(`/api/games/${gameId}?since=${since}`);
  }

  /** The state with every turn from move 1 (`turns_from` 0), or null when it is out of date. */
  async function complete(state) {
    if (closed) return null;
    const takebacks = state.takebacks || 0;
    if (takebacks < knownTakebacks) return null; // from before a take-back
    // after a take-back, what came after its first turn is no longer played
    const base = takebacks > knownTakebacks ? known.slice(0, state.turns_from) : known;
    let full = base.slice(0, state.turns_from);
    while (full.length < state.turns_from) { // a gap before this page: fetch it
      const p = await page(full.length);
      if (closed || (p.takebacks || 0) !== takebacks || p.turns_from !== full.length || !p.turns.length) return null;
      full = full.concat(p.turns.slice(0, state.turns_from - full.length));
    }
    full = full.concat(state.turns);
    while (full.length < state.move_count) { // more turns than one page: fetch the rest
      const p = await page(full.length);
      if (closed || (p.takebacks || 0) !== takebacks || p.turns_from !== full.length || !p.turns.length) return null;
      full = full.concat(p.turns.slice(0, state.move_count - full.length));
    }
    if (takebacks > knownTakebacks || full.length >= known.length) {
      known = full;
      knownTakebacks = takebacks;
    }
    return { ...state, turns: full, turns_from: 0 };
  }

  function receive(state) {
    if (closed) return;
    if (!shown && !latest && state.over && state.saved_as && (state.move_count > 0 || state.ended)) {
      // a finished game's link leads to its replay
      closed = true;
      saveSavedAs(gameId, state.saved_as);
      navigate(replayPath(state.saved_as), { replace: true });
      return;
    }
    if (shown && (state.takebacks || 0) > (shown.takebacks || 0)) {
      // a take-back: show the new state as it is (no moves to play out)
      if (latest && (latest.takebacks || 0) >= state.takebacks && latest.move_count >= state.move_count) return;
      shown = null;
      latest = null;
      selection = null;
      analysis = null;
      analysisFor = -1;
      looking = null;
      lookingBar.hidden = true;
      shown = state;
      renderAll();
      refreshAnalysis();
      return;
    }
    if (shown && (state.takebacks || 0) < (shown.takebacks || 0)) return;
    if (shown && state.move_count < shown.move_count) return;
    if (shown && state.move_count === shown.move_count && state.over === shown.over
        && state.thinking === shown.thinking && state.status === shown.status && !latest) return;
    if (latest && state.move_count < latest.move_count) return;
    latest = state;
    // never fall behind: a move played out while a newer one waits is cut short
    if (wake && playing && state.move_count > playing.move_count) wake();
    pump();
  }

  async function pump() {
    if (pumping) return;
    pumping = true;
    try {
      while (latest && !closed) {
        const target = latest;
        latest = null;
        const first = !shown;
        if (shown && target.move_count > shown.move_count) {
          selection = null;
          hintOut.textContent = "";
          hintFor = -1;
          const fresh = target.turns.slice(shown.move_count);
          playing = target;
          for (const [k, turn] of fresh.entries()) {
            if (closed) return;
            // never fall behind: a backlog is shown at once, only the newest move is animated;
            // the seat highlighted next is the one to move after this turn
            const next = k < fresh.length - 1 ? fresh[k + 1].seat : target.to_move;
            await playOut(turn, target, next, k < fresh.length - 1 || queued());
          }
          playing = null;
        }
        if (closed) return;
        animating = null;
        moving = null;
        shown = target;
        renderAll();
        if (first) await opening(target);
        refreshAnalysis();
        restoreFocus();
      }
    } finally {
      pumping = false;
      playing = null;
      if (shown && !closed) { renderBoard(); restoreFocus(); }
    }
  }

  /** Whether a state with newer moves than those being played out is waiting. */
  const queued = () => !!(latest && playing && latest.move_count > playing.move_count);

  /** Wait `ms`, or less when a newer move arrives meanwhile (see `receive`). */
  function pause(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => { wake = null; resolve(); }, ms);
      wake = () => { clearTimeout(timer); wake = null; resolve(); };
    });
  }

  /** Give the keyboard focus back to the board (or the page's next step) when it was lost: on
   * nothing, or on a control that was removed, disabled or hidden meanwhile (the Finish button
   * after a move, the board's pile while a bot was thinking). */
  function restoreFocus() {
    if (closed || !shown) return;
    const a = document.activeElement;
    const lost = !a || a === document.body || !document.contains(a) || a.disabled || !a.getClientRects().length;
    if (!lost) return;
    if ($("#dialog").open) return;
    const target = (lastPile && board.querySelector(`[data-pile="${lastPile}"][tabindex="0"]`))
      || board.querySelector('[tabindex="0"]') || (shown && shown.over ? last.querySelector("a") : null);
    if (target) target.focus();
  }

  /** Show one turn of `target`: the mover's seat is highlighted while its move is played out,
   * then the seat `next` (the one to move after it). */
  async function playOut(turn, target, next, quick = false) {
    status.textContent = turn.text;
    status.classList.remove("thinking");
    last.textContent = turn.text + (turn.claim && shown.players[turn.seat].bot ? `: ${turn.claim}` : "");
    announce(turn.text + (turn.messages.length ? ". " + turn.messages.join(" ") : ""));
    moving = turn.seat;
    renderSeats();
    if (!mine.has(turn.number) && !quick) {
      animating = { board: turn.before, taken: turn.move };
      renderBoard();
      // in a game of bots only, an animation never takes longer than the bots' pace
      await pause(allBots(target) ? Math.min(animationMs(), BOTS_ONLY_ANIMATION_MS) : animationMs());
    }
    moving = next === null ? -1 : next; // -1: nobody (the game is over)
    animating = { board: turn.after, taken: null }; // until the state itself is shown
    renderSeats();
    renderBoard();
    logPadding(turn.number);
    if (log.children.length === turn.number - 1) log.append(logEntry(turn));
    logged = log.children.length;
    log.scrollTop = log.scrollHeight;
    const eliminated = turn.messages.filter((m) => / eliminated!$/.test(m));
    const rest = turn.messages.filter((m) => !/ eliminated!$/.test(m) && !/ wins?!$/.test(m));
    if (turn.eliminated && eliminated.length) {
      // a player waits for the news; for a watcher of bots (or a player already out) it closes
      // by itself after a moment, while the next moves play on
      const answers = Object.keys(tokens).length && !allBots(target);
      const told = dialog({ title: eliminated[0], text: rest.join(" "), big: cross(), closeAfterMs: answers ? 0 : NEWS_MS });
      announce(eliminated[0]);
      if (answers) {
        await told;
        restoreFocus();
      }
    }
    if (turn.winner !== null) {
      animating = null;
      shown = target;
      renderAll();
      victory(target);
    }
  }

  async function victory(state) {
    const buttons = [{ label: "New game", value: "new", primary: true }];
    if (state.saved_as) buttons.push({ label: "Replay", value: "replay" });
    buttons.push({ label: "Look at the board", value: null });
    const choice = await dialog({
      title: state.status,
      text: tokens[state.winner] !== undefined ? "Well played!" : "",
      big: trophy(),
      buttons,
    });
    if (closed) return;
    if (choice === "new") navigate("/");
    else if (choice === "replay") navigate(replayPath(state.saved_as));
    else restoreFocus();
  }

  async function opening(state) {
    if (state.move_count === 0 && state.opening.length) {
      await dialog({ title: state.opening[0], text: state.opening.slice(1).join(" ") });
      if (state.over) victory(state);
      else restoreFocus();
    }
    if (randomFirst(gameId) && state.move_count === 0) announce(firstNote.textContent);
  }

  // -- moving ----------------------------------------------------------------------------------
  async function send(body) {
    const number = shown.move_count + 1;
    sending = true;
    error.textContent = "";
    renderBoard();
    mine.add(number);
    try {
      const state = await post(`/api/games/${gameId}/moves`, { seat: shown.to_move, token: tokens[shown.to_move], turn: number, ...body });
      selection = null;
      typed.value = "";
      await incoming(state);
    } catch (e) {
      mine.delete(number);
      error.textContent = e.message;
    } finally {
      sending = false;
      renderBoard();
      renderActions(); // (Take back waits for the answer: a state shown meanwhile left it disabled)
      restoreFocus();
    }
  }

  function finish() {
    if (!canPlay()) return;
    if (!selection) {
      error.textContent = "Choose what to take first: click the matches (or stones) you want.";
      return;
    }
    send({ pile: selection.pile, take: selection.take, at: selection.at ?? null,
      ...(selection.also && selection.also.length ? { also: selection.also } : {}) });
  }

  function reset() {
    selection = null;
    error.textContent = "";
    renderBoard();
  }

  function typedMove() {
    if (!canPlay()) return;
    const text = typed.value.trim();
    if (!text) {
      error.textContent = shown.rows ? "Type ROW POSITION COUNT, e.g. 1 3 2." : "Type PILE AMOUNT, e.g. 2 3.";
      return;
    }
    send({ text });
  }

  // -- learning --------------------------------------------------------------------------------
  async function refreshAnalysis() {
    if (!shown || !shown.analysis_allowed || (!valuesToggle.checked && !learn.open)) return;
    const count = shown.move_count;
    // an answer for this position is shown, or on its way (it is pushed when it is ready)
    if (analysisFor === count && analysis && (analysis.available || analysis.pending)) { renderAnalysis(); return; }
    verdict.textContent = "Working it out…";
    try {
      const result = await get(`/api/games/${gameId}/analysis`);
      if (closed || !shown || result.move_count !== shown.move_count) return;
      if (analysisFor === result.move_count && analysis && analysis.available && !result.available) return;
      analysis = result;
      analysisFor = result.move_count;
      renderAnalysis();
      renderBoard();
    } catch (e) {
      verdict.textContent = e.message;
    }
  }

  /** A hint or an analysis worked out after its request was answered (a proof, or the answer
   * the busy engine could not give in time). */
  function pushed(msg) {
    if (!shown) return;
    if (msg.type === "analysis" && msg.analysis && msg.analysis.move_count === shown.move_count) {
      analysis = msg.analysis;
      analysisFor = analysis.move_count;
      if (shown.analysis_allowed && (valuesToggle.checked || learn.open)) { renderAnalysis(); renderBoard(); }
    } else if (msg.type === "hint" && msg.hint && msg.hint.move_count === shown.move_count && hintFor === shown.move_count) {
      showHint(msg.hint);
    }
  }

  function renderAnalysis() {
    const a = looking !== null ? past : analysis;
    if (!a) { verdict.textContent = "Working it out…"; explanation.replaceChildren(); if (analysis) drawValueHistory(analysis.history); return; }
    verdict.textContent = (looking === null ? "" : looking === 0 ? "At the start: " : `After move ${looking}: `)
      + (a.available ? a.verdict : a.note);
    if (a.pending) verdict.append(h("span", { class: "muted", id: "analysis-pending" },
      a.available ? " (not proven yet: a deeper search goes on, its answer comes here)" : ""));
    const blocks = explanationBlocks(a);
    explanation.replaceChildren(...blocks);
    drawValueHistory((analysis || a).history);
  }


  /** The value history as a chart one can read: moves left (remoteness) after each move,
   * coloured by who is winning, mistakes ringed in red; a click looks back at that position. */
  function drawValueHistory(steps) {
    if (!steps.length) { valueChart.replaceChildren(); return; }
    const current = looking ?? steps.length - 1;
    const list = h("ol", { class: "vh-list", start: "0", style: `padding-left:${String(steps.length).length + 2}ch` }, steps.map((s, i) =>
      h("li", { class: [s.mistake ? "mistake" : "", i === current ? "current" : ""].join(" ").trim(), "aria-current": i === current ? "step" : null },
        h("button", { type: "button", class: "step", title: "Look back at this position", onclick: () => look(i) }, stepText(s)),
        s.mistake ? h("span", { class: "mistake-tag" }, " — a mistake") : null)));
    const width = valueChart.clientWidth || 340;
    valueChart.replaceChildren(...(steps.length > 1 ? [valueHistoryChart(steps, current, shown.players, (i) => look(i), width), list] : [list]));
  }

  function stepText(s) {
    return valueStepText(s, shown.players);
  }

  async function hint() {
    hintOut.textContent = "Thinking…";
    const count = shown.move_count;
    hintFor = count;
    try {
      const result = await get(`/api/games/${gameId}/hint`);
      if (closed || !shown || shown.move_count !== count) return;
      if (!result || !result.move) {
        // 202: the engine is busy; the hint is pushed here when it is ready
        hintOut.textContent = "Still working it out: the hint comes here when it is ready.";
        return;
      }
      showHint(result);
    } catch (e) {
      hintOut.textContent = e.message;
    }
  }

  function showHint(result) {
    hintOut.textContent = `Hint: ${result.text} (${result.claim}).`
      + (result.pending ? " A deeper search goes on: a proof comes here if it finds one." : "");
    if (canPlay()) {
      selection = { pile: result.move.pile, take: result.move.take, at: result.move.at, also: result.move.also || [] };
      renderBoard();
    }
  }

  // -- live updates ----------------------------------------------------------------------------
  function connect() {
    if (closed) return;
    const proto = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${proto}://${location.host}/api/games/${gameId}/live`);
    let opened = false;
    socket.onopen = () => {
      opened = true;
      retryMs = RETRY_FIRST_MS;
      setOnline(true); // the server sends the game's state first: the page catches up with it
      if (error.textContent.includes("cannot be reached")) error.textContent = "";
    };
    socket.onmessage = (e) => {
      let msg;
      try { msg = parseJSON(e.data); } catch { return; }
      if (msg.type === "state") {
        if (paused && error.textContent === paused) error.textContent = "";
        paused = "";
        incoming(msg.state);
      } else if (msg.type === "error") missing(msg.detail);
      else if (msg.type === "unavailable") { // not now (the server says why): tried again
        paused = `Live updates paused: ${msg.detail}. Trying again…`;
        error.textContent = paused;
      } else if (msg.type === "analysis" || msg.type === "hint") arrivals.then(() => pushed(msg));
    };
    socket.onclose = (e) => {
      if (closed || e.code === 4404) return;
      if (e.code !== 1013 && (!opened || !shown || !shown.over)) setOnline(false);
      if (!shown || !shown.over) {
        retry = setTimeout(connect, retryMs);
        retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
      }
    };
  }

  function missing(detail) {
    if (Object.keys(tokens).length) saveGameNote(gameId, { gone: true });
    const stored = savedAs(gameId) || (shown && shown.saved_as);
    closed = true;
    if (stored) { navigate(replayPath(stored), { replace: true }); return; }
    notFound(main, "No such game in play", `${detail}. A finished game is in the history.`);
  }

  get(`/api/games/${gameId}`).then((state) => { incoming(state); connect(); })
    .catch((e) => {
      if (e.status === 404) missing(e.message);
      else { status.textContent = e.message; retry = setTimeout(() => { if (!closed) navigate(location.pathname, { replace: true }); }, 3000); }
    });
  board.addEventListener("focusin", (e) => { if (e.target.dataset && e.target.dataset.pile) lastPile = e.target.dataset.pile; });

  return () => {
    closed = true;
    main.removeEventListener("pointerdown", onPress, true);
    clearTimeout(retry);
    if (socket) socket.close();
    const dlg = $("#dialog");
    if (dlg.open) dlg.close();
  };
}

function stepColour(s) {
  if (s.paranoid) return s.mover_wins === true ? seatColour(s.to_move) : s.mover_wins === false ? "#b9b1a2" : "#999";
  return s.winner === null ? "#999" : seatColour(s.winner);
}

/** The value history as a chart one can read: moves left (remoteness) after each move,
 * coloured by who is winning, mistakes ringed in red; `onPick(i)` looks back at step i. */
export function valueHistoryChart(steps, current, players, onPick, width) {
  const svgEl = (tag, attrs, text) => {
    const el = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    if (text !== undefined) el.textContent = text;
    return el;
  };
  const W = Math.max(260, Math.min(720, width));
  const H = 170;
  const L = 34, R = 16, T = 16, B = 34;
  const known = steps.map((s) => s.remoteness).filter((r) => r !== null && r !== undefined);
  const max = Math.max(1, ...known);
  const n = steps.length;
  const x = (i) => L + 14 + ((W - L - R - 14) * i) / Math.max(1, n - 1);
  const y = (r) => T + ((H - T - B) * (max - r)) / max;
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "vh", role: "img",
    "aria-label": "Value history: moves left after each move (height), who was winning (colour), mistakes ringed in red. The list below has the same steps." });
  // axes, ticks and their labels
  svg.append(svgEl("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }));
  svg.append(svgEl("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }));
  for (const r of [...new Set([0, Math.round(max / 2), max])]) {
    svg.append(svgEl("line", { x1: L - 4, y1: y(r), x2: W - R, y2: y(r), class: "grid" }));
    svg.append(svgEl("text", { x: L - 7, y: y(r) + 4, "text-anchor": "end", class: "tick" }, String(r)));
  }
  const every = Math.max(1, Math.ceil(n / Math.max(2, Math.floor((W - L - R) / 34))));
  for (let i = 0; i < n; i += every) svg.append(svgEl("text", { x: x(i), y: H - B + 15, "text-anchor": "middle", class: "tick" }, String(i)));
  svg.append(svgEl("text", { x: L + (W - L - R) / 2, y: H - 4, "text-anchor": "middle", class: "axis-title" }, "after move"));
  svg.append(svgEl("text", { x: 11, y: T + (H - T - B) / 2, "text-anchor": "middle", class: "axis-title",
    transform: `rotate(-90 11 ${T + (H - T - B) / 2})` }, "moves left"));
  // the line and the points
  const pts = steps.map((s, i) => [x(i), s.remoteness === null || s.remoteness === undefined ? null : y(s.remoteness)]);
  const drawn = pts.filter((p) => p[1] !== null);
  if (drawn.length > 1) svg.append(svgEl("polyline", { points: drawn.map((p) => p.join(",")).join(" "), class: "vh-line" }));
  steps.forEach((s, i) => {
    const unknown = pts[i][1] === null;
    const cy = unknown ? T : pts[i][1];
    const g = svgEl("g", { class: "vh-point" + (i === current ? " current" : "") });
    if (s.mistake) g.append(svgEl("circle", { cx: pts[i][0], cy, r: 9.5, class: "mistake-ring" }));
    if (i === current) g.append(svgEl("circle", { cx: pts[i][0], cy, r: 11.5, class: "current-ring" }));
    g.append(svgEl("circle", { cx: pts[i][0], cy, r: 6, fill: unknown ? "#fff" : stepColour(s), stroke: unknown ? "#777" : "none", "stroke-dasharray": unknown ? "2 2" : "" }));
    g.append(svgEl("circle", { cx: pts[i][0], cy, r: 14, class: "hit" }));
    g.append(svgEl("title", {}, valueStepText(s, players) + (s.mistake ? " — a mistake" : "")));
    g.addEventListener("click", () => onPick(i));
    svg.append(g);
  });
  const seatsSeen = [...new Set(steps.filter((s) => !s.paranoid && s.winner !== null && s.winner !== undefined).map((s) => s.winner))];
  const key = h("p", { class: "vh-key" },
    seatsSeen.map((seat) => h("span", {}, h("span", { class: "swatch", style: `background:${seatColour(seat)}` }), `${players[seat].name} winning`)),
    steps.some((s) => s.mistake) ? h("span", {}, h("span", { class: "swatch ring" }), "a mistake (the move threw a win away)") : null,
    h("span", {}, "Click a point or a step below to look back at that position."));
  return h("div", { class: "vh-chart" }, svg, key);
}


/** A misère quotient, folded: its P-portion, presentation, heap images and (for small ones)
 * its multiplication table, P-portion products marked. */
export function quotientBlock(q) {
  const name = (x) => q.elements[x];
  const pset = new Set(q.p_elements);
  const parts = [
    h("summary", {}, `The misère quotient of ${q.code}: ${q.order} elements, ${q.p_elements.length} in the P-portion`),
    h("p", {}, h("strong", {}, "P-portion: "), q.p_elements.join(", ")),
    h("p", {}, h("strong", {}, "Generators: "), q.generators.map((g) => `${g.name} = heap ${g.heap}`).join(", ")),
    q.relations.length ? h("p", {}, h("strong", {}, "Relations: "), q.relations.join(", ")) : null,
    h("p", {}, h("strong", {}, "Heap images: "), q.heap_images.map((e, i) => `${i}→${e}`).join("  "),
      q.heap_images.length > 1 ? " …" : ""),
    h("p", { class: "muted" }, q.reason),
  ];
  if (q.table) {
    const head = h("tr", {}, h("th", { scope: "col" }, "×"), q.elements.map((e) => h("th", { scope: "col" }, e)));
    const rows = q.table.map((row, x) => h("tr", {}, h("th", { scope: "row" }, name(x)),
      row.map((y) => h("td", { class: pset.has(name(y)) ? "p" : "" }, name(y)))));
    parts.push(h("p", { class: "muted" }, "The product of two elements (row × column); products in the P-portion are marked."),
      h("div", { class: "qtable", tabindex: "0", role: "region", "aria-label": "The quotient's multiplication table" },
        h("table", {}, h("thead", {}, head), h("tbody", {}, rows))));
  }
  return h("details", { class: "quotient", id: "quotient" }, parts);
}

/** The Learn panel's explanation of an analysis `a` (the same live and in a replay): its
 * sentences, its tables in binary, the misère quotient, and what was not proven. */
export function explanationBlocks(a) {
  const blocks = [];
  let table = [];
  const flush = () => { if (table.length) { blocks.push(binaryBlock(table.join("\n"))); table = []; } };
  for (const line of a.explanation) {
    if (a.quotient && line.startsWith("The quotient's generators")) continue; // shown below
    if (line.startsWith("  ")) table.push(line.slice(2));
    else { flush(); blocks.push(h("p", {}, line)); }
  }
  flush();
  if (a.binary.length && !a.explanation.some((l) => l.startsWith("  "))) {
    blocks.push(h("p", { class: "muted" }, "The nim-sum in binary (for Nim without extra rules it decides the game):"));
    blocks.push(binaryBlock(a.binary.map((l) => l.slice(2)).join("\n")));
  }
  if (a.quotient) blocks.push(quotientBlock(a.quotient));
  if (a.note && a.available) blocks.push(h("p", { class: "muted" }, a.note));
  if (!a.complete && a.available) blocks.push(h("p", { class: "muted" }, "Too many moves to list them all: only the winning moves found by formula are coloured."));
  return blocks;
}

/** A table in binary (columns aligned): a Tab stop that scrolls sideways when it is wider than
 * its box (a pile of 10^40 matches has 133 binary digits). */
export function binaryBlock(text) {
  const wide = Math.max(...text.split("\n").map((l) => l.length)) > 30;
  return h("pre", { class: "nimsum", ...(wide ? { tabindex: "0", role: "region", "aria-label": "The table in binary (scrolls sideways)" } : {}) }, text);
}

/** A value-history step in words (two players: who is winning; more: the paranoid model). */
export function valueStepText(s, players) {
  if (s.to_move === null) return s.text;
  const left = s.remoteness === null ? "" : ` (${plural(s.remoteness, "move")} left)`;
  if (s.paranoid) {
    const mover = players[s.to_move].name;
    if (s.mover_wins === null || s.mover_wins === undefined) return `${s.text}: beyond the search's budget`;
    return s.mover_wins
      ? `${s.text}: ${mover} can force a win against all the others${left}`
      : `${s.text}: ${mover} cannot force a win if the others play together${left}`;
  }
  if (s.winner === null) return `${s.text}: no proven value`;
  const who = players[s.winner].name;
  return `${s.text}: ${who} ${who === "You" ? "are" : "is"} winning${left}`;
}
