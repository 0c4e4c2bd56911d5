// The board: piles of matches or rows of stones (Kayles-like games).
//
// Selection only ever reaches legal moves, and says why when a click cannot extend it. Which
// moves are legal comes from the server (the state's `moves`); no rule is repeated here. When
// there are too many to send, any selection is offered and the server says whether it is a move.
// Moves on several piles (Wythoff's game, Moore's Nim): with a pile chosen, a click on another
// pile adds it to the move. Rows: a second click on a link between two stones turns taking the
// pair into a cut that takes nothing (where the rules allow it; key "|" at the cursor).
// Piles: hovering a match one may take highlights it and every match after it (what one click
// takes); a click chooses that amount; clicking the first match being taken gives back to the
// next smaller amount allowed. On touch screens a tap chooses the pile and the stepper below the
// board chooses how many. Rows: click one stone, or the link between two adjacent stones; click
// an adjacent stone to take more (when the rules allow it). A row is always drawn as one line
// (it scrolls sideways when long). Keyboard: Tab to a pile or row; arrows choose; Space takes
// at the cursor (rows); Enter finishes; Escape resets. Moves on several piles by keyboard: with
// a pile chosen, Tab to another pile; its arrows (or a digit) then step through the amounts
// that make a move together with the piles chosen (as the server lists them), adding the pile
// to the move; Escape first to start a move on that pile alone. Piles larger than DRAW_LIMIT
// are drawn as a number with a small bundle, never match by match.

import { h, fmt } from "./dom.js";

export const DRAW_LIMIT = 60;

const isBig = (n) => typeof n === "bigint" || n > DRAW_LIMIT;

/** The key of a move in the analysis' value map (and in the set of legal moves). */
export const moveKey = (pile, take, at, also) =>
  `${pile}:${take}:${at ?? ""}` + (also && also.length ? "+" + also.map(([p, t]) => `${p}:${t}`).join("+") : "");

/** The key of a selection or a move as the server sends it. */
export const selKey = (m) => moveKey(m.pile, m.take, m.at ?? null, m.also);

/** The set of keys of the legal moves the server sent (null: too many to send, any goes). */
export const legalSet = (moves) => (moves ? new Set(moves.map(selKey)) : null);

/** A selection's parts: [[pile, take], ...] sorted by pile. */
export const partsOf = (sel) => (sel ? [[sel.pile, sel.take], ...(sel.also || [])] : []);

/** The selection of the parts [[pile, take], ...] (null for none), sorted by pile. */
function selOf(parts) {
  const sorted = [...parts].sort((a, b) => a[0] - b[0]);
  if (!sorted.length) return null;
  return { pile: sorted[0][0], take: sorted[0][1], at: null, also: sorted.slice(1) };
}

function valueText(v) {
  if (!v) return "";
  if (v.winning === null || v.winning === undefined) return "value unknown";
  const r = v.remoteness === null || v.remoteness === undefined ? "" : ` (game over in ${v.remoteness})`;
  return v.winning ? `winning move${r}` : `losing move${r}`;
}

function vmark(v) {
  if (!v) return null;
  const cls = v.winning === true ? "win" : v.winning === false ? "lose" : "unknown";
  const text = v.remoteness === null || v.remoteness === undefined ? "" : String(v.remoteness);
  // the number is drawn by CSS (attr): the marks are pictures, their words are in the titles
  const sign = v.winning === true ? "✓" : v.winning === false ? "✗" : "?";
  return h("span", { class: `vmark ${cls}`, "aria-hidden": "true", dataset: { n: text, s: sign } });
}

/** For a pile's or a row's label (screen readers): its winning moves when the values are shown,
 * e.g. "; winning: take 2"; `mine(key)` picks its moves, `words(move)` names one. */
function valuesSummary(o, mine, words) {
  if (!o.values) return "";
  const moves = [...o.values.entries()].filter(([k]) => mine(k)).map(([, m]) => m);
  if (!moves.length) return "";
  const wins = moves.filter((m) => m.winning === true);
  if (!wins.length) return moves.every((m) => m.winning === false) ? "; every move here loses" : "; no proven winning move here";
  const shownWins = wins.slice(0, 4).map(words).join(", ");
  return `; winning: ${shownWins}${wins.length > 4 ? ` and ${wins.length - 4} more` : ""}`;
}

/** Describe a selection for people: "take 3 from pile 2", "take stones 4-5 of row 1". */
export function describeSelection(sel, rows) {
  if (!sel) return "";
  if (!rows || sel.at === null || sel.at === undefined) {
    return "take " + partsOf(sel).map(([p, t]) => `${fmt(t)} from pile ${p}`).join(" and ");
  }
  if (sel.take === 0) return `split row ${sel.pile} before stone ${sel.at}`;
  const last = sel.at + sel.take - 1;
  return sel.take === 1 ? `take stone ${sel.at} of row ${sel.pile}` : `take stones ${sel.at}-${last} of row ${sel.pile}`;
}

