"""Pictures of positions, analyses, Grundy sequences and misère quotients, as SVG and HTML text.

Jupyter shows an object through its ``_repr_svg_`` or ``_repr_html_`` method; those methods call
the functions here. Piles are drawn as matches and rows as stones, like the page draws them, on
the same green board; a winning move is marked in green under the match it starts from (the
page takes that match and the ones to its right) or as a green ring around the stones it takes.
Everything is plain text (no plotting library): O(objects drawn), and at most
:data:`MAX_DRAWN_PER_PILE` objects of a pile are drawn (the rest are counted in words).
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import TYPE_CHECKING

from nimlab.core.position import Move, Position, Rows, heap_text

if TYPE_CHECKING:
    from nimlab.core.analysis import Analysis
    from nimlab.core.game import Game
    from nimlab.core.position import Board
    from nimlab.core.study import GrundyTable, GrundyValues, Quotient

__all__ = [
    "MAX_DRAWN_PER_PILE",
    "MAX_PLOTTED",
    "MAX_TABLE_ORDER",
    "analysis_html",
    "board_svg",
    "game_html",
    "grundy_svg",
    "grundy_table_html",
    "quotient_html",
]

MAX_DRAWN_PER_PILE = 40
"""The most matches or stones drawn in one pile or row."""
MAX_PILES_DRAWN = 30
"""The most piles or rows drawn."""
MAX_PLOTTED = 300
"""The most Grundy values plotted."""
MAX_TABLE_ORDER = 48
"""The largest quotient whose multiplication table is drawn."""
MAX_PAIRS_DRAWN = 30
"""The most piles of each side drawn in a table of pairs."""

_BOARD = "#2e4a3a"
_WOOD, _WOOD_DARK, _HEAD = "#e9c98b", "#c99a4a", "#d9412b"
_STONE, _STONE_DARK = "#7a8796", "#4f5b68"
_MARK_WIN, _WIN_INK = "#7fdc9f", "#062d15"
_LABEL = "#cfe0d3"
_FONT = "font-family='system-ui, sans-serif'"


def board_svg(board: Board, winning: Iterable[Move] = ()) -> str:
    """An SVG picture of ``board`` (piles of matches or rows of stones) with the ``winning``
    moves marked. O(objects drawn)."""
    wins = list(winning)
    if isinstance(board, Rows):
        return _rows_svg(board, wins)
    heaps = board.heaps if isinstance(board, Position) else tuple(board.heaps)
    return _piles_svg(heaps, wins)


def _number(n: int) -> str:
    """A pile size as a label: ``"10,000"``; a number too long to read (over 77 digits) as
    ``"a number of 5,000 digits"`` (see :func:`~nimlab.core.position.heap_text`)."""
    return f"{n:,}" if n.bit_length() <= 256 else heap_text(n)


def _text_width(text: str, size: int) -> float:
    """About how wide ``text`` is drawn at ``size`` px (system-ui digits and letters are at
    most about 0.62 em wide), so that a label is never cut by the picture's edge."""
    return len(text) * size * 0.62


def _listed(heaps: tuple[int, ...]) -> str:
    """Heap sizes as text, the first :data:`MAX_PILES_DRAWN` only (``…`` for the rest)."""
    text = " ".join(_number(h) for h in heaps[:MAX_PILES_DRAWN])
    return text + (" …" if len(heaps) > MAX_PILES_DRAWN else "")


def _frame(width: int, height: int, body: list[str], label: str) -> str:
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' aria-label='{escape(label)}'>"
        f"<rect width='{width}' height='{height}' rx='14' fill='{_BOARD}'/>"
        + "".join(body)
        + "</svg>"
    )


def _mark(x: float, y: float, text: str) -> str:
    return (
        f"<rect x='{x - 8:.1f}' y='{y}' width='16' height='14' rx='4' fill='{_MARK_WIN}'/>"
        f"<text x='{x:.1f}' y='{y + 11}' font-size='10' font-weight='700' text-anchor='middle' "
        f"fill='{_WIN_INK}' {_FONT}>{escape(text)}</text>"
    )


