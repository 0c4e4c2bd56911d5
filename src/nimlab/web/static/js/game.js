// Playing a game (seed 001's board, seed 000's announcements and screens), learning from it, and
// playing together: the server owns the game; this page sends move requests and shows the states
// it receives (from its own requests and, live, over a WebSocket).

import { h, $, announce, sleep, fmt, seatColour, dialog } from "./dom.js";
import { get, post, parseJSON } from "./api.js";
import { tokensFor, saveToken, invitesFor, animationMs } from "./local.js";
import { drawBoard, moveKey, describeSelection, selectionValue } from "./board.js";
import { navigate } from "./router.js";

const SVG = "http://www.w3.org/2000/svg";

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
const cross = () => icon(["M12 8l12 12 12-12 4 4-12 12 12 12-4 4-12-12-12 12-4-4 12-12L8 12z"], "#c0392b");

export function showGame(main, gameId) {
  // A share link carries the seat's token: keep it here, and take it out of the address bar.
  const params = new URLSearchParams(location.search);
  if (params.has("seat") && params.has("token")) {
    saveToken(gameId, params.get("seat"), params.get("token"));
    history.replaceState(null, "", `/game/${gameId}`);
  }
  const tokens = tokensFor(gameId);
  const invites = invitesFor(gameId);

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

  // -- the page --------------------------------------------------------------------------------
  const status = h("h1", { class: "status", id: "status", "aria-live": "polite" }, "Loading…");
  const rules = h("p", { class: "rules", id: "rules" });
  const seats = h("ol", { class: "seats", id: "seats", "aria-label": "Players" });
  const board = h("div", { class: "board", id: "board", "aria-label": "Board" });
  const selectionLine = h("p", { class: "selection", id: "selection" });
  const error = h("p", { class: "error", id: "error", role: "alert" });
  const finishButton = h("button", { class: "primary", id: "finish", type: "button", onclick: () => finish() }, "Finish");
  const resetButton = h("button", { id: "reset", type: "button", onclick: () => reset() }, "Reset");
  const typed = h("input", { id: "typed-move", autocomplete: "off", "aria-label": "Type a move", placeholder: "e.g. 2 3" });
  const typedPlay = h("button", { type: "submit" }, "Play");
  const typedForm = h("form", { onsubmit: (e) => { e.preventDefault(); typedMove(); } }, typed, typedPlay);
  const controls = h("div", { class: "controls" }, finishButton, resetButton, typedForm);
  const last = h("p", { class: "last", id: "last" });
  const valuesToggle = h("input", { type: "checkbox", id: "show-values", onchange: () => { renderBoard(); refreshAnalysis(); } });
  const hintButton = h("button", { type: "button", id: "hint", onclick: () => hint() }, "Hint");
  const hintOut = h("p", { class: "hint-out", id: "hint-out", "aria-live": "polite" });
  const verdict = h("p", { class: "verdict", id: "verdict" });
  const explanation = h("div", { id: "explanation" });
  const valueChart = h("div", { id: "value-history" });
  const learn = h("details", { class: "card learn", id: "learn", ontoggle: () => refreshAnalysis() },
    h("summary", {}, h("h2", { style: "display:inline" }, "Learn and analyse")),
    h("div", { class: "learn-tools" },
      h("label", { class: "toggle" }, valuesToggle, "Show move values"), hintButton),
    h("p", { class: "legend" }, h("span", { class: "l-win" }, "winning move"), h("span", { class: "l-lose" }, "losing move"),
      h("span", {}, "number: moves until the game ends")),
    hintOut, verdict, explanation,
    h("h3", {}, "Value history"), valueChart);
  const share = h("details", { class: "card share", id: "share" }, h("summary", {}, h("h2", { style: "display:inline" }, "Play together")));
  const log = h("ol", { class: "log", id: "log" });
  const logCard = h("section", { class: "card", "aria-labelledby": "log-title" }, h("h2", { id: "log-title" }, "Moves"), log);

  main.append(
    h("div", { class: "game-head" }, status, rules),
    h("div", { class: "layout" },
      h("section", { "aria-label": "Game" },
        seats, board, selectionLine,
        controls,
        error, last),
      h("div", {}, learn, share, logCard)));

  // -- showing states --------------------------------------------------------------------------
  const myTurn = () => shown && !shown.over && shown.to_move !== null && tokens[shown.to_move] !== undefined;
  const canPlay = () => myTurn() && !shown.thinking && !animating && !sending && !latest;

  function valueMap() {
    if (!valuesToggle.checked || !analysis || analysisFor !== shown.move_count || animating) return null;
    const map = new Map();
    for (const m of analysis.moves) map.set(moveKey(m.pile, m.take, m.at), m);
    return map;
  }

  function renderBoard() {
    if (!shown) return;
    const values = valueMap();
    drawBoard(board, {
      board: animating ? animating.board : shown.board,
      takes: shown.takes,
      maxTake: shown.max_take,
      live: canPlay(),
      selection: animating ? null : selection,
      cursor,
      values,
      taken: animating ? animating.taken : null,
      onSelect: (sel) => { selection = sel; error.textContent = ""; renderBoard(); },
      onCursor: (c) => { cursor = c; renderBoard(); },
      onFinish: () => finish(),
      onReset: () => reset(),
      onMessage: (text) => { error.textContent = text; },
    });
    const playing = canPlay();
    finishButton.disabled = !playing || !selection;
    resetButton.disabled = !playing || !selection;
    typed.disabled = !playing;
    typedPlay.disabled = !playing;
    controls.hidden = !Object.keys(tokens).length || shown.over; // spectators only watch
    let line = "";
    if (animating) line = "";
    else if (selection) {
      const v = selectionValue(selection, values);
      line = `You ${describeSelection(selection, shown.rows).replace(/^take/, "are taking")}`
        + (v ? ` — ${v.winning ? "a winning move" : v.winning === false ? "a losing move" : "value unknown"}` : "")
        + ". Finish (Enter) plays it.";
    } else if (playing) {
      line = shown.rows
        ? "Click a stone, or the link between two adjacent stones, then Finish. Keys: Tab to a row, ←/→, Space, Enter."
        : "Click the matches to take: the first click chooses the pile. Keys: Tab to a pile, ←/→ or a digit, Enter.";
    } else if (shown.over) line = "";
    else if (shown.to_move !== null && !shown.players[shown.to_move].bot && !myTurn()) {
      line = Object.keys(tokens).length ? `Waiting for ${shown.players[shown.to_move].name}…` : "You are watching this game.";
    }
    selectionLine.textContent = line;
  }

  function renderSeats() {
    seats.replaceChildren(...shown.players.map((p) => {
      const cls = [];
      if (shown.to_move === p.seat) cls.push("to-move");
      if (p.eliminated && shown.winner !== p.seat) cls.push("out");
      return h("li", { class: cls.join(" "), "aria-current": shown.to_move === p.seat ? "true" : null },
        h("span", { class: "seat-dot", style: `background:${seatColour(p.seat)}`, "aria-hidden": "true" }),
        p.label,
        tokens[p.seat] !== undefined ? h("span", { class: "tag" }, "you") : null,
        shown.winner === p.seat ? h("span", { class: "tag win" }, "winner") : null,
        p.eliminated && shown.winner !== p.seat ? h("span", { class: "visually-hidden" }, "(eliminated)") : null);
    }));
  }

  const logEntry = (t) => h("li", {}, t.text, t.messages.length ? ` — ${t.messages.join(" ")}` : "");

  function renderLog() {
    log.replaceChildren(...shown.turns.map(logEntry));
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
    status.classList.toggle("thinking", !!shown.thinking);
    rules.textContent = shown.description;
    renderSeats();
    renderBoard();
    renderLog();
    renderShare();
    if (shown.over && shown.winner !== null) {
      last.replaceChildren(`${shown.status} `, shown.saved_as
        ? h("a", { href: `/history/${shown.saved_as}`, "data-link": "" }, `Replay game #${shown.saved_as}`) : "",
      " · ", h("a", { href: "/", "data-link": "" }, "New game"));
    }
  }

  function receive(state) {
    if (closed) return;
    if (shown && state.move_count < shown.move_count) return;
    if (latest && state.move_count < latest.move_count) return;
    latest = state;
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
          const fresh = target.turns.slice(shown.move_count);
          for (const turn of fresh) {
            if (closed) return;
            await playOut(turn, target);
          }
        }
        if (closed) return;
        animating = null;
        shown = target;
        renderAll();
        if (first) await opening(target);
        refreshAnalysis();
      }
    } finally {
      pumping = false;
      if (shown && !closed) renderBoard();
    }
  }

  async function playOut(turn, target) {
    status.textContent = turn.text;
    status.classList.remove("thinking");
    last.textContent = turn.text;
    announce(turn.text + (turn.messages.length ? ". " + turn.messages.join(" ") : ""));
    if (!mine.has(turn.number)) {
      animating = { board: turn.before, taken: turn.move };
      renderBoard();
      await sleep(animationMs());
    }
    animating = { board: turn.after, taken: null }; // until the state itself is shown
    renderBoard();
    log.append(logEntry(turn));
    log.scrollTop = log.scrollHeight;
    const eliminated = turn.messages.filter((m) => / eliminated!$/.test(m));
    const rest = turn.messages.filter((m) => !/ eliminated!$/.test(m) && !/ wins?!$/.test(m));
    if (turn.eliminated && eliminated.length) {
      await dialog({ title: eliminated[0], text: rest.join(" "), big: cross() });
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
    else if (choice === "replay") navigate(`/history/${state.saved_as}`);
  }

  async function opening(state) {
    if (state.move_count === 0 && state.opening.length) {
      await dialog({ title: state.opening[0], text: state.opening.slice(1).join(" ") });
      if (state.over) victory(state);
    }
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
      receive(state);
    } catch (e) {
      mine.delete(number);
      error.textContent = e.message;
    } finally {
      sending = false;
      renderBoard();
    }
  }

  function finish() {
    if (!canPlay()) return;
    if (!selection) {
      error.textContent = "Choose what to take first: click the matches (or stones) you want.";
      return;
    }
    send({ pile: selection.pile, take: selection.take, at: selection.at ?? null });
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
    if (!shown || (!valuesToggle.checked && !learn.open)) return;
    const count = shown.move_count;
    if (analysisFor === count && analysis && analysis.available) { renderAnalysis(); return; }
    verdict.textContent = "Working it out…";
    try {
      const result = await get(`/api/games/${gameId}/analysis`);
      if (closed || !shown || result.move_count !== shown.move_count) return;
      analysis = result;
      analysisFor = result.move_count;
      renderAnalysis();
      renderBoard();
    } catch (e) {
      verdict.textContent = e.message;
    }
  }

  function renderAnalysis() {
    const a = analysis;
    verdict.textContent = a.available ? a.verdict : a.note;
    const blocks = [];
    let table = [];
    const flush = () => { if (table.length) { blocks.push(h("pre", { class: "nimsum" }, table.join("\n"))); table = []; } };
    for (const line of a.explanation) {
      if (line.startsWith("  ")) table.push(line.slice(2));
      else { flush(); blocks.push(h("p", {}, line)); }
    }
    flush();
    if (a.binary.length && !a.explanation.some((l) => l.startsWith("  "))) {
      blocks.push(h("p", { class: "muted" }, "The nim-sum in binary (for Nim without extra rules it decides the game):"));
      blocks.push(h("pre", { class: "nimsum" }, a.binary.map((l) => l.slice(2)).join("\n")));
    }
    if (a.note && a.available) blocks.push(h("p", { class: "muted" }, a.note));
    if (!a.complete && a.available) blocks.push(h("p", { class: "muted" }, "Too many moves to list them all: only the winning moves found by formula are coloured."));
    explanation.replaceChildren(...blocks);
    drawValueHistory(a.history);
  }

  function drawValueHistory(steps) {
    if (!steps.length) { valueChart.replaceChildren(); return; }
    const W = Math.max(240, steps.length * 22 + 20);
    const max = Math.max(1, ...steps.map((s) => s.remoteness || 0));
    const y = (s) => (s.remoteness === null ? 8 : 8 + (40 * (max - s.remoteness)) / max);
    const pts = steps.map((s, i) => [12 + i * 22, y(s)]);
    const svgNS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(svgNS, "svg");
    svg.setAttribute("viewBox", `0 0 ${W} 58`);
    svg.setAttribute("class", "vh");
    svg.setAttribute("style", `max-width:${W * 1.3}px`);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "Who was winning after each move (colour) and how many moves were left (height)");
    const line = document.createElementNS(svgNS, "polyline");
    line.setAttribute("points", pts.map((p) => p.join(",")).join(" "));
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", "#b9b1a2");
    line.setAttribute("stroke-width", "2");
    svg.append(line);
    steps.forEach((s, i) => {
      const c = document.createElementNS(svgNS, "circle");
      c.setAttribute("cx", pts[i][0]);
      c.setAttribute("cy", pts[i][1]);
      c.setAttribute("r", s.mistake ? 7 : 5);
      c.setAttribute("fill", s.winner === null ? "#999" : seatColour(s.winner));
      if (s.mistake) { c.setAttribute("stroke", "#b3261e"); c.setAttribute("stroke-width", "3"); }
      const title = document.createElementNS(svgNS, "title");
      title.textContent = stepText(s);
      c.append(title);
      svg.append(c);
    });
    const list = h("ol", { class: "vh-list", start: "0" }, steps.map((s) =>
      h("li", { class: s.mistake ? "mistake" : "" }, stepText(s), s.mistake ? h("span", { class: "mistake-tag" }, " — a mistake") : null)));
    valueChart.replaceChildren(...(steps.length > 1 ? [svg, list] : [list]));
  }

  function stepText(s) {
    const who = s.winner === null ? "" : shown.players[s.winner].name;
    if (s.to_move === null) return s.text;
    if (s.winner === null) return `${s.text}: no proven value`;
    const r = s.remoteness === null ? "" : ` (${s.remoteness} moves left)`;
    return `${s.text}: ${who} ${who === "You" ? "are" : "is"} winning${r}`;
  }

  async function hint() {
    hintOut.textContent = "Thinking…";
    try {
      const result = await get(`/api/games/${gameId}/hint`);
      if (closed) return;
      if (!result || !result.move) { hintOut.textContent = "Still working it out: ask again in a moment."; return; }
      hintOut.textContent = `Hint: ${result.text} (${result.claim}).`;
      if (canPlay()) {
        selection = { pile: result.move.pile, take: result.move.take, at: result.move.at };
        renderBoard();
      }
    } catch (e) {
      hintOut.textContent = e.message;
    }
  }

  // -- live updates ----------------------------------------------------------------------------
  function connect() {
    if (closed) return;
    const proto = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${proto}://${location.host}/api/games/${gameId}/live`);
    socket.onmessage = (e) => {
      let msg;
      try { msg = parseJSON(e.data); } catch { return; }
      if (msg.type === "state") receive(msg.state);
      else if (msg.type === "error") missing(msg.detail);
    };
    socket.onclose = () => {
      if (!closed && shown && !shown.over) retry = setTimeout(connect, 1500);
    };
  }

  function missing(detail) {
    closed = true;
    status.textContent = "No such game in play";
    main.replaceChildren(
      h("h1", {}, "No such game in play"),
      h("p", {}, `${detail}.`),
      h("p", {}, h("a", { href: "/", "data-link": "" }, "Set up a new game"), " or look at the ",
        h("a", { href: "/history", "data-link": "" }, "history"), "."));
  }

  get(`/api/games/${gameId}`).then((state) => { receive(state); connect(); })
    .catch((e) => { if (e.status === 404) missing(e.message); else { status.textContent = e.message; } });

  return () => {
    closed = true;
    clearTimeout(retry);
    if (socket) socket.close();
    const dlg = $("#dialog");
    if (dlg.open) dlg.close();
  };
}