/** The value of a selection (when the analysis is shown), or null. */
export function selectionValue(sel, values) {
  if (!sel || !values) return null;
  return values.get(selKey(sel)) || null;
}

/**
 * Draw the board into `root`. `o` has: board, takes, maxTake, moves (the legal moves, or null),
 * shape (the state's move_shape), live, selection, cursor, values, taken (a move to show being
 * taken), and callbacks onSelect(sel), onCursor(c), onFinish(), onReset(), onMessage(text).
 */
export function drawBoard(root, o) {
  o = { ...o, legal: legalSet(o.moves), words: o.words || ["pile", "match", "matches"] };
  const focused = document.activeElement && root.contains(document.activeElement)
    ? document.activeElement.dataset.pile : null;
  const focusedInput = document.activeElement && document.activeElement.tagName === "INPUT";
  const scrolls = new Map();
  for (const el of root.querySelectorAll(".row-stones, .matches")) {
    scrolls.set(el.closest("[data-pile]").dataset.pile, el.scrollLeft);
  }
  root.classList.toggle("live", !!o.live);
  // what the piles are and what is on them (Staircase Nim: steps of coins, drawn as stairs)
  root.dataset.piles = o.board.kind === "rows" ? "row" : o.words[0];
  root.dataset.pieces = o.board.kind === "rows" ? "stone" : o.words[1];
  root.classList.toggle("values", !!o.values);
  const items = o.board.kind === "rows"
    ? o.board.rows.map((runs, i) => drawRow(i + 1, runs, o))
    : o.board.piles.map((n, i) => drawPile(i + 1, n, o));
  const joint = o.board.kind === "rows" ? null : jointMoves(o);
  const limit = o.limit === null || o.limit === undefined ? null
    : h("p", { class: "board-limit", id: "board-limit" }, `This move may take at most ${fmt(o.limit)}.`);
  const ground = o.board.kind !== "rows" && o.words[0] === "step"
    ? h("p", { class: "ground", "aria-hidden": "true" }, "the ground: coins moved down from step 1 leave the game") : null;
  // stairs are drawn bottom up (step 1 by the ground): the ground comes first
  if (ground) root.replaceChildren(ground, ...items, ...(limit ? [limit] : []));
  else root.replaceChildren(...(limit ? [limit] : []), ...items, ...(joint ? [joint] : []));
  for (const el of root.querySelectorAll(".row-stones, .matches")) {
    const left = scrolls.get(el.closest("[data-pile]").dataset.pile);
    if (left) el.scrollLeft = left;
  }
  const mark = root.querySelector(".stone.cursor") || root.querySelector(".stone.taking");
  if (mark) {
    const line = mark.closest(".row-stones");
    const a = mark.offsetLeft - line.offsetLeft;
    if (a < line.scrollLeft || a + mark.offsetWidth > line.scrollLeft + line.clientWidth) {
      line.scrollLeft = Math.max(0, a - line.clientWidth / 2);
    }
  }
  if (focused) {
    const target = root.querySelector(`[data-pile="${focused}"]`);
    if (target) {
      const input = focusedInput && target.querySelector("input");
      (input || target).focus();
    }
  }
}

const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);
/** What a pile is called ("pile"; Staircase Nim: "step"), and with a capital. */
const w = (o) => o.words[0];
const W = (o) => capital(o.words[0]);

// -- piles ------------------------------------------------------------------------------------

/**
 * Under the piles of a game whose moves may take from several piles (Wythoff's game, Moore's
 * Nim), when the values are shown: every such move with its value, winning ones first, each a
 * button that chooses it (their values are also on the matches once a pile is chosen). Null
 * when there are none.
 */
function jointMoves(o) {
  if (o.shape !== "several-piles" || !o.values) return null;
  const moves = [...o.values.values()].filter((m) => m.also && m.also.length);
  if (!moves.length) return null;
  const rank = (m) => (m.winning === true ? 0 : m.winning === null || m.winning === undefined ? 1 : 2);
  moves.sort((a, b) => rank(a) - rank(b));
  const items = moves.map((m) => {
    const sel = { pile: m.pile, take: m.take, at: null, also: m.also };
    const words = partsOf(sel).map(([p, t]) => `${fmt(t)} from ${p}`).join(" + ");
    const label = `${capital(describeSelection(sel))}: ${valueText(m)}`;
    const chosen = o.selection && selKey(o.selection) === selKey(sel);
    const mark = vmark(m);
    mark.classList.add("inline");
    return h("li", {}, o.live
      ? h("button", { type: "button", class: "joint-move" + (chosen ? " chosen" : ""), title: label, "aria-label": label,
        "aria-pressed": chosen ? "true" : "false", onclick: () => o.onSelect(chosen ? null : sel) }, mark, words)
      : h("span", { class: "joint-move", title: label }, mark, words, h("span", { class: "visually-hidden" }, `: ${valueText(m)}`)));
  });
  const wins = moves.filter((m) => m.winning === true).length;
  return h("div", { class: "joint", role: "group", "aria-label": "Moves on several piles" },
    h("p", { class: "joint-title" }, `Moves on several piles (${fmt(moves.length)}; ${wins ? `${fmt(wins)} winning` : "none winning"})`
      + (moves.length > 8 ? ", winning first; the list scrolls:" : ":")),
    h("div", { class: "joint-scroll", ...(moves.length > 8 ? { tabindex: "0", role: "region", "aria-label": "Moves on several piles (scrolls)" } : {}) },
      h("ul", { class: "joint-list" }, items)));
}