def _piles_svg(heaps: tuple[int, ...], wins: list[Move]) -> str:
    step, row_h, left = 16, 86, 44
    shown = heaps[:MAX_PILES_DRAWN]
    notes = [
        _number(h)
        if h <= MAX_DRAWN_PER_PILE
        else f"{_number(h)} (first {MAX_DRAWN_PER_PILE} drawn)"
        for h in shown
    ]
    width = round(
        max(
            [left + step + 90]
            + [
                left + min(h, MAX_DRAWN_PER_PILE) * step + 8 + _text_width(note, 13) + 14
                for h, note in zip(shown, notes, strict=True)
            ]
        )
    )
    height = 16 + row_h * max(len(shown), 1) + (16 if len(heaps) > len(shown) else 0)
    body: list[str] = []
    for i, h in enumerate(shown):
        y = 14 + i * row_h
        body.append(
            f"<text x='{left - 12}' y='{y + 40}' font-size='14' font-weight='700' "
            f"text-anchor='end' fill='{_LABEL}' {_FONT}>{i + 1}</text>"
        )
        drawn = min(h, MAX_DRAWN_PER_PILE)
        for j in range(drawn):
            x = left + j * step
            body.append(
                f"<rect x='{x}' y='{y + 10}' width='9' height='50' rx='3' fill='{_WOOD}' "
                f"stroke='{_WOOD_DARK}'/><ellipse cx='{x + 4.5}' cy='{y + 9}' rx='6' ry='7' "
                f"fill='{_HEAD}'/>"
            )
        note = notes[i]
        body.append(
            f"<text x='{left + drawn * step + 8}' y='{y + 40}' font-size='13' fill='{_LABEL}' "
            f"{_FONT}>{escape(note)}</text>"
        )
        for m in wins:
            j = h - m.take  # the page takes the clicked match and those to its right
            if m.pile == i + 1 and m.take > 0 and 0 <= j < drawn:
                body.append(_mark(left + j * step + 4.5, y + 64, f"-{m.take}"))
    if len(heaps) > len(shown):
        body.append(
            f"<text x='12' y='{height - 8}' font-size='12' fill='{_LABEL}' {_FONT}>"
            f"and {len(heaps) - len(shown):,} more piles</text>"
        )
    return _frame(width, height, body, "piles " + _listed(heaps))


def _rows_svg(board: Rows, wins: list[Move]) -> str:
    step, row_h, left, r = 34, 58, 44, 14
    rows = board.rows[:MAX_PILES_DRAWN]
    widest = max((min(sum(row), MAX_DRAWN_PER_PILE) for row in rows), default=1)
    width = left + max(widest, 1) * step + 70
    height = 16 + row_h * max(len(rows), 1)
    body: list[str] = []
    for i, row in enumerate(rows):
        y = 14 + i * row_h
        cy = y + r + 2
        body.append(
            f"<text x='{left - 12}' y='{cy + 5}' font-size='14' font-weight='700' "
            f"text-anchor='end' fill='{_LABEL}' {_FONT}>{i + 1}</text>"
        )
        taken: set[int] = set()
        for m in wins:
            if m.pile == i + 1 and m.at is not None:
                taken.update(range(m.at, m.at + m.take))
        at, x = 1, float(left)
        for k, n in enumerate(row):
            present = k % 2 == 0
            if not present and n == 0:  # a cut: a split that removed nothing
                body.append(
                    f"<line x1='{x - 2}' y1='{cy - r}' x2='{x - 2}' y2='{cy + r}' "
                    f"stroke='{_LABEL}' stroke-width='2'/>"
                )
            for _ in range(n):
                if at > MAX_DRAWN_PER_PILE:
                    break
                cx = x + r
                if present:
                    ring = f" stroke='{_MARK_WIN}' stroke-width='4'" if at in taken else ""
                    body.append(f"<circle cx='{cx}' cy='{cy}' r='{r}' fill='url(#stone)'{ring}/>")
                else:
                    body.append(
                        f"<circle cx='{cx}' cy='{cy}' r='{r - 1}' fill='none' "
                        "stroke='rgb(255 255 255 / 22%)' stroke-width='2' stroke-dasharray='4 3'/>"
                    )
                at += 1
                x += step
        length = sum(row)
        if length > MAX_DRAWN_PER_PILE:
            body.append(
                f"<text x='{x + 4}' y='{cy + 5}' font-size='13' fill='{_LABEL}' {_FONT}>"
                f"… {length:,} in all</text>"
            )
    gradient = (
        "<defs><radialGradient id='stone' cx='35%' cy='30%'><stop offset='0' stop-color='#c5cfda'/>"
        f"<stop offset='.55' stop-color='{_STONE}'/><stop offset='1' stop-color='{_STONE_DARK}'/>"
        "</radialGradient></defs>"
    )
    lengths = tuple(sum(row) for row in board.rows[: MAX_PILES_DRAWN + 1])
    return _frame(width, height, [gradient, *body], "rows of " + _listed(lengths))


