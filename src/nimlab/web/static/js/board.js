// The board: piles of matches (seed 001) or rows of stones (Kayles-like games).
//
// Piles: hovering a match highlights it and every match after it (what one click takes);
// the first click fixes the pile; clicking the first match being taken gives it back.
// Rows: click one stone, or the link between two adjacent stones; click an adjacent stone to
// take more. Keyboard: Tab to a pile or row; arrows choose; Space takes at the cursor (rows);
// Enter finishes; Escape resets. Piles larger than DRAW_LIMIT are drawn as a number with a
// small bundle, never match by match.

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
  return h("span", { class: `vmark ${cls}`, "aria-hidden": "true" }, text);
}

/** Describe a selection for people: "take 3 from pile 2", "take stones 4-5 of row 1". */
export function describeSelection(sel, rows) {
  if (!sel) return "";
  if (!rows) return `take ${fmt(sel.take)} from pile ${sel.pile}`;
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
  root.classList.toggle("live", !!o.live);
  root.classList.toggle("values", !!o.values);
  const items = o.board.kind === "rows"
    ? o.board.rows.map((runs, i) => drawRow(i + 1, runs, o))
    : o.board.piles.map((n, i) => drawPile(i + 1, n, o));
  root.replaceChildren(...items);
  if (focused) {
    const target = root.querySelector(`[data-pile="${focused}"]`);
    if (target) {
      const input = focusedInput && target.querySelector("input");
      (input || target).focus();
    }
  }
}

// -- piles ------------------------------------------------------------------------------------

function drawPile(i, n, o) {
  const sel = o.selection && o.selection.pile === i ? o.selection.take : 0;
  const otherFixed = o.selection && o.selection.pile !== i;
  const taken = o.taken && o.taken.pile === i ? o.taken.take : 0;
  if (isBig(n)) return compactPile(i, n, o, sel, taken);
  const takes = new Set((o.takes && o.takes[i - 1]) || []);
  const matches = [];
  for (let j = 1; j <= n; j++) {
    const take = n - j + 1;
    const can = o.live && takes.has(take) && !otherFixed;
    const v = o.values ? o.values.get(moveKey(i, take, null)) : null;
    const cls = ["match"];
    if (can) cls.push("can");
    if (take <= sel) cls.push("taking");
    if (take <= taken) cls.push("taken");
    matches.push(h("span", {
      class: cls.join(" "),
      dataset: { take: String(take) },
      title: o.live ? `Take ${take}${v ? ": " + valueText(v) : ""}` : null,
    }, vmark(v)));
  }
  const label = `Pile ${i}: ${n} ${n === 1 ? "match" : "matches"}` + (sel ? `, taking ${sel}` : "");
  const el = h("div", {
    class: "pile" + (sel ? " fixed" : ""),
    role: "group",
    tabindex: o.live ? "0" : null,
    "aria-label": label,
    dataset: { pile: String(i) },
  },
  h("span", { class: "pile-label", "aria-hidden": "true" }, i),
  h("div", { class: "matches" }, matches),
  h("span", { class: "pile-count", "aria-hidden": "true" }, n === 0 ? "empty" : n),
  h("span", { class: "minus" }, taken ? `−${fmt(taken)}` : sel ? `−${sel}` : ""));
  if (o.live) {
    el.addEventListener("click", (e) => {
      const match = e.target.closest(".match");
      if (!match) return;
      if (otherFixed) {
        o.onMessage(`You are taking from pile ${o.selection.pile}: finish, or reset to choose another pile.`);
        return;
      }
      if (!match.classList.contains("can")) {
        o.onMessage(`You cannot take ${match.dataset.take} from pile ${i} in this game.`);
        return;
      }
      const take = Number(match.dataset.take);
      const next = take === sel ? take - 1 : take;
      o.onSelect(next > 0 ? { pile: i, take: next, at: null } : null);
    });
    el.addEventListener("keydown", (e) => pileKey(e, i, n, sel, otherFixed, o));
  }
  return el;
}