/** "1, 3 or 4", "1 to 5": the amounts one may take, for messages. */
export function takesText(takes) {
  if (!takes || !takes.length) return "nothing";
  const t = [...takes].sort((a, b) => a - b);
  const run = t.every((k, i) => k === t[0] + i);
  if (run && t.length > 2) return `${fmt(t[0])} to ${fmt(t[t.length - 1])}`;
  const words = t.map(fmt);
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;
}

/** What one may take from a pile, for messages: the game's rule, or this move's limit (in a
 * game whose position carries one: Fibonacci Nim). */
const mayTake = (o, legal) => (o.limit === null || o.limit === undefined
  ? `in this game you may take ${takesText(legal)} from it`
  : `this move may take at most ${fmt(o.limit)} (${takesText(legal)} from this ${w(o)})`);

/** Whether this page is used with a finger (tap the pile, then the stepper). */
export const coarse = () => matchMedia("(pointer: coarse)").matches;

function legalTakes(o, i) {
  return [...((o.takes && o.takes[i - 1]) || [])].sort((a, b) => a - b);
}

/** The amount the selection takes from pile `i` (0: none). */
const takenFrom = (sel, i) => {
  const part = partsOf(sel).find(([p]) => p === i);
  return part ? part[1] : 0;
};

/** Whether a move is legal as far as the page knows (the server decides when it sent none). */
const isLegal = (o, sel) => !o.legal || o.legal.has(selKey(sel));

/** The selection after choosing `take` from pile `i` in a game of moves on several piles: the
 * pile is added to (or changed in, or with 0 dropped from) the move; null when that is no move. */
function withPart(o, i, take) {
  const parts = partsOf(o.selection).filter(([p]) => p !== i);
  if (take) parts.push([i, take]);
  const sel = selOf(parts);
  return sel && isLegal(o, sel) ? sel : null;
}