def analysis_html(a: Analysis) -> str:
    """An analysis as HTML: the board with its winning moves marked, the outcome, the Grundy
    value, and the explanation. O(objects drawn + moves)."""
    from nimlab.core.analysis import describe_move, display_heaps

    winning = [m.move for m in a.winning_moves]
    if a.terminal:
        verdict = "an end position: no move is left"
    elif a.players > 2:  # the explanation below says what the model proves
        verdict = f"{a.players} players, {a.model} model" + ("" if a.proven else ", not proven")
    elif a.outcome is None:
        verdict = "not proven within the budget"
    elif str(a.outcome) == "N":
        verdict = "a win for the player to move (N-position)"
    else:
        verdict = "a loss for the player to move (P-position)"
    facts = [
        f"<b>{escape(a.ruleset.game.title)}</b>{' (misère)' if a.ruleset.misere else ''}",
        f"position {escape(_listed(display_heaps(a.board)))}: {verdict}",
    ]
    if a.grundy is not None:
        facts.append(f"Grundy value {a.grundy}")
    if a.remoteness is not None:
        facts.append(f"remoteness {a.remoteness}")
    if winning:
        listed = "; ".join(f"{describe_move(m, a.board)} ({m})" for m in winning[:12])
        more = f" and {len(winning) - 12:,} more" if len(winning) > 12 else ""
        facts.append(f"winning {'move' if len(winning) == 1 else 'moves'}: {escape(listed)}{more}")
    lines = escape("\n".join(a.explanation))
    return (
        "<div class='nimlab-analysis'>"
        f"<p>{'; '.join(facts)}.</p>{board_svg(a.board, winning)}"
        + (f"<pre style='white-space:pre-wrap'>{lines}</pre>" if lines else "")
        + "</div>"
    )


def grundy_svg(g: GrundyValues) -> str:
    """The Grundy values as a small plot (value against heap size), the repeating part shaded
    when the period is proven (dashed when it is only a guess). O(values plotted)."""
    values = g.values[:MAX_PLOTTED]
    top = max(values, default=0) or 1
    dx = max(2.0, min(10.0, 600 / max(len(values), 1)))
    left, plot_h, base = 34, 130, 150
    width = max(int(left + dx * len(values) + 20), left + 7 * len(g.summary()))
    height = base + 46
    body = [
        f"<rect width='{width}' height='{height}' fill='white'/>",
        f"<line x1='{left}' y1='{base}' x2='{width - 10}' y2='{base}' stroke='#5b6673'/>",
        f"<line x1='{left}' y1='{base}' x2='{left}' y2='{base - plot_h}' stroke='#5b6673'/>",
        f"<text x='{left - 4}' y='{base - plot_h + 4}' font-size='10' text-anchor='end' "
        f"fill='#5b6673' {_FONT}>{top}</text>",
        f"<text x='{left - 4}' y='{base + 4}' font-size='10' text-anchor='end' fill='#5b6673' "
        f"{_FONT}>0</text>",
    ]
    start = g.preperiod if g.preperiod is not None else g.guessed_preperiod
    if start is not None and start < len(values):
        dash = "" if g.proven else " stroke='#1f5fa8' stroke-dasharray='4 3'"
        fill = "#d7f0e0" if g.proven else "none"
        body.append(
            f"<rect x='{left + start * dx:.1f}' y='{base - plot_h}' "
            f"width='{(len(values) - start) * dx:.1f}' height='{plot_h}' fill='{fill}'{dash}/>"
        )
    for n, v in enumerate(values):
        body.append(
            f"<circle cx='{left + (n + 0.5) * dx:.1f}' cy='{base - v / top * plot_h:.1f}' "
            f"r='{min(2.5, dx / 2):.1f}' fill='#1f5fa8'><title>G({n}) = {v}</title></circle>"
        )
    shown = f"heaps 0–{len(values) - 1}" + (
        f" of {len(g.values):,} computed" if len(values) < len(g.values) else ""
    )
    body.append(
        f"<text x='{left}' y='{base + 18}' font-size='11' fill='#1d2733' {_FONT}>"
        f"{escape(shown)}</text>"
        f"<text x='{left}' y='{base + 36}' font-size='12' fill='#1d2733' {_FONT}>"
        f"{escape(g.summary())}</text>"
    )
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' aria-label='{escape(g.summary())}'>"
        + "".join(body)
        + "</svg>"
    )