function pileKey(e, i, n, sel, otherFixed, o) {
  let next = null;
  switch (e.key) {
    case "ArrowRight": case "ArrowUp": case "+": case "=": next = Math.min(n, sel + 1); break;
    case "ArrowLeft": case "ArrowDown": case "-": next = Math.max(0, sel - 1); break;
    case "Home": next = 1; break;
    case "End": next = n; break;
    case "Enter": e.preventDefault(); o.onFinish(); return;
    case "Escape": e.preventDefault(); o.onReset(); return;
    default:
      if (/^[0-9]$/.test(e.key)) next = Math.min(n, Number(e.key));
      else return;
  }
  e.preventDefault();
  if (otherFixed) {
    o.onMessage(`You are taking from pile ${o.selection.pile}: finish, or Escape to choose another pile.`);
    return;
  }
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
      h("span", { class: "big-number" }, fmt(n)),
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
    class: "pile" + (sel ? " fixed" : ""),
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
  if (o.selection && o.selection.pile !== i) {
    o.onMessage(`You are taking from pile ${o.selection.pile}: finish, or reset to choose another pile.`);
    return false;
  }
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

/** The selection after clicking stone `at` of row `r` (one stone, or growing a run of them). */
export function clickStone(sel, r, at) {
  if (!sel || sel.pile !== r) return { pile: r, at, take: 1 };
  const last = sel.at + sel.take - 1;
  if (at >= sel.at && at <= last) {
    if (sel.take === 1) return null;
    if (at === sel.at) return { pile: r, at: at + 1, take: sel.take - 1 };
    if (at === last) return { pile: r, at: sel.at, take: sel.take - 1 };
    return { pile: r, at, take: 1 };
  }
  if (at === sel.at - 1) return { pile: r, at, take: sel.take + 1 };
  if (at === last + 1) return { pile: r, at: sel.at, take: sel.take + 1 };
  return { pile: r, at, take: 1 };
}

function drawRow(r, runs, o) {
  const stones = stonesOf(runs);
  const sel = o.selection && o.selection.pile === r ? o.selection : null;
  const taken = o.taken && o.taken.pile === r ? o.taken : null;
  const covers = (m, at) => m && at >= m.at && at < m.at + m.take;
  const pairs = o.maxTake === null || o.maxTake === undefined || o.maxTake >= 2;
  const cursorAt = o.cursor && o.cursor.pile === r ? o.cursor.at : null;
  const parts = [];
  stones.forEach((s, idx) => {
    if (!s.present) {
      parts.push(h("span", { class: "hole", "aria-hidden": "true" }));
      return;
    }
    const v1 = o.values ? o.values.get(moveKey(r, 1, s.at)) : null;
    const cls = ["stone"];
    if (o.live) cls.push("can");
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
      parts.push(h("span", {
        class: "link" + (o.live && pairs ? " can" : ""),
        dataset: { pair: String(s.at) },
        title: o.live && pairs ? `Stones ${s.at}-${s.at + 1}${v2 ? ": " + valueText(v2) : ""}` : null,
      }, vmark(v2)));
    } else if (next) {
      parts.push(h("span", { class: "link", "aria-hidden": "true" }));
    }
  });
  const present = stones.filter((s) => s.present).length;
  const label = `Row ${r}: ${present} ${present === 1 ? "stone" : "stones"} in ${stones.length} places`
    + (sel ? `, taking ${sel.take === 1 ? `stone ${sel.at}` : `stones ${sel.at} to ${sel.at + sel.take - 1}`}` : "");
  const shown = taken || sel;
  const el = h("div", {
    class: "stones",
    role: "group",
    tabindex: o.live ? "0" : null,
    "aria-label": label,
    dataset: { pile: String(r) },
  },
  h("span", { class: "pile-label", "aria-hidden": "true" }, r),
  h("div", { class: "row-stones" }, parts),
  h("span", { class: "minus" }, shown ? `−${shown.take}` : ""));
  if (o.live) {
    el.addEventListener("click", (e) => {
      const link = e.target.closest(".link.can");
      if (link) {
        o.onSelect({ pile: r, at: Number(link.dataset.pair), take: 2 });
        return;
      }
      const stone = e.target.closest(".stone");
      if (stone) o.onSelect(clickStone(o.selection, r, Number(stone.dataset.at)));
    });
    el.addEventListener("keydown", (e) => rowKey(e, r, stones, o));
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

function rowKey(e, r, stones, o) {
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
      e.preventDefault(); o.onSelect(clickStone(o.selection, r, cur)); return;
    case "Enter": e.preventDefault(); o.onFinish(); return;
    case "Escape": e.preventDefault(); o.onReset(); return;
    default:
  }
}