function drawPile(i, n, o) {
  const several = o.shape === "several-piles";
  const sel = takenFrom(o.selection, i);
  const others = several && o.selection && partsOf(o.selection).some(([p]) => p !== i);
  const taken = o.taken && o.taken.pile === i ? o.taken.take : 0;
  if (isBig(n)) return compactPile(i, n, o, sel, taken);
  const legal = legalTakes(o, i);
  const takes = new Set(legal);
  const joins = (take) => others && withPart(o, i, take) !== null; // added to the move so far
  const matches = [];
  for (let j = 1; j <= n; j++) {
    const take = n - j + 1;
    const can = o.live && (takes.has(take) || joins(take));
    // with other piles chosen, a match stands for the move that adds this pile to them (as its
    // click does), else for taking from this pile alone
    const joint = others ? withPart(o, i, take) : null;
    const v = o.values ? o.values.get(joint ? selKey(joint) : moveKey(i, take, null)) : null;
    const what = joint ? capital(describeSelection(joint)) : `Take ${fmt(take)}` + (others ? ` from ${w(o)} ${i} alone` : "");
    const cls = ["match"];
    if (can) cls.push("can");
    if (take <= sel) cls.push("taking");
    if (take <= taken) cls.push("taken");
    matches.push(h("span", {
      class: cls.join(" "),
      dataset: { take: String(take) },
      title: o.live ? (can ? `${what}${v ? ": " + valueText(v) : ""}` : `Taking ${take} is not a move here`)
        : v ? `${what}: ${valueText(v)}` : null,
    }, vmark(v)));
  }
  const label = `${W(o)} ${i}: ${n} ${n === 1 ? o.words[1] : o.words[2]}` + (sel ? `, taking ${sel}` : "")
    + (sel && o.values ? ` (${valueText(o.values.get(selKey(o.selection))) || "value unknown"})` : "")
    + valuesSummary(o, (k) => k.startsWith(`${i}:`) && !k.includes("+"), (m) => `take ${fmt(m.take)}`);
  const el = h("div", {
    class: "pile" + (sel ? " fixed" : "") + (n > 24 ? " dense" : ""),
    style: `--step:${i}`,
    role: "group",
    tabindex: o.live ? "0" : null,
    "aria-label": label,
    "aria-keyshortcuts": o.live ? "ArrowLeft ArrowRight Home End Enter Escape" : null,
    dataset: { pile: String(i) },
  },
  h("span", { class: "pile-label", "aria-hidden": "true" }, i),
  // a long pile scrolls sideways on a small screen; the keys choose within it, so the box
  // itself is no Tab stop of its own
  h("div", { class: "matches", tabindex: "-1" }, matches),
  h("span", { class: "pile-count", "aria-hidden": "true" }, n === 0 ? "empty" : fmt(n)),
  h("span", { class: "minus" }, taken ? `−${fmt(taken)}` : sel ? `−${fmt(sel)}` : ""));
  if (o.live) {
    el.addEventListener("click", (e) => {
      const match = e.target.closest(".match");
      if (n === 0) { o.onMessage(`${W(o)} ${i} is empty: choose another ${w(o)}.`); return; }
      if (!legal.length) { o.onMessage(`No move is possible from ${w(o)} ${i}.`); return; }
      if (!match || coarse()) {
        // A tap on the pile (a finger is wider than a match: the whole pile is the target):
        // choose the pile, then the stepper. With other piles chosen, the pile is added to the
        // move (the least that makes one with them); tapped again, it is chosen alone.
        const joint = others && !sel ? Array.from({ length: n }, (_, k) => k + 1).find(joins) : undefined;
        if (joint !== undefined) o.onSelect(withPart(o, i, joint));
        else if (!sel || others) {
          if (legal.length) o.onSelect({ pile: i, take: legal[0], at: null });
          else o.onMessage(`No move is possible from ${w(o)} ${i} alone.`);
        }
        return;
      }
      const take = Number(match.dataset.take);
      if (others) { // a move on several piles: add this pile to it (or change or drop it)
        const next = withPart(o, i, take === sel ? 0 : take);
        if (next) { o.onSelect(next); return; }
        if (!takes.has(take)) {
          o.onMessage(`Taking ${fmt(take)} from ${w(o)} ${i} together with the piles chosen is not a move in this game.`);
          return;
        }
      }
      if (!takes.has(take)) {
        o.onMessage(`You cannot take ${fmt(take)} from ${w(o)} ${i}: ${mayTake(o, legal)}.`);
        return;
      }
      if (take === sel) { // give back: the next smaller amount one may take, or nothing
        const smaller = legal.filter((k) => k < take);
        o.onSelect(smaller.length ? { pile: i, take: smaller[smaller.length - 1], at: null } : null);
        return;
      }
      o.onSelect({ pile: i, take, at: null });
    });
    el.addEventListener("keydown", (e) => {
      // a move on several piles: the keys add this pile to the piles chosen, with the amounts
      // that make a move together (else, as for one pile, they choose a move on it alone)
      const joint = others ? Array.from({ length: n }, (_, k) => k + 1).filter(joins) : [];
      if (joint.length) pileKey(e, i, n, sel, joint, o, (take) => withPart(o, i, take));
      else pileKey(e, i, n, sel, legal, o);
    });
  }
  return el;
}

/** The next legal amount after `sel` in direction `dir` (+1 / -1), or undefined. */
export function stepTake(legal, sel, dir) {
  if (dir > 0) return legal.find((k) => k > sel);
  const smaller = legal.filter((k) => k < sel);
  return smaller.length ? smaller[smaller.length - 1] : undefined;
}

/** A key on pile `i`: choose among the amounts `legal`; `select(take)` is the selection that
 * takes `take` (0: none) from it (default: a move on this pile alone). */
function pileKey(e, i, n, sel, legal, o, select = (take) => (take > 0 ? { pile: i, take, at: null } : null)) {
  let next;
  switch (e.key) {
    case "ArrowRight": case "ArrowUp": case "+": case "=":
      next = stepTake(legal, sel, 1);
      if (next === undefined) {
        e.preventDefault();
        o.onMessage(legal.length ? `${fmt(sel || 0)} is the most you can take from ${w(o)} ${i} in this game.` : `No move is possible from ${w(o)} ${i}.`);
        return;
      }
      break;
    case "ArrowLeft": case "ArrowDown": case "-":
      next = stepTake(legal, sel, -1) ?? 0; break;
    case "Home": next = legal.length ? legal[0] : 0; break;
    case "End": next = legal.length ? legal[legal.length - 1] : 0; break;
    case "Enter": e.preventDefault(); o.onFinish(); return;
    case "Escape": e.preventDefault(); o.onReset(); return;
    default:
      if (/^[0-9]$/.test(e.key)) {
        next = Number(e.key);
        if (next && !legal.includes(next)) {
          e.preventDefault();
          o.onMessage(`You cannot take ${next} from ${w(o)} ${i}: ${mayTake(o, legal)}.`);
          return;
        }
      } else return;
  }
  e.preventDefault();
  if (n === 0) { o.onMessage(`${W(o)} ${i} is empty.`); return; }
  o.onSelect(select(next));
}