def quotient_html(q: Quotient) -> str:
    """A quotient as HTML: its summary, generators and relations, the heap images, and its
    multiplication table (P-portion products in green) when it has at most
    :data:`MAX_TABLE_ORDER` elements. O(order²)."""
    t = q.theory
    gens = ", ".join(
        f"{g} = heap {h}" for g, h in zip(t.generators, t.generator_heaps, strict=True)
    )
    parts = [
        f"<p><b>{escape(q.summary())}</b></p>",
        f"<p>Generators: {escape(gens or 'none')}. Relations: "
        f"{escape(', '.join(t.relations) or 'none')}.</p>",
        f"<p>Heap images (heaps 0–{min(t.heap_bound, 59)}): "
        f"{escape(' '.join(q.heap_images[:60]))}</p>",
    ]
    if q.order <= MAX_TABLE_ORDER:
        cell = "style='padding:1px 4px;border:1px solid #dcd6ca;text-align:center'"
        win = cell[:-1] + ";background:#d7f0e0;font-weight:700'"
        head = "".join(f"<th {cell}>{escape(e)}</th>" for e in t.elements)
        rows = "".join(
            f"<tr><th {cell}>{escape(t.elements[x])}</th>"
            + "".join(f"<td {win if t.is_p(y) else cell}>{escape(t.elements[y])}</td>" for y in row)
            + "</tr>"
            for x, row in enumerate(t.table)
        )
        parts.append(
            "<table style='border-collapse:collapse;font-size:12px'>"
            f"<caption>Products (row × column); green: in the P-portion</caption>"
            f"<tr><th {cell}>×</th>{head}</tr>{rows}</table>"
        )
    else:
        parts.append(f"<p>(The table of {q.order} × {q.order} products is not drawn.)</p>")
    return "<div class='nimlab-quotient'>" + "".join(parts) + "</div>"


def grundy_table_html(t: GrundyTable) -> str:
    """A table of pairs as HTML: its summary and ``G(x, y)`` for piles up to
    :data:`MAX_PAIRS_DRAWN` (rows ``x``, columns ``y``), the P-positions (value 0) in green.
    O(cells drawn)."""
    n = min(len(t), MAX_PAIRS_DRAWN)
    cell = "style='padding:1px 4px;border:1px solid #dcd6ca;text-align:right'"
    zero = cell[:-1] + ";background:#d7f0e0;font-weight:700'"
    head = "".join(f"<th {cell}>{y}</th>" for y in range(n))
    rows = "".join(
        f"<tr><th {cell}>{x}</th>"
        + "".join(f"<td {zero if v == 0 else cell}>{v}</td>" for v in t.values[x][:n])
        + "</tr>"
        for x in range(n)
    )
    more = f" (piles 0–{n - 1} of 0–{len(t) - 1} drawn)" if n < len(t) else ""
    return (
        f"<div class='nimlab-grundy-table'><p><b>{escape(t.summary())}</b></p>"
        "<table style='border-collapse:collapse;font-size:12px'>"
        f"<caption>G(x, y): row x, column y; green: the P-positions (value 0){more}</caption>"
        f"<tr><th {cell}>x \\ y</th>{head}</tr>{rows}</table></div>"
    )


def game_html(game: Game) -> str:
    """A game in play as HTML: the moves so far, the board, and whose turn it is (or who won).
    O(objects drawn + moves)."""
    title = game.ruleset.game.title + (" (misère)" if game.ruleset.misere else "")
    moves = ", ".join(f"{t.player.name}: {t.move}" for t in game.history[-12:])
    if game.winner is not None:
        status = f"{game.winner.name} wins."
    else:
        status = f"{game.to_move.name} to move."
    return (
        f"<div class='nimlab-game'><p><b>{escape(title)}</b>"
        + (f"; moves so far: {escape(moves)}" if moves else "")
        + f"</p>{board_svg(game.board)}<p>{escape(status)}</p></div>"
    )
