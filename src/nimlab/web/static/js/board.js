// The board: piles of matches or rows of stones (Kayles-like games).
//
// Selection only ever reaches legal moves, and says why when a click cannot extend it.
// Piles: hovering a match one may take highlights it and every match after it (what one click
// takes); a click chooses that amount; clicking the first match being taken gives back to the
// next smaller amount allowed. On touch screens a tap chooses the pile and the stepper below the
// board chooses how many. Rows: click one stone, or the link between two adjacent stones; click
// an adjacent stone to take more (when the rules allow it). A row is always drawn as one line
// (it scrolls sideways when long). Keyboard: Tab to a pile or row; arrows choose; Space takes
// at the cursor (rows); Enter finishes; Escape resets. Piles larger than DRAW_LIMIT are drawn
// as a number with a small bundle, never match by match.

import { h, fmt } from "./dom.js";

export const DRAW_LIMIT = 60;

const isBig = (n) => typeof n === "bigint" || n > DRAW_LIMIT;

/** The key of a move in the analysis' value map. */
export const moveKey = (pile, take, at) => `${pile}:${take}:${at ?? ""}`;

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
  return h("span", { class: `vmark ${cls}`, "aria-hidden": "true", dataset: { n: text } });
}

/** Describe a selection for people: "take 3 from pile 2", "take stones 4-5 of row 1". */
export function describeSelection(sel, rows) {
  if (!sel) return "";
  if (!rows || sel.at === null || sel.at === undefined) return `take ${fmt(sel.take)} from pile ${sel.pile}`;
  const last = sel.at + sel.take - 1;
  return sel.take === 1 ? `take stone ${sel.at} of row ${sel.pile}` : `take stones ${sel.at}-${last} of row ${sel.pile}`;
}

/** The value of a selection (when the analysis is shown), or null. */
export function selectionValue(sel, values) {
  if (!sel || !values) return null;
  return values.get(moveKey(sel.pile, sel.take, sel.at ?? null)) || null;
}

/**
 * Draw the board into `root`. `o` has: board, takes, maxTake, live, selection, cursor, values,
 * taken (a move to show being taken), and callbacks onSelect(sel), onCursor(c), onFinish(),
 * onReset(), onMessage(text).
 */
export function drawBoard(root, o) {
  const focused = document.activeElement && root.contains(document.activeElement)
    ? document.activeElement.dataset.pile : null;
  const focusedInput = document.activeElement && document.activeElement.tagName === "INPUT";
  const scrolls = new Map();
  for (const el of root.querySelectorAll(".row-stones, .matches")) {
    scrolls.set(el.closest("[data-pile]").dataset.pile, el.scrollLeft);
  }
  root.classList.toggle("live", !!o.live);
  root.classList.toggle("values", !!o.values);
  const items = o.board.kind === "rows"
    ? o.board.rows.map((runs, i) => drawRow(i + 1, runs, o))
    : o.board.piles.map((n, i) => drawPile(i + 1, n, o));
  root.replaceChildren(...items);
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

// -- piles ------------------------------------------------------------------------------------

/** "1, 3 or 4", "1 to 5": the amounts one may take, for messages. */
export function takesText(takes) {
  if (!takes || !takes.length) return "nothing";
  const t = [...takes].sort((a, b) => a - b);
  const run = t.every((k, i) => k === t[0] + i);
  if (run && t.length > 2) return `${fmt(t[0])} to ${fmt(t[t.length - 1])}`;
  const words = t.map(fmt);
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;
}

/** Whether this page is used with a finger (tap the pile, then the stepper). */
export const coarse = () => matchMedia("(pointer: coarse)").matches;

function legalTakes(o, i) {
  return [...((o.takes && o.takes[i - 1]) || [])].sort((a, b) => a - b);
}

function drawPile(i, n, o) {
  const sel = o.selection && o.selection.pile === i ? o.selection.take : 0;
  const taken = o.taken && o.taken.pile === i ? o.taken.take : 0;
  if (isBig(n)) return compactPile(i, n, o, sel, taken);
  const legal = legalTakes(o, i);
  const takes = new Set(legal);
  const matches = [];
  for (let j = 1; j <= n; j++) {
    const take = n - j + 1;
    const can = o.live && takes.has(take);
    const v = o.values ? o.values.get(moveKey(i, take, null)) : null;
    const cls = ["match"];
    if (can) cls.push("can");
    if (take <= sel) cls.push("taking");
    if (take <= taken) cls.push("taken");
    matches.push(h("span", {
      class: cls.join(" "),
      dataset: { take: String(take) },
      title: o.live ? (can ? `Take ${take}${v ? ": " + valueText(v) : ""}` : `Taking ${take} is not a move here`) : null,
    }, vmark(v)));
  }
  const label = `Pile ${i}: ${n} ${n === 1 ? "match" : "matches"}` + (sel ? `, taking ${sel}` : "");
  const el = h("div", {
    class: "pile" + (sel ? " fixed" : "") + (n > 24 ? " dense" : ""),
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
      if (n === 0) { o.onMessage(`Pile ${i} is empty: choose another pile.`); return; }
      if (!legal.length) { o.onMessage(`No move is possible from pile ${i}.`); return; }
      if (!match || (coarse() && !match.classList.contains("can"))) {
        // A tap on the pile (a finger is wider than a match): choose the pile, then the stepper.
        if (!sel) o.onSelect({ pile: i, take: legal[0], at: null });
        return;
      }
      const take = Number(match.dataset.take);
      if (!takes.has(take)) {
        o.onMessage(`You cannot take ${fmt(take)} from pile ${i}: in this game you may take ${takesText(legal)} from it.`);
        return;
      }
      if (take === sel) { // give back: the next smaller amount one may take, or nothing
        const smaller = legal.filter((k) => k < take);
        o.onSelect(smaller.length ? { pile: i, take: smaller[smaller.length - 1], at: null } : null);
        return;
      }
      o.onSelect({ pile: i, take, at: null });
    });
    el.addEventListener("keydown", (e) => pileKey(e, i, n, sel, legal, o));
  }
  return el;
}