function compactPile(i, n, o, sel, taken) {
  const bundle = h("span", { class: "bundle", "aria-hidden": "true" },
    Array.from({ length: 7 }, () => h("span", { class: "match" })));
  const wins = o.values
    ? [...o.values.entries()].filter(([k, v]) => k.startsWith(`${i}:`) && !k.includes("+") && v.winning).slice(0, 2)
    : [];
  const parts = [
    h("span", { class: "pile-label", "aria-hidden": "true" }, i),
    h("div", { class: "compact" },
      bundle,
      h("span", { class: "big-number" + (fmt(n).length > 15 ? " long" : "") }, fmt(n)),
      h("span", { class: "muted" }, n === 1 ? o.words[1] : o.words[2]),
      o.live ? h("label", {}, "Take ",
        h("input", {
          type: "text",
          inputmode: "numeric",
          autocomplete: "off",
          "aria-label": `How many to take from ${w(o)} ${i}`,
          value: sel ? String(sel) : "",
          onchange: (e) => compactInput(e, i, o),
          onkeydown: (e) => {
            if (e.key === "Enter") { e.preventDefault(); if (compactInput(e, i, o)) o.onFinish(); }
            if (e.key === "Escape") { e.preventDefault(); o.onReset(); }
          },
        })) : null,
      wins.map(([k]) => h("span", { class: "hint-badge" }, `winning: take ${fmt(BigInt(k.split(":")[1]))}`)),
      taken ? h("span", { class: "minus" }, `−${fmt(taken)}`) : null),
  ];
  return h("div", {
    class: "pile big" + (sel ? " fixed" : ""),
    role: "group",
    "aria-label": `${W(o)} ${i}: ${fmt(n)} ${o.words[2]}`,
    dataset: { pile: String(i) },
  }, parts);
}

function compactInput(e, i, o) {
  const text = e.target.value.replace(/[\s,_]/g, "");
  if (!text) { o.onSelect(null); return false; }
  if (!/^\d+$/.test(text)) { o.onMessage("Type how many to take as a whole number, e.g. 1000."); return false; }
  const big = BigInt(text);
  const take = big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
  o.onSelect(take ? { pile: i, take, at: null } : null);
  return !!take;
}

// -- rows of stones ---------------------------------------------------------------------------

function stonesOf(runs) {
  const out = [];
  let at = 1;
  runs.forEach((len, k) => {
    for (let j = 0; j < len; j++) out.push({ at: at++, present: k % 2 === 0 });
  });
  return out;
}

/** The run of present stones around stone `at` (1-based) as [first, last], or null. */
function runAround(stones, at) {
  const s = stones[at - 1];
  if (!s || !s.present) return null;
  let a = at;
  let b = at;
  while (a > 1 && stones[a - 2].present) a--;
  while (b < stones.length && stones[b].present) b++;
  return [a, b];
}

/**
 * Why taking `take` stones from `at` in row `r` is not a move (null: it is one, or the server
 * sent no list and decides). `take` 0 is a cut before stone `at`. `legal` is the set of legal
 * moves' keys.
 */
export function rowMoveProblem(stones, legal, r, at, take) {
  const last = at + Math.max(take, 1) - 1;
  const run = runAround(stones, at);
  if (take === 0) {
    if (!run || at === run[0]) return `a cut goes between two stones of one run`;
  } else if (!run || last > run[1]) return `stones ${at}-${last} are not next to each other (a gap is between them)`;
  if (!legal || legal.has(moveKey(r, take, at))) return null;
  // what the game allows anywhere (its rule, as far as this position shows it), and in this run
  const anywhere = new Set();
  const here = new Set();
  const cutsHere = [];
  for (const key of legal) {
    const [p, t, a] = key.split(":").map(Number);
    if (Number.isNaN(a)) continue;
    anywhere.add(t);
    if (p === r && a >= run[0] && a <= run[1]) {
      here.add(t);
      if (t === 0) cutsHere.push(a);
    }
  }
  const count = (ts) => `${takesText(ts)} ${ts.length === 1 && ts[0] === 1 ? "stone" : "stones"}`;
  const takes = [...anywhere].filter((t) => t > 0);
  const rule = takes.length
    ? `a move takes ${count(takes)}` + (anywhere.has(0) ? " (or cuts a run in two)" : "")
    : anywhere.has(0) ? "a move cuts a run in two and takes no stones" : "no move is possible";
  const len = run[1] - run[0] + 1;
  if (take === 0) {
    if (!anywhere.has(0)) return `in this game ${rule}; no move cuts a run without taking`;
    const left = at - run[0];
    const right = run[1] - at + 1;
    const unequal = [];
    for (let a = run[0] + 1; a <= run[1]; a++) if (a - run[0] !== run[1] - a + 1) unequal.push(a);
    if (left === right && unequal.length && unequal.every((a) => cutsHere.includes(a))) {
      return `in this game a cut into two equal parts (${left} and ${right}) is not a move`;
    }
    return cutsHere.length
      ? `in this game a cut there is not a move (this run may be cut before stone ${takesText(cutsHere)})`
      : `in this game this run of ${len} cannot be cut`;
  }
  if (!takes.includes(take)) return `in this game ${rule}`;
  const amounts = [...here].filter((t) => t > 0);
  if (!amounts.length) return `no move takes stones from this run of ${len} (in this game ${rule})`;
  return `in this game taking ${take} there is not a move (from this run a move takes ${count(amounts)})`;
}

/**
 * The selection after clicking stone `at` of row `r`: one stone, or growing or shrinking a run
 * of them — only ever a legal move. Returns {sel} or {message} (why the click cannot do it).
 */
export function clickStone(sel, r, at, stones, legal, exact = false) {
  const ok = (a, t) => rowMoveProblem(stones, legal, r, a, t) === null;
  const fresh = () => {
    if (ok(at, 1)) return { sel: { pile: r, at, take: 1 } };
    if (exact) { // a touch screen: a stone's tap takes that stone; the lines below take more
      return { message: `No move takes stone ${at} alone: ${rowMoveProblem(stones, legal, r, at, 1)}. Tap a mark in the lines under the row.` };
    }
    for (let t = 2; t <= stones.length; t++) {
      if (ok(at, t)) return { sel: { pile: r, at, take: t } };
      if (at - t + 1 >= 1 && ok(at - t + 1, t)) return { sel: { pile: r, at: at - t + 1, take: t } };
    }
    return { message: `No move takes stone ${at} here: ${rowMoveProblem(stones, legal, r, at, 1)}.` };
  };
  if (!sel || sel.pile !== r || sel.take === 0) return fresh();
  const last = sel.at + sel.take - 1;
  if (at >= sel.at && at <= last) {
    if (sel.take === 1) return { sel: null };
    if (at === sel.at && ok(at + 1, sel.take - 1)) return { sel: { pile: r, at: at + 1, take: sel.take - 1 } };
    if (at === last && ok(sel.at, sel.take - 1)) return { sel: { pile: r, at: sel.at, take: sel.take - 1 } };
    return { sel: null };
  }
  if (at === sel.at - 1 || at === last + 1) {
    const a = Math.min(at, sel.at);
    const problem = rowMoveProblem(stones, legal, r, a, sel.take + 1);
    if (problem === null) return { sel: { pile: r, at: a, take: sel.take + 1 } };
    return { message: `Taking stones ${a}-${a + sel.take} is not a move: ${problem}.` };
  }
  return fresh();
}

/**
 * The selection after clicking the link between stones `a` and `a + 1` of row `r`: the pair,
 * then (clicked again, or when the pair is no move) a cut before stone `a + 1` that takes
 * nothing, then nothing. Returns {sel} or {message}.
 */
export function clickLink(sel, r, a, stones, legal) {
  const pair = rowMoveProblem(stones, legal, r, a, 2) === null;
  const cut = rowMoveProblem(stones, legal, r, a + 1, 0) === null;
  const onPair = sel && sel.pile === r && sel.take === 2 && sel.at === a;
  const onCut = sel && sel.pile === r && sel.take === 0 && sel.at === a + 1;
  if (onCut) return { sel: null };
  if (cut && (onPair || !pair)) return { sel: { pile: r, at: a + 1, take: 0 } };
  if (pair && !onPair) return { sel: { pile: r, at: a, take: 2 } };
  if (onPair) return { sel: null };
  if (rowMoveProblem(stones, legal, r, a + 1, 0) !== null && [...(legal || [])].some((k) => k.startsWith(`${r}:0:`))) {
    return { message: `Neither taking stones ${a}-${a + 1} nor a cut between them is a move here: ${rowMoveProblem(stones, legal, r, a + 1, 0)}.` };
  }
  return { message: `Taking stones ${a}-${a + 1} is not a move: ${rowMoveProblem(stones, legal, r, a, 2)}.` };
}