/** The next legal amount after `sel` in direction `dir` (+1 / -1), or undefined. */
export function stepTake(legal, sel, dir) {
  if (dir > 0) return legal.find((k) => k > sel);
  const smaller = legal.filter((k) => k < sel);
  return smaller.length ? smaller[smaller.length - 1] : undefined;
}

function pileKey(e, i, n, sel, legal, o) {
  let next;
  switch (e.key) {
    case "ArrowRight": case "ArrowUp": case "+": case "=":
      next = stepTake(legal, sel, 1);
      if (next === undefined) {
        e.preventDefault();
        o.onMessage(legal.length ? `${fmt(sel || 0)} is the most you can take from pile ${i} in this game.` : `No move is possible from pile ${i}.`);
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
          o.onMessage(`You cannot take ${next} from pile ${i}: in this game you may take ${takesText(legal)} from it.`);
          return;
        }
      } else return;
  }
  e.preventDefault();
  if (n === 0) { o.onMessage(`Pile ${i} is empty.`); return; }
  o.onSelect(next > 0 ? { pile: i, take: next, at: null } : null);
}

function compactPile(i, n, o, sel, taken) {
  const bundle = h("span", { class: "bundle", "aria-hidden": "true" },
    Array.from({ length: 7 }, () => h("span", { class: "match" })));
  const wins = o.values
    ? [...o.values.entries()].filter(([k, v]) => k.startsWith(`${i}:`) && v.winning).slice(0, 2)
    : [];
  const parts = [
    h("span", { class: "pile-label", "aria-hidden": "true" }, i),
    h("div", { class: "compact" },
      bundle,
      h("span", { class: "big-number" + (fmt(n).length > 15 ? " long" : "") }, fmt(n)),
      h("span", { class: "muted" }, n === 1 ? "match" : "matches"),
      o.live ? h("label", {}, "Take ",
        h("input", {
          type: "text",
          inputmode: "numeric",
          autocomplete: "off",
          "aria-label": `How many to take from pile ${i}`,
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
    "aria-label": `Pile ${i}: ${fmt(n)} matches`,
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
 * Why taking `take` stones from `at` in a row is not a move (null: it is one). `digits[k]` is
 * the rule's code digit for taking k: 1 may empty a run, 2 may leave one part, 4 two parts.
 */
export function rowMoveProblem(stones, digits, at, take) {
  if (take < 1) return "take at least one stone";
  const last = at + take - 1;
  const run = runAround(stones, at);
  if (!run || last > run[1]) return `stones ${at}-${last} are not next to each other (a gap is between them)`;
  const d = digits[take] || 0;
  if (!d) {
    const allowed = digits.map((x, k) => (k && x ? k : 0)).filter(Boolean);
    return `in this game a move takes ${takesText(allowed)} ${allowed.length === 1 && allowed[0] === 1 ? "stone" : "stones"}`;
  }
  const left = at - run[0];
  const right = run[1] - last;
  const parts = (left > 0) + (right > 0);
  if (d & [1, 2, 4][parts]) return null;
  const what = ["may not take a whole run", "may not take from the end of a run", "may not split a run in two"][parts];
  return `in this game taking ${take} ${what}`;
}

/**
 * The selection after clicking stone `at` of row `r`: one stone, or growing or shrinking a run
 * of them — only ever a legal move. Returns {sel} or {message} (why the click cannot do it).
 */
export function clickStone(sel, r, at, stones, digits) {
  const ok = (a, t) => rowMoveProblem(stones, digits, a, t) === null;
  const fresh = () => {
    if (ok(at, 1)) return { sel: { pile: r, at, take: 1 } };
    for (let t = 2; t < digits.length; t++) {
      if (ok(at, t)) return { sel: { pile: r, at, take: t } };
      if (at - t + 1 >= 1 && ok(at - t + 1, t)) return { sel: { pile: r, at: at - t + 1, take: t } };
    }
    return { message: `No move takes stone ${at} here: ${rowMoveProblem(stones, digits, at, 1)}.` };
  };
  if (!sel || sel.pile !== r) return fresh();
  const last = sel.at + sel.take - 1;
  if (at >= sel.at && at <= last) {
    if (sel.take === 1) return { sel: null };
    if (at === sel.at && ok(at + 1, sel.take - 1)) return { sel: { pile: r, at: at + 1, take: sel.take - 1 } };
    if (at === last && ok(sel.at, sel.take - 1)) return { sel: { pile: r, at: sel.at, take: sel.take - 1 } };
    return { sel: null };
  }
  if (at === sel.at - 1 || at === last + 1) {
    const a = Math.min(at, sel.at);
    const problem = rowMoveProblem(stones, digits, a, sel.take + 1);
    if (problem === null) return { sel: { pile: r, at: a, take: sel.take + 1 } };
    return { message: `Taking stones ${a}-${a + sel.take} is not a move: ${problem}.` };
  }
  return fresh();
}

function drawRow(r, runs, o) {
  const stones = stonesOf(runs);
  const digits = o.digits || [];
  const sel = o.selection && o.selection.pile === r ? o.selection : null;
  const taken = o.taken && o.taken.pile === r ? o.taken : null;
  const covers = (m, at) => m && at >= m.at && at < m.at + m.take;
  const legal = (a, t) => rowMoveProblem(stones, digits, a, t) === null;
  const cursorAt = o.cursor && o.cursor.pile === r ? o.cursor.at : null;
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
      parts.push(h("span", {
        class: "link" + (pair ? " can" : ""),
        dataset: { pair: String(s.at) },
        title: pair ? `Stones ${s.at}-${s.at + 1}${v2 ? ": " + valueText(v2) : ""}` : null,
      }, vmark(v2)));
    } else if (next) {
      parts.push(h("span", { class: "link", "aria-hidden": "true" }));
    }
  });
  const present = stones.filter((s) => s.present).length;
  const label = `Row ${r}: ${present} ${present === 1 ? "stone" : "stones"} in ${stones.length} places`
    + (sel ? `, taking ${sel.take === 1 ? `stone ${sel.at}` : `stones ${sel.at} to ${sel.at + sel.take - 1}`}` : "");
  const shown = taken || sel;
  const strips = o.values ? moveStrips(r, stones, o) : [];
  const line = h("div", { class: "row-stones" + (stones.length > 20 ? " long" : ""), tabindex: "-1", dataset: { row: String(r) } },
    h("div", { class: "row-line" }, strips.length ? h("span", { class: "strip-label", "aria-hidden": "true", dataset: { label: "take 1, 2" } }) : null, parts), ...strips);
  const el = h("div", {
    class: "stones",
    role: "group",
    tabindex: o.live ? "0" : null,
    "aria-label": label,
    dataset: { pile: String(r) },
  },
  h("span", { class: "pile-label", "aria-hidden": "true" }, r),
  line,
  h("span", { class: "minus" }, shown ? `−${shown.take}` : ""));
  if (o.live) {
    const apply = (result) => {
      if (result.message) o.onMessage(result.message);
      else o.onSelect(result.sel);
    };
    el.addEventListener("click", (e) => {
      const link = e.target.closest(".link");
      if (link && link.dataset.pair) {
        const a = Number(link.dataset.pair);
        const problem = rowMoveProblem(stones, digits, a, 2);
        if (problem) o.onMessage(`Taking stones ${a}-${a + 1} is not a move: ${problem}.`);
        else o.onSelect({ pile: r, at: a, take: 2 });
        return;
      }
      const stone = e.target.closest(".stone");
      if (stone) apply(clickStone(o.selection, r, Number(stone.dataset.at), stones, digits));
    });
    el.addEventListener("keydown", (e) => rowKey(e, r, stones, digits, o, apply));
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
function moveStrips(r, stones, o) {
  const byTake = new Map();
  for (const [key, v] of o.values) {
    const [pile, take, at] = key.split(":");
    if (Number(pile) !== r || at === "" || take === "1" || take === "2") continue;
    if (!byTake.has(Number(take))) byTake.set(Number(take), new Map());
    byTake.get(Number(take)).set(Number(at), v);
  }
  return [...byTake.keys()].sort((a, b) => a - b).map((take) => {
    const marks = byTake.get(take);
    const cells = [];
    const mark = (at) => {
      const v = marks.get(at);
      if (!v) return null;
      const what = take === 0 ? `Cut before stone ${at}` : `Stones ${at}-${at + take - 1}`;
      const m = vmark(v);
      m.classList.add("strip-mark");
      m.dataset.at = String(at);
      m.title = `${what}: ${valueText(v)}`;
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

function rowKey(e, r, stones, digits, o, apply) {
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
      e.preventDefault(); apply(clickStone(o.selection, r, cur, stones, digits)); return;
    case "Enter": e.preventDefault(); o.onFinish(); return;
    case "Escape": e.preventDefault(); o.onReset(); return;
    default:
  }
}