function drawRow(r, runs, o) {
  const stones = stonesOf(runs);
  const sel = o.selection && o.selection.pile === r ? o.selection : null;
  const taken = o.taken && o.taken.pile === r ? o.taken : null;
  const covers = (m, at) => m && at >= m.at && at < m.at + m.take;
  const cuts = (m, at) => m && m.take === 0 && m.at === at + 1;
  const legal = (a, t) => rowMoveProblem(stones, o.legal, r, a, t) === null;
  const cursorAt = o.cursor && o.cursor.pile === r ? o.cursor.at : null;
  // on a touch screen a link is too narrow to tap: pairs get a line of marks of their own
  const touch = coarse();
  const parts = [];
  stones.forEach((s, idx) => {
    if (!s.present) {
      parts.push(h("span", { class: "hole", "aria-hidden": "true", dataset: { at: String(s.at) } }));
      const next = stones[idx + 1];
      if (next) parts.push(h("span", { class: "link", "aria-hidden": "true" }));
      return;
    }
    const v1 = o.values ? o.values.get(moveKey(r, 1, s.at)) : null;
    const cls = ["stone"];
    const can = o.live && (legal(s.at, 1) || legal(s.at, 2) || (s.at > 1 && legal(s.at - 1, 2)));
    if (can) cls.push("can");
    if (covers(sel, s.at)) cls.push("taking");
    if (covers(taken, s.at)) cls.push("taken");
    if (cursorAt === s.at) cls.push("cursor");
    parts.push(h("span", {
      class: cls.join(" "),
      dataset: { at: String(s.at) },
      title: o.live ? `Stone ${s.at}${v1 ? ": " + valueText(v1) : ""}` : null,
    }, vmark(v1)));
    const next = stones[idx + 1];
    if (next && next.present) {
      const v2 = o.values ? o.values.get(moveKey(r, 2, s.at)) : null;
      const pair = o.live && legal(s.at, 2);
      const cut = o.live && legal(s.at + 1, 0);
      const vc = o.values ? o.values.get(moveKey(r, 0, s.at + 1)) : null;
      const what = [pair ? `stones ${s.at}-${s.at + 1}${v2 ? ": " + valueText(v2) : ""}` : "",
        cut ? `${pair ? "click again to cut" : "cut"} between them${vc ? ": " + valueText(vc) : ""}` : ""].filter(Boolean).join("; ");
      parts.push(h("span", {
        class: "link" + (pair || cut ? " can" : "") + (cut ? " cut" : "")
          + (cuts(sel, s.at) || cuts(taken, s.at) ? " cutting" : ""),
        dataset: { pair: String(s.at) },
        title: what ? what[0].toUpperCase() + what.slice(1) : null,
      }, touch ? null : vmark(v2)));
    } else if (next) {
      parts.push(h("span", { class: "link", "aria-hidden": "true" }));
    }
  });
  const present = stones.filter((s) => s.present).length;
  const cursorValue = cursorAt !== null && o.values ? o.values.get(moveKey(r, 1, cursorAt)) : null;
  const label = `Row ${r}: ${present} ${present === 1 ? "stone" : "stones"} in ${stones.length} places`
    + (sel ? `, ${describeSelection(sel, true).replace(/^take/, "taking").replace(/^split/, "splitting")}` : "")
    + (cursorAt !== null ? `, at stone ${cursorAt}${cursorValue ? ` (taking it: ${valueText(cursorValue)})` : ""}` : "")
    + valuesSummary(o, (k) => k.startsWith(`${r}:`), (m) => describeSelection(m, true));
  const shown = taken || sel;
  // lines of marks for the other moves: with the values shown, or on a touch screen (where
  // they are the targets of moves no stone's tap makes: pairs, longer runs, cuts)
  const strips = o.values || (touch && o.live && o.legal) ? moveStrips(r, stones, o, touch) : [];
  // the line of stones carries the marks of taking one stone (and, with a mouse, two)
  const keys = o.values ? [...o.values.keys()] : o.legal ? [...o.legal] : [];
  const onLine = [1, 2].filter((t) => (t === 1 || !touch) && keys.some((k) => k.startsWith(`${r}:${t}:`)));
  const lineLabel = onLine.length ? `take ${onLine.join(", ")}` : "";
  const line = h("div", { class: "row-stones" + (stones.length > (touch ? 6 : 20) ? " long" : ""), tabindex: "-1", dataset: { row: String(r) } },
    h("div", { class: "row-line" }, strips.length ? h("span", { class: "strip-label", "aria-hidden": "true", dataset: { label: lineLabel } }) : null, parts), ...strips);
  const el = h("div", {
    class: "stones",
    role: "group",
    tabindex: o.live ? "0" : null,
    "aria-label": label,
    dataset: { pile: String(r) },
  },
  h("span", { class: "pile-label", "aria-hidden": "true" }, r),
  line,
  h("span", { class: "minus" }, shown ? (shown.take === 0 ? "cut" : `−${shown.take}`) : ""));
  if (o.live) {
    const apply = (result) => {
      if (result.message) o.onMessage(result.message);
      else o.onSelect(result.sel);
    };
    el.addEventListener("click", (e) => {
      const link = e.target.closest(".link");
      if (link && link.dataset.pair) {
        apply(clickLink(o.selection, r, Number(link.dataset.pair), stones, o.legal));
        return;
      }
      const stone = e.target.closest(".stone");
      if (stone) apply(clickStone(o.selection, r, Number(stone.dataset.at), stones, o.legal, touch && !!o.legal));
    });
    el.addEventListener("keydown", (e) => rowKey(e, r, stones, o, apply));
    el.addEventListener("focus", () => {
      // Keyboard focus shows a cursor; a mouse press must not redraw the row under the click.
      if (el.matches(":focus-visible") && (!o.cursor || o.cursor.pile !== r)) {
        const first = stones.find((s) => s.present);
        if (first) o.onCursor({ pile: r, at: first.at });
      }
    });
  }
  return el;
}

/**
 * One line under row `r` for every other amount a move may take (3 or more, or 0: a cut that
 * takes nothing), drawn in step with the stones: each move's mark sits under the first stone it
 * takes (a cut: under the gap it cuts), coloured by its value, so every legal move is seen.
 */
function moveStrips(r, stones, o, touch = false) {
  const byTake = new Map();
  const entries = o.values ? o.values.entries() : [...o.legal].map((key) => [key, null]);
  for (const [key, v] of entries) {
    const [pile, take, at] = key.split(":");
    if (Number(pile) !== r || at === "" || take === "1" || (take === "2" && !touch)) continue;
    if (!byTake.has(Number(take))) byTake.set(Number(take), new Map());
    byTake.get(Number(take)).set(Number(at), v);
  }
  return [...byTake.keys()].sort((a, b) => a - b).map((take) => {
    const marks = byTake.get(take);
    const cells = [];
    const mark = (at) => {
      if (!marks.has(at)) return null;
      const v = marks.get(at);
      const what = take === 0 ? `Cut before stone ${at}` : `Stones ${at}-${at + take - 1}`;
      const m = v ? vmark(v) : h("span", { class: "vmark plain", "aria-hidden": "true", dataset: { n: take === 0 ? "|" : String(take) } });
      m.classList.add("strip-mark");
      m.dataset.at = String(at);
      m.title = v ? `${what}: ${valueText(v)}` : what;
      return m;
    };
    stones.forEach((s, idx) => {
      cells.push(h("span", { class: "slot" }, take === 0 ? null : mark(s.at)));
      if (stones[idx + 1]) cells.push(h("span", { class: "gap" }, take === 0 ? mark(s.at + 1) : null));
    });
    const label = take === 0 ? "cut" : `take ${take}`;
    const strip = h("div", { class: "row-strip", dataset: { take: String(take) } },
      h("span", { class: "strip-label", "aria-hidden": "true", dataset: { label } }), ...cells);
    if (o.live) {
      strip.addEventListener("click", (e) => {
        const m = e.target.closest(".strip-mark");
        if (!m) return;
        e.stopPropagation();
        o.onSelect({ pile: r, at: Number(m.dataset.at), take });
      });
    }
    return strip;
  });
}

function rowKey(e, r, stones, o, apply) {
  const present = stones.filter((s) => s.present).map((s) => s.at);
  if (!present.length) return;
  const cur = o.cursor && o.cursor.pile === r ? o.cursor.at : present[0];
  const idx = Math.max(0, present.indexOf(cur));
  switch (e.key) {
    case "ArrowRight": case "ArrowDown":
      e.preventDefault(); o.onCursor({ pile: r, at: present[Math.min(present.length - 1, idx + 1)] }); return;
    case "ArrowLeft": case "ArrowUp":
      e.preventDefault(); o.onCursor({ pile: r, at: present[Math.max(0, idx - 1)] }); return;
    case "Home": e.preventDefault(); o.onCursor({ pile: r, at: present[0] }); return;
    case "End": e.preventDefault(); o.onCursor({ pile: r, at: present[present.length - 1] }); return;
    case " ": case "Spacebar":
      e.preventDefault(); apply(clickStone(o.selection, r, cur, stones, o.legal)); return;
    case "|": case "c": { // a cut before the stone at the cursor (where the rules allow it)
      e.preventDefault();
      const problem = rowMoveProblem(stones, o.legal, r, cur, 0);
      if (problem) o.onMessage(`No cut before stone ${cur}: ${problem}.`);
      else o.onSelect({ pile: r, at: cur, take: 0 });
      return;
    }
    case "Enter": e.preventDefault(); o.onFinish(); return;
    case "Escape": e.preventDefault(); o.onReset(); return;
    default:
  }
}
