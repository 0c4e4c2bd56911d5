"""Analysis of a position as people and scripts want it: outcome, Grundy value, nim-sum in binary,
the value and remoteness of every legal move, and a plain-language explanation.

Every value comes from the ruleset's :class:`~nimlab.theory.engine.Engine`; this module only maps
the engine's canonical answers onto the board people see. The ``limit`` on listed moves trims
what is *shown*, never what is known or played: when a position has more legal moves than the
limit, its winning moves are still all listed (from the engine's formulas where the moves are too
many to value one by one).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from nimlab.core.arguments import check_count, check_seconds, shown
from nimlab.core.errors import ArgumentError, PlayerError
from nimlab.core.position import Board, Move, Piles, Rows, check_writable, heaps_text
from nimlab.core.rules import move_words
from nimlab.core.ruleset import MAX_PLAYERS, Ruleset, as_ruleset
from nimlab.core.words import DIGITS_SHOWN, count_text, digit_count, number_text
from nimlab.theory.budget import Budget, BudgetExceeded, Shortfall, metered
from nimlab.theory.engine import (
    INTERACTIVE_POSITIONS,
    CanonMove,
    Evaluation,
    apply_move,
    interactive_budget,
)
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, canonical, is_terminal

if TYPE_CHECKING:
    from nimlab.theory.quotient import MisereQuotient

__all__ = [
    "DEFAULT_MAX_MOVES",
    "MODELS",
    "Analysis",
    "MoveValue",
    "analyze",
    "board_move",
    "board_moves",
    "count_moves",
    "count_text",
    "display_heaps",
    "explain",
    "misere_quotient_of",
    "move_values",
    "position_terms",
    "seconds_budget",
    "value_table",
    "winning_move_values",
]

DEFAULT_MAX_MOVES = 1000
"""Moves listed one by one at most (a display limit; winning moves are always listed)."""

RESULT_CELLS = 2_000_000
"""Most heaps listed in the results of an incomplete move list (bounds huge answers)."""

LISTING_SHARE = 0.5
"""The share of a question's budget left that finding and listing its winning moves may take,
when there are too many moves to value one by one (the rest is kept for showing them: the
output grows with the list)."""

LISTING_SEARCH_SHARE = 0.5
"""The share of the listing's budget that the search for winning moves may take (the rest
lists them: every move listed is work too)."""

COUNT_SHARE = 0.25
"""The share of what is left of the listing's budget that counting the winning moves not found
may take (cheap for huge heaps with periodic values; where every option must be tried it may
run out, and the moves found are listed with what remains)."""

MODELS = ("paranoid", "li")
"""Models of play for more than two players (see :func:`analyze`)."""


@dataclass(frozen=True, slots=True)
class MoveValue:
    """One legal move and the value of the position it leaves (for the opponent to move).

    ``outcome`` is ``None`` when it could not be proven; ``winning`` is then ``None`` too. With
    more than two players (paranoid model) ``outcome`` is ``None`` and ``hero_wins`` says whether
    the move wins for the mover against all the others together. ``grundy`` is the Grundy value
    of the result where the analysis gives one per move (Wythoff's game in normal play without
    extra end positions; ``None`` elsewhere and where it is out of reach).
    """

    move: Move
    result: tuple[int, ...]
    outcome: Outcome | None
    remoteness: int | None
    hero_wins: bool | None = None
    last_mover: int | None = None
    grundy: int | None = None

    @property
    def winning(self) -> bool | None:
        """The move wins for the mover with perfect play (``None``: not proven)."""
        if self.hero_wins is not None:
            return self.hero_wins
        return None if self.outcome is None else self.outcome is Outcome.P

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pile": self.move.pile, "take": self.move.take}
        if self.move.at is not None:
            out["at"] = self.move.at
        if self.move.also:
            out["also"] = [list(part) for part in self.move.also]
        out.update(
            result=list(self.result),
            outcome=None if self.outcome is None else str(self.outcome),
            remoteness=self.remoteness,
            winning=self.winning,
        )
        if self.last_mover is not None:
            out["last_mover"] = self.last_mover
        if self.grundy is not None:
            out["grundy"] = self.grundy
        return out


# -- the board people see and the engine's canonical positions ----------------------------------


def display_heaps(board: Board) -> tuple[int, ...]:
    """The position in display order: the piles; on rows of stones each row's runs of stones
    left to right, and 0 for a row with no stone left (so pile numbers stay those of the
    board). O(runs)."""
    if isinstance(board, Rows):
        out: list[int] = []
        for row in board.rows:
            runs = [n for i, n in enumerate(row) if i % 2 == 0 and n]
            out.extend(runs or [0])
        return tuple(out)
    return board.heaps


def _heap_move_count(ruleset: Ruleset, heap: int) -> int:
    """Legal moves from one pile of ``heap`` (each distinct ``(take, parts)`` once).
    O(explicit digits)."""
    rule = ruleset.rule
    if heap <= 0:
        return 0
    if rule.is_nim:
        return heap
    total = 0
    explicit = len(rule.digits)

    def count(k: int, d: int) -> int:
        rest = heap - k
        if rest < 0 or not d:
            return 0
        if rest == 0:
            return 1 if d & 1 else 0
        n = 0
        if d & 2:
            n += 1
        if d & 4 and rest >= 2:
            n += rest // 2
            if rule.unequal and rest % 2 == 0:
                n -= 1  # no split into two equal parts
        return n

    for k in range(1, min(heap, explicit) + 1):
        total += count(k, rule.digit(k))
    if rule.tail and heap > explicit:
        d = rule.tail
        lo, hi = explicit + 1, heap
        # k < heap: d & 2 leaves one heap; d & 4 splits the rest; k == heap takes it all.
        span = max(0, (hi - 1) - lo + 1)
        if d & 2:
            total += span
        if d & 4:
            total += sum(count(k, 4) for k in range(lo, hi)) if span < 4096 else span * heap
        if d & 1:
            total += 1
    return total


def count_moves(ruleset: Ruleset, board: Board) -> int:
    """The number of legal moves on the board without listing them: O(piles) for Nim,
    O(piles * explicit digits) otherwise, whatever the heap sizes (rows of stones: their exact
    count, :meth:`~nimlab.core.position.Rows.count_moves`; the relatives: their rules' count,
    O(piles * k) at most)."""
    if isinstance(board, Piles):
        return ruleset.relative_rules.count_moves(board)
    if isinstance(board, Rows):
        return board.count_moves(ruleset.rule)
    if ruleset.rule.is_nim:
        return sum(board.heaps)
    return sum(_heap_move_count(ruleset, h) for h in board.heaps)


def board_move(board: Board, move: CanonMove) -> Move:
    """A board move that makes the canonical move ``(heap, take, parts)``: on the first pile
    (or run of stones) of that size. O(piles + runs)."""
    heap, take, parts = move
    if isinstance(board, Rows):
        for r, row in enumerate(board.rows, 1):
            start = 0
            for i, n in enumerate(row):
                if i % 2 == 0 and n == heap:
                    left = parts[0] if len(parts) == 2 else 0
                    return Move(r, take, at=start + left + 1)
                start += n
        raise ValueError(f"no run of {heap} stones on the board")
    for i, h in enumerate(board.heaps, 1):
        if h == heap:
            return Move(i, take)
    raise ValueError(f"no pile of {heap} on the board")


def _distinct_moves(board: Board, ruleset: Ruleset) -> Iterator[tuple[Move, Board]]:
    """Legal moves with their results, one per distinct (pile, resulting display position)."""
    seen: set[tuple[int, tuple[int, ...]]] = set()
    for move, after in board.successors(ruleset.rule):
        key = (move.pile, display_heaps(after))
        if key not in seen:
            seen.add(key)
            yield move, after


def _run_sizes(board: Board) -> dict[int, int]:
    """How many piles (on rows: runs of stones) have each size. O(piles + runs)."""
    sizes: dict[int, int] = {}
    for heap in board.heaps:
        if heap:
            sizes[heap] = sizes.get(heap, 0) + 1
    return sizes


def _placements(move: CanonMove, rows: bool) -> int:
    """Distinct board moves that make the canonical move on one pile or run of its size: on
    rows a split into two unequal parts can leave the smaller one on either side."""
    parts = move[2]
    return 2 if rows and len(parts) == 2 and parts[0] != parts[1] else 1


def _runs(board: Board) -> Iterator[tuple[int, int, int]]:
    """``(pile, first stone's offset, size)`` of every pile (on rows: every run of stones), in
    board order. O(piles + runs)."""
    if isinstance(board, Rows):
        for r, row in enumerate(board.rows, 1):
            start = 0
            for i, n in enumerate(row):
                if i % 2 == 0 and n:
                    yield r, start, n
                start += n
        return
    for i, h in enumerate(board.heaps, 1):
        yield i, 0, h


def board_moves(board: Board, moves: list[CanonMove]) -> Iterator[tuple[Move, CanonMove]]:
    """Every distinct board move that makes one of the canonical moves ``(heap, take, parts)``,
    with the canonical move it makes: on each pile (or run of stones) of that size, and on rows
    each side a split's unequal parts can take, in board order. O(piles + runs + moves)."""
    by_heap: dict[int, list[CanonMove]] = {}
    for m in moves:
        by_heap.setdefault(m[0], []).append(m)
    rows = isinstance(board, Rows)
    for pile, start, size in _runs(board):
        for m in by_heap.get(size, ()):
            if not rows:
                yield Move(pile, m[1]), m
                continue
            parts = m[2]
            lefts = [parts[0]] if len(parts) == 2 else [0]
            if len(parts) == 2 and parts[0] != parts[1]:
                lefts.append(parts[1])
            for left in sorted(lefts):
                yield Move(pile, m[1], at=start + left + 1), m


# -- move values --------------------------------------------------------------------------------


def move_values(
    ruleset: Ruleset,
    board: Board,
    *,
    max_moves: int | None = DEFAULT_MAX_MOVES,
    move_count: int | None = None,
    budget: Budget | None = None,
    position: Canon | None = None,
    max_cells: int = RESULT_CELLS,
) -> tuple[list[MoveValue], bool]:
    """The value of every legal move (one per distinct pile and resulting position), and
    whether the list is complete. ``move_count`` and ``position`` (the board's canonical form),
    when the caller knows them, are not computed again.

    With more than ``max_moves`` legal moves only winning moves are listed and the second item
    is ``False``: see :func:`winning_move_values`. Values that could not be proven within
    ``budget`` are ``None``. Cost: one engine evaluation per distinct resulting canonical
    position (remembered by the engine).
    """
    budget = budget if budget is not None else interactive_budget()
    count = move_count if move_count is not None else count_moves(ruleset, board)
    if max_moves is not None and count > max_moves:
        values, _ = winning_move_values(
            ruleset, board, budget=budget, position=position, max_cells=max_cells
        )
        return values, False
    engine = ruleset.engine
    cache: dict[Canon, Evaluation] = {}
    values = []
    for move, after in _distinct_moves(board, ruleset):
        c = after.canonical
        if c not in cache:
            cache[c] = engine.evaluate(c, budget=budget)
        ev = cache[c]
        values.append(MoveValue(move, display_heaps(after), ev.outcome, ev.remoteness))
    return values, True


def winning_move_values(
    ruleset: Ruleset,
    board: Board,
    *,
    budget: Budget | None = None,
    position: Canon | None = None,
    max_cells: int = RESULT_CELLS,
) -> tuple[list[MoveValue], int | None]:
    """Every distinct winning move (one per pile or placement and resulting position), from
    the engine's formulas without valuing the other moves (O(piles) for Nim), and how many
    there are: when there are more than can be listed, the theory counts them without listing
    them where the heaps' values are periodic (``None`` when it cannot, or they could not be
    worked out within ``budget``).

    Each listed move carries its whole result position, so moves are listed in board order
    while their results hold at most ``max_cells`` heaps in all (at least one move); the count
    always covers every winning move, listed or not (a caller shows the difference). Finding
    and listing them is work charged to ``budget`` (every option tried, every move listed): a
    row of 10^9 stones lists the winning moves found before the budget runs out, each proven.
    """
    values, total, _ = _winning_move_values(ruleset, board, budget, position, max_cells)
    return values, total


def _winning_move_values(
    ruleset: Ruleset,
    board: Board,
    budget: Budget | None,
    position: Canon | None,
    max_cells: int,
) -> tuple[list[MoveValue], int | None, bool]:
    """:func:`winning_move_values`, and whether the budget ran out before every winning move
    that fits ``max_cells`` was found and listed."""
    engine = ruleset.engine
    budget = budget if budget is not None else interactive_budget()
    c = position if position is not None else board.canonical
    room = max(1, max_cells // (len(board.heaps) + 1))
    # Nim's formula names every winning move in O(piles); other theories try options heap by
    # heap, so they are asked for as many as can be listed (the rest they count, if they can)
    formula = engine.formula_strategy(c, budget)
    every = formula is not None and formula.name == "nim-formula"
    # finding and listing them may take a share of what is left (the rest shows them), and the
    # search a share of that, so that what it finds can be listed
    listing = budget.portion(LISTING_SHARE)
    search = listing.portion(LISTING_SEARCH_SHARE)
    found = engine.winning_moves_found(c, limit=None if every else room, budget=search)
    if found is None:
        return [], None, False
    wins, complete = found
    ran_out = not complete and len(wins) < room
    rows = isinstance(board, Rows)
    sizes = _run_sizes(board)
    total: int | None = sum(sizes.get(m[0], 0) * _placements(m, rows) for m in wins)
    if not complete:
        # there may be more than were found: the theory may count them without listing them
        counts = engine.count_winning_moves(c, budget=listing.portion(COUNT_SHARE))
        total = None
        if counts is not None:
            total = sum(
                sizes.get(h, 0) * (single + (2 if rows else 1) * pairs)
                for h, single, pairs in counts
            )
    searchable = engine.remoteness_within_reach(c)
    listed: list[tuple[Move, Board, int | None]] = []
    remoteness_of: dict[Canon, int | None] = {}
    try:
        for move, cmove in metered(board_moves(board, wins), listing):
            if len(listed) >= room:
                break
            child = apply_move(c, cmove)
            if child not in remoteness_of:
                known = searchable or is_terminal(ruleset.rule, child, ruleset.end_positions)
                remoteness_of[child] = (
                    engine.evaluate(child, budget=listing).remoteness if known else None
                )
            listed.append((move, board.play(ruleset.rule, move), remoteness_of[child]))
    except BudgetExceeded:
        ran_out = True  # what is listed is proven, and the count (if any) covers every move
    values = [MoveValue(move, display_heaps(after), Outcome.P, rem) for move, after, rem in listed]
    return values, total, ran_out


def paranoid_move_values(
    ruleset: Ruleset,
    board: Board,
    start: Board,
    active: tuple[int, ...],
    to_move: int,
    *,
    max_moves: int | None = DEFAULT_MAX_MOVES,
    budget: Budget | None = None,
) -> tuple[list[MoveValue], bool] | None:
    """Move values for more than two players in the paranoid model: can the mover (seat
    ``to_move``) force a win against all the others together after each move? ``None`` when
    beyond the budget. ``active`` are the seats still in, in seat order."""
    if max_moves is not None and count_moves(ruleset, board) > max_moves:
        return None
    solver = ruleset.engine.paranoid(start.canonical)
    mover = active.index(to_move)
    budget = budget if budget is not None else interactive_budget()
    values: list[MoveValue] = []
    seen: dict[Canon, tuple[bool, int]] = {}
    try:
        for move, after in _distinct_moves(board, ruleset):
            c = after.canonical
            if c not in seen:
                v = solver.move_value(c, active, mover, to_move, budget=budget)
                seen[c] = (v.hero_wins, v.remoteness)
            wins, rem = seen[c]
            values.append(MoveValue(move, display_heaps(after), None, rem, hero_wins=wins))
    except BudgetExceeded:
        return None
    return values, True


# -- the analysis -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Analysis:
    """Everything nimlab knows about a position.

    Two players: ``outcome`` (``None`` when not proven), ``remoteness``, ``grundy``, the method
    that proved it, and the moves. More players: ``model`` is ``"paranoid"`` (``outcome`` is the
    mover's against a coalition of all others: N when the mover can force a win) or ``"li"``
    (``last_mover`` counts from the player to move who makes the last move; ``outcome`` is
    ``None``).
    """

    ruleset: Ruleset
    board: Board
    outcome: Outcome | None
    remoteness: int | None
    grundy: int | None
    method: str
    moves: list[MoveValue]
    moves_complete: bool
    move_count: int
    terminal: bool
    players: int = 2
    model: str | None = None
    last_mover: int | None = None
    explanation: list[str] = field(default_factory=list)
    quotient: MisereQuotient | None = None
    """The misère quotient (a :class:`~nimlab.theory.quotient.MisereQuotient`) that decides the
    position in misère play of an octal game without extra end positions, when within reach."""
    winning_move_count: int | None = None
    """When only winning moves are listed: how many distinct winning moves there are in all;
    fewer are listed when their results would exceed the cell limit, or the budget ran out
    first. ``None``: not proven, or (theories other than Nim's) more than were listed and the
    theory could not count them (a huge heap with no proven period)."""
    shortfall: Shortfall | None = None
    """When not proven: which step ran out of which budget."""
    listing_ran_out: bool = False
    """When only winning moves are listed: the budget ran out before all of them that fit the
    result limit were found and listed (those listed are proven)."""

    def __repr__(self) -> str:
        """``<Analysis of nim: 3 4 5; N-position: the player to move wins, remoteness 11,
        Grundy value 2; 12 moves, 1 winning>``."""
        head = f"<Analysis of {self.ruleset}: {heaps_text(self.board.heaps)}"
        if self.model == "li":
            found = (
                "not proven"
                if self.last_mover is None
                else f"the last move is made by player {self.last_mover + 1} from the mover"
            )
        elif self.outcome is None:
            found = "not proven" + (f" ({self.shortfall})" if self.shortfall else "")
        elif self.players > 2:
            can = "can" if self.outcome is Outcome.N else "cannot"
            found = f"{self.players} players: the player to move {can} win against all the others"
        else:
            found = (
                "N-position: the player to move wins"
                if self.outcome is Outcome.N
                else "P-position: the player to move loses"
            )
            if self.remoteness is not None:
                found += f", remoteness {self.remoteness:,}"
            if self.grundy is not None:
                found += f", Grundy value {self.grundy:,}"
        wins = sum(1 for m in self.moves if m.winning)
        moves = f"{count_text(self.move_count)}, {wins:,} winning" + (
            "" if self.moves_complete else " listed"
        )
        return f"{head}; {found}; {moves}>"

    @property
    def proven(self) -> bool:
        if self.model == "li":
            return self.last_mover is not None
        return self.outcome is not None

    @property
    def winning_moves(self) -> list[MoveValue]:
        return [m for m in self.moves if m.winning]

    @property
    def best(self) -> MoveValue | None:
        """The move a perfect player makes, the same every time it is asked (hints and
        explanations name this one): the first of the fastest winning moves, else the first of
        the longest-resisting ones (an unknown length counts as the longest, as for the bot);
        ``None`` when nothing is proven or there is no move."""
        wins = self.winning_moves
        if wins:
            return min(wins, key=lambda m: m.remoteness if m.remoteness is not None else 1 << 62)
        known = [m for m in self.moves if m.winning is False]
        if not known or self.outcome is None:
            return None
        return max(known, key=lambda m: m.remoteness if m.remoteness is not None else 1 << 62)

    def listing_note(self) -> str:
        """What the move list leaves out, in a sentence ("" when it lists every move)."""
        if self.moves_complete:
            return ""
        count = number_text(self.move_count)
        text = f"{count} legal moves in all; only the winning ones are listed"
        total = self.winning_move_count
        listed = len(self.winning_moves)
        if total is None and not listed:
            return text + " (the winning moves could not be proven within the budget)."
        if self.listing_ran_out and (total is None or listed < total):
            of = "" if total is None else f" of {total:,}"
            return (
                text + f": the first {listed:,}{of} found within the budget (a larger budget, "
                "analyze --seconds N, lists more)."
            )
        if total is not None and listed >= total:
            return text + f" (all {total:,})."
        if total is None and isinstance(self.board, Piles) and not self.ruleset.end_positions:
            rules = self.ruleset.relative_rules
            if self.method == rules.method and not rules.lists_every_win:  # the theorem's own
                it = "it" if listed == 1 else "them"
                return f"{text}: {listed:,}, as {rules.theory_name} names {it} (others may win)."
        return (
            text + f": {listed:,} of {'them' if total is None else f'{total:,}'}, as their "
            "results would list more heaps than the limit (analyze --max-result-heaps N lists "
            "more)."
        )

    @property
    def nim_sum(self) -> int:
        from nimlab.theory.nim import nim_sum

        return nim_sum(self.board.heaps)

    def _repr_html_(self) -> str:
        """The board with its winning moves marked, and the explanation (Jupyter shows this)."""
        from nimlab.core.render import analysis_html

        return analysis_html(self)

    def to_json(self) -> dict[str, Any]:
        """The ``analyze --json`` object."""
        out: dict[str, Any] = {
            "position": list(display_heaps(self.board)),
            "game": self.ruleset.game.name,
            "misere": self.ruleset.misere,
            "end_positions": [
                list(e) for e in sorted(self.ruleset.end_positions, key=lambda e: (len(e), e))
            ],
            "outcome": None if self.outcome is None else str(self.outcome),
            "proven": self.proven,
            "grundy": self.grundy,
            "remoteness": self.remoteness,
            "method": self.method,
            "moves": [m.to_json() for m in self.moves],
        }
        if self.players != 2 or self.model is not None:
            out["players"] = self.players
            out["model"] = self.model
        if self.model == "li":
            out["last_mover"] = self.last_mover
        if not self.moves_complete:
            out["moves_complete"] = False
            if digit_count(self.move_count) <= DIGITS_SHOWN:
                out["move_count"] = self.move_count
            else:  # no JSON writer here writes it in decimal
                out["move_count"] = None
                out["move_count_digits"] = digit_count(self.move_count)
            if self.winning_move_count is not None:
                out["winning_move_count"] = self.winning_move_count
        if self.terminal:
            out["terminal"] = True
        if isinstance(self.board, Piles) and self.board.limit is not None:
            out["limit"] = self.board.limit
        return out


def analyze(
    ruleset: Ruleset | str,
    board: Board | Iterable[int],
    *,
    max_moves: int | None = DEFAULT_MAX_MOVES,
    seconds: float | None = None,
    budget: Budget | None = None,
    players: int = 2,
    model: str = "paranoid",
    max_cells: int = RESULT_CELLS,
) -> Analysis:
    """Analyse a position under a ruleset (see :class:`Analysis`). ``max_moves`` limits only
    the moves listed one by one: beyond it every winning move is listed, while their result
    positions hold at most ``max_cells`` heaps in all, and ``winning_move_count`` counts them
    all. ``seconds`` bounds the whole question as ``nimlab analyze --seconds`` does (see
    :func:`seconds_budget`; default: about 2 s); ``budget`` (a
    :class:`~nimlab.theory.budget.Budget`) instead, for full control. Past it the answer says
    "not proven" (:attr:`Analysis.shortfall`).
    With ``players > 2`` the position is a round's start with every player in, the first to
    move; ``model`` is ``"paranoid"`` or ``"li"`` (normal play). O(piles) for formulas.
    ``ruleset`` and ``board`` are what :class:`~nimlab.core.game.Game` takes: a ruleset or its
    text (``"kayles misere"``), a board or a list of heap sizes. Bad arguments raise a
    :class:`~nimlab.core.errors.NimlabError` (:class:`~nimlab.core.errors.ArgumentError` for a
    count, ``seconds`` or ``model`` out of range)."""
    ruleset = as_ruleset(ruleset)
    board = ruleset.rules.as_board(board)
    check_writable(board.heaps)
    if max_moves is not None:
        check_count(max_moves, "max_moves (moves listed one by one)", 0)
    check_count(max_cells, "max_cells (heaps in the listed results)", 1)
    check_count(players, "players", 2, MAX_PLAYERS)
    if model not in MODELS:
        raise ArgumentError(f"model {shown(model)}: choose {' or '.join(MODELS)}")
    if model == "li" and ruleset.misere and players > 2:
        raise ArgumentError("Li's model is for normal play: use model='paranoid' in misère play")
    if seconds is not None:
        if budget is not None:
            raise ArgumentError("give seconds or budget, not both")
        budget = seconds_budget(seconds)
    budget = budget if budget is not None else interactive_budget()
    if isinstance(board, Piles):
        if players > 2:
            raise PlayerError(f"{ruleset.game.title} is analysed for two players only")
        return _analyze_relative(ruleset, board, max_moves, budget)
    engine = ruleset.engine
    c = board.canonical
    terminal = is_terminal(ruleset.rule, c, ruleset.end_positions)
    count = 0 if terminal else count_moves(ruleset, board)
    if players > 2:
        return _analyze_players(ruleset, board, players, model, budget, terminal, count)
    # the remoteness never depends on how many moves are listed: a search adds it wherever
    # one is within reach (the engine bounds its cost when a formula gave the outcome)
    ev = engine.evaluate(c, remoteness=True, budget=budget)
    grundy = engine.grundy(c, budget) if not ruleset.misere and not ruleset.end_positions else None
    moves: list[MoveValue] = []
    complete = True
    winning_count: int | None = None
    ran_out = False
    if terminal:
        pass
    elif max_moves is not None and count > max_moves:
        moves, winning_count, ran_out = _winning_move_values(ruleset, board, budget, c, max_cells)
        complete = False
    else:
        moves, complete = move_values(
            ruleset, board, max_moves=None, move_count=count, budget=budget, position=c
        )
    analysis = Analysis(
        ruleset=ruleset,
        board=board,
        outcome=ev.outcome,
        remoteness=ev.remoteness,
        grundy=grundy,
        method=ev.method,
        moves=moves,
        moves_complete=complete,
        move_count=count,
        terminal=terminal,
        winning_move_count=winning_count,
        listing_ran_out=ran_out,
        quotient=(
            None if terminal or ev.outcome is None else misere_quotient_of(ruleset, c, budget)
        ),
        shortfall=ev.shortfall,
    )
    analysis.explanation.extend(explain(analysis))
    return analysis


def seconds_budget(seconds: float) -> Budget:
    """The budget of one question given ``seconds`` (checked by
    :func:`~nimlab.core.arguments.check_seconds`): that time and ten times the interactive
    positions, as ``nimlab analyze --seconds`` gives it. O(1)."""
    return Budget(seconds=check_seconds(seconds), positions=INTERACTIVE_POSITIONS * 10)


RELATIVE_SCAN = 100_000
"""Most moves of a relative's position scanned for winning ones when there are too many to
value one by one (beyond it, the winning moves are not listed)."""


def _analyze_relative(
    ruleset: Ruleset, board: Piles, max_moves: int | None, budget: Budget
) -> Analysis:
    """:func:`analyze` for the classic relatives (boards of :class:`Piles`): the rules' engine
    values the position and every move (its theorem where it holds, else the exact search).
    Beyond ``max_moves`` moves only winning moves are listed (scanning at most
    :data:`RELATIVE_SCAN` moves). Cost: one evaluation per distinct child."""
    engine = ruleset.relative_engine
    terminal = ruleset.is_over(board)
    count = 0 if terminal else count_moves(ruleset, board)
    ev = engine.evaluate(board.canonical, remoteness=True, budget=budget)
    moves: list[MoveValue] = []
    complete = True
    winning_count: int | None = None
    rules = ruleset.relative_rules
    wins = None
    only_winning = not terminal and max_moves is not None and count > max_moves
    if only_winning and not ruleset.end_positions:
        wins = rules.theorem_wins(board, ruleset.misere)
    if wins is not None:  # the theorem names them, whatever the number of moves
        complete = False
        for move in wins:
            left = rules.play(board, move)
            child = engine.evaluate(left.canonical, remoteness=False, budget=budget)
            moves.append(MoveValue(move, left.heaps, child.outcome, child.remoteness))
        winning_count = len(wins) if rules.lists_every_win else None
    elif only_winning and ev.outcome is not Outcome.N:
        complete = False  # P: no winning move; not proven: none of them would be either
        winning_count = 0 if ev.outcome is Outcome.P else None
    elif not terminal:
        complete = not only_winning
        scanned = 0
        for move, after in ruleset.rules.successors(board):
            scanned += 1
            if scanned > RELATIVE_SCAN or budget.cancelled or budget.remaining_seconds() == 0:
                winning_count = None
                break
            child = engine.evaluate(after.canonical, remoteness=not only_winning, budget=budget)
            if only_winning and child.outcome is not Outcome.P:
                continue
            moves.append(MoveValue(move, after.heaps, child.outcome, child.remoteness))
        else:
            if only_winning:
                winning_count = len(moves)
    grundy: int | None = None
    if not ruleset.misere and not ruleset.end_positions:  # where Sprague–Grundy holds
        values = rules.grundy_values([board.heaps, *(m.result for m in moves)], budget)
        if values is not None:
            grundy = values[0]
            moves = [replace(m, grundy=g) for m, g in zip(moves, values[1:], strict=True)]
    analysis = Analysis(
        ruleset=ruleset,
        board=board,
        outcome=ev.outcome,
        remoteness=ev.remoteness,
        grundy=grundy,
        method=ev.method,
        moves=moves,
        moves_complete=complete,
        move_count=count,
        terminal=terminal,
        winning_move_count=winning_count,
        shortfall=ev.shortfall,
    )
    analysis.explanation.extend(explain(analysis))
    return analysis


def _analyze_players(
    ruleset: Ruleset,
    board: Board,
    players: int,
    model: str,
    budget: Budget,
    terminal: bool,
    count: int,
) -> Analysis:
    seats = tuple(range(players))
    outcome: Outcome | None = None
    remoteness: int | None = None
    last_mover: int | None = None
    moves: list[MoveValue] = []
    complete = True
    method = "not proven"
    shortfall: Shortfall | None = None
    if model == "li":
        from nimlab.theory.li import li_last_mover

        try:
            last_mover = li_last_mover(
                ruleset.rule,
                board.canonical,
                players,
                end_positions=ruleset.end_positions,
                budget=budget,
            )
            method = "li"
            if not terminal and count <= DEFAULT_MAX_MOVES:
                for move, after in _distinct_moves(board, ruleset):
                    child = li_last_mover(
                        ruleset.rule,
                        after.canonical,
                        players,
                        end_positions=ruleset.end_positions,
                        budget=budget,
                    )
                    mine = (child + 1) % players
                    moves.append(
                        MoveValue(
                            move, display_heaps(after), None, None, mine == 0, last_mover=mine
                        )
                    )
            else:
                complete = terminal
        except BudgetExceeded as e:
            moves, complete = [], False
            shortfall = Shortfall("the search of Li's model", e.reason)
    else:
        solver = ruleset.engine.paranoid(board.canonical)
        try:
            wins = solver.round_winner_value(seats, 0, budget=budget)
            outcome = Outcome.of(wins)
            method = "paranoid"
        except BudgetExceeded as e:
            shortfall = Shortfall("the paranoid search", e.reason)
        if not terminal:
            found = paranoid_move_values(ruleset, board, board, seats, 0, budget=budget)
            if found is not None:
                moves, complete = found
            else:
                complete = False
    analysis = Analysis(
        ruleset=ruleset,
        board=board,
        outcome=outcome,
        remoteness=remoteness,
        grundy=None,
        method=method,
        moves=moves,
        moves_complete=complete,
        move_count=count,
        terminal=terminal,
        players=players,
        model=model,
        last_mover=last_mover,
        shortfall=shortfall,
    )
    analysis.explanation.extend(explain_players(analysis))
    return analysis


def explain_players(a: Analysis) -> list[str]:
    """Plain-language reasons for a multi-player analysis, naming the model."""
    n = a.players
    if a.model == "li":
        if a.last_mover is None:
            return [f"Not proven: Li's model for {n} players needed more than the search budget."]
        who = (
            "the player to move"
            if a.last_mover == 0
            else "the player who just moved"
            if a.last_mover == n - 1
            else f"the player {a.last_mover} turns after the player to move"
        )
        text = [
            f"Li's model for {n} players (each player wants to make the last move, or else to "
            f"have moved as recently as possible): with rational play {who} makes the last move."
        ]
        if a.ruleset.rule.is_nim and not a.ruleset.end_positions:
            text.append(
                f"For Nim the player who just moved makes the last move exactly when every "
                f"binary column of the heaps adds up to a multiple of {n}."
            )
        return text
    if a.outcome is None:
        return [f"Not proven: the paranoid search for {n} players ran out of budget."]
    if a.outcome is Outcome.N:
        return [
            f"Paranoid model, {n} players: the player to move can force a win even if all the "
            "others play together against them; the winning moves are marked."
        ]
    return [
        f"Paranoid model, {n} players: the others together can stop the player to move from "
        "winning, whatever they play."
    ]


def binary_table(heaps: tuple[int, ...], limit: int = 12) -> list[str]:
    """The nim-sum worked out in binary, one line per heap and the XOR at the bottom."""
    from nimlab.theory.nim import nim_sum

    shown = heaps[:limit]
    s = nim_sum(heaps)
    width = max([h.bit_length() for h in shown] + [s.bit_length(), 1])
    label = max(len(str(h)) for h in [*shown, s])
    lines = [f"  {h:>{label}} = {h:0{width}b}" for h in shown]
    if len(heaps) > limit:
        lines.append(f"  ... ({len(heaps) - limit} more heaps)")
    lines.append("  " + " " * label + "   " + "-" * width)
    lines.append(
        f"  {s:>{label}} = {s:0{width}b}  nim-sum (a column is 1 when it has an odd number of 1s)"
    )
    return lines


def value_table(heaps: tuple[int, ...], values: list[int], limit: int = 12) -> list[str]:
    """Each heap's Grundy value in binary, one line per heap, and their XOR at the bottom (the
    lines are indented by two spaces: a table, not a sentence)."""
    from functools import reduce
    from operator import xor

    total = reduce(xor, values, 0)
    shown = list(zip(heaps[:limit], values[:limit], strict=False))
    width = max([v.bit_length() for _, v in shown] + [total.bit_length(), 1])
    label = max(len(f"{h:,}") for h, _ in shown) if shown else 1
    digits = max(len(str(v)) for v in [*values[:limit], total])
    lines = [f"  heap {h:>{label},}  *{v:<{digits}} = {v:0{width}b}" for h, v in shown]
    if len(heaps) > limit:
        lines.append(f"  ... ({len(heaps) - limit:,} more heaps)")
    pad = len("heap ") + label + 2
    lines.append("  " + " " * (pad + 1 + digits + 3) + "-" * width)
    lines.append(
        f"  {'XOR':<{pad}}*{total:<{digits}} = {total:0{width}b}  (a column is 1 when it "
        "has an odd number of 1s)"
    )
    return lines


def _moved(board: Board, result: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    """The heap a move played on and the heaps it left in its place (``()`` when none), from
    the board and the move's result. O(heaps)."""
    from collections import Counter

    before = Counter(h for h in board.heaps if h)
    after = Counter(h for h in result if h)
    gone = list((before - after).elements())
    parts = tuple(sorted((after - before).elements()))
    if len(gone) != 1:  # a move that leaves a heap of its own size: take 0 that splits nothing
        return (gone[0] if gone else 0), parts
    return gone[0], parts


def _parts_text(parts: tuple[int, ...]) -> str:
    return " and ".join(f"{p:,}" for p in parts) if parts else "nothing"


def position_terms(n: Outcome) -> str:
    """The standard name of an outcome class, with what it means."""
    if n is Outcome.N:
        return "an N-position (the Next player, the one to move, wins)"
    return "a P-position (the Previous player, who just moved, wins)"


def explain(a: Analysis) -> list[str]:
    """Plain-language reasons for the outcome and the winning moves, the same for every
    interface: the theorem that decides the position with its working (each heap's Grundy
    value and their XOR in binary; in misère play each heap's element of the misère quotient
    and their product), which heap the winning move changes and to which value; where only an
    exact search decides, why no formula applies and what the moves' remoteness means. Lines
    that start with two spaces form a table. Cost: O(heaps) beyond the analysis."""
    r = a.ruleset
    lines: list[str] = []
    if a.terminal:
        who = "lost" if r.misere else "won"
        lines.append(
            f"The game is over here: no move can be made. Whoever moved into this position has "
            f"{who} ({'misère' if r.misere else 'normal'} play), so it counts as "
            f"{position_terms(Outcome.of(r.misere))}. It cannot be a start position: the game "
            "would be over before anyone moves."
        )
        return lines
    if a.outcome is None:
        lines.append(
            "Not proven: the exact search needed more time or positions than its budget, and "
            "no theorem covers these rules, so no move is marked winning or losing."
        )
        return lines
    if isinstance(a.board, Piles):
        return _explain_relative(a, a.board)
    heaps = tuple(h for h in a.board.heaps if h)
    if r.rule.is_nim and r.is_textbook:
        lines += _explain_nim(a, heaps)
    elif r.is_textbook and not r.misere and a.grundy is not None:
        lines += _explain_grundy(a, heaps)
    elif r.is_textbook and r.misere and a.method == "misere-tame":
        lines += _explain_tame(a, heaps)
    else:
        if a.quotient is not None:
            lines += _explain_quotient(a, heaps, a.quotient)
        else:
            lines += _explain_search(a)
    return lines


def _title(ruleset: Ruleset) -> str:
    """The game's title to start a sentence with."""
    title = ruleset.game.title
    return title[:1].upper() + title[1:]


def _winning_count(a: Analysis) -> int:
    if a.winning_move_count is not None:
        return a.winning_move_count
    return len(a.winning_moves)


def _winning_sentence(a: Analysis, why: str) -> str:
    """``Winning move: ...``, then ``why`` (which heap changes to which value) and how many
    other winning moves there are."""
    best = a.best
    assert best is not None
    others = _winning_count(a) - 1
    ends = ""
    if best.remoteness == 0:
        ends = " (which ends the game)"
    elif best.remoteness is not None:
        ends = f" (the game then ends within {count_text(best.remoteness, 'more move')})"
    text = (
        f"Winning move: {describe_move(best.move, a.board)}, leaving "
        f"{short_position(best.result)}, a P-position{ends}."
    )
    if why:
        text += " " + why
    if a.winning_move_count is None and not a.moves_complete:
        text += (
            f" It is one of at least {count_text(others + 1, 'winning move')} (not all of them "
            "were worked out)."
        )
    elif others > 0:
        text += (
            f" There {'is' if others == 1 else 'are'} {count_text(others, 'other winning move')}."
        )
    else:
        text += " It is the only one."
    return text


def _no_winning_sentence(a: Analysis, why: str) -> str:
    length = (
        f" With best resistance the game lasts {count_text(a.remoteness, 'more move')}."
        if a.remoteness
        else ""
    )
    return f"No winning move: {why}{length}"


def _explain_nim(a: Analysis, heaps: tuple[int, ...]) -> list[str]:
    r = a.ruleset
    lines: list[str] = []
    best = a.best
    s = a.nim_sum
    if r.misere:
        lines.append(
            "Misère Nim: play as in normal Nim (nim-sum 0) while two or more heaps are larger "
            "than 1; once only one is, reduce it to 0 or 1 to leave an odd number of 1-heaps."
        )
        if any(h > 1 for h in heaps):
            lines += binary_table(heaps)
        else:
            lines.append(
                f"All heaps are 1: there are {len(heaps)}, and the player who takes the last "
                "one loses."
            )
    else:
        lines += [
            "Normal-play Nim: a position is P exactly when its nim-sum (the XOR of the heaps) is "
            "0 (Bouton's theorem).",
            *binary_table(heaps),
        ]
    if a.outcome is Outcome.N and best is not None and best.winning:
        heap, parts = _moved(a.board, best.result)
        left = parts[0] if parts else 0
        why = ""
        if not r.misere or sum(1 for h in heaps if h > 1) >= 2 or left == heap ^ s:
            binary = f" ({heap:b} in binary)" if heap.bit_length() <= 32 else ""
            why = (
                f"The heap of {heap:,}{binary} has a 1 in the nim-sum's highest "
                f"column; it goes to {heap:,} XOR {s:,} = {left:,}, so every column becomes "
                "even (nim-sum 0), and every reply makes the nim-sum non-zero again."
            )
        else:
            ones = sum(1 for h in best.result if h == 1)
            why = (
                f"The heap of {heap:,} goes to {left}, leaving {count_text(ones, 'heap')} of 1: "
                "an odd number."
            )
        lines.append(_winning_sentence(a, why))
    elif a.outcome is Outcome.P:
        lines.append(
            _no_winning_sentence(
                a,
                "the nim-sum is 0, so every move makes it non-zero, and the opponent can restore 0."
                if not r.misere or any(h > 1 for h in heaps)
                else "every move leaves an N-position.",
            )
        )
    return lines


def _explain_grundy(a: Analysis, heaps: tuple[int, ...]) -> list[str]:
    engine = a.ruleset.engine
    g = engine.heap_grundy
    values = [g(h) for h in heaps]
    total = a.grundy or 0
    lines = [
        f"{_title(a.ruleset)}: by the Sprague–Grundy theorem each heap is worth a nimber, "
        "its Grundy value (the smallest value none of its moves leads to), and the position "
        f"is worth their XOR, *{total}; it is P exactly when that is 0.",
        *value_table(heaps, values),
    ]
    best = a.best
    if a.outcome is Outcome.N and best is not None and best.winning:
        heap, parts = _moved(a.board, best.result)
        before = g(heap) if heap else 0
        after = 0
        for p in parts:
            after ^= g(p)
        if not parts:
            becomes = "nothing (value *0)"
        elif len(parts) == 1:
            becomes = f"{parts[0]:,} (value *{after})"
        else:
            each = " XOR ".join(f"*{g(p)}" for p in parts)
            becomes = f"{_parts_text(parts)} (values {each} = *{after})"
        why = (
            f"It changes the heap of {heap:,} (value *{before}) into {becomes}, and "
            f"*{before} XOR *{total} = *{after}: the heap's value XOR the total, so the XOR of "
            "all values becomes 0."
        )
        lines.append(_winning_sentence(a, why))
    elif a.outcome is Outcome.P:
        lines.append(
            _no_winning_sentence(
                a,
                "the XOR is 0, and every move changes one heap's value (a heap never has a move "
                "to its own value), so it leaves a non-zero XOR, an N-position.",
            )
        )
    return lines


def _explain_tame(a: Analysis, heaps: tuple[int, ...]) -> list[str]:
    """Misère play of a tame game (Lasker's Nim): Bouton's misère rule on Grundy values."""
    g = a.ruleset.engine.heap_grundy
    values = [g(h) for h in heaps]
    total = 0
    for v in values:
        total ^= v
    big = any(h >= 2 for h in heaps)
    lines = [
        f"{_title(a.ruleset)}, misère play: the game is tame, so Bouton's misère rule holds "
        "with Grundy values. While some heap has 2 or more, the position is P exactly when the "
        "XOR of the heaps' Grundy values is 0; once every heap is 0 or 1, it is P exactly when "
        "the number of heaps of 1 is odd (the opponent takes the last one).",
        *value_table(heaps, values),
    ]
    if big:
        state = f"a heap of 2 or more is left and the XOR is *{total}"
    else:
        state = f"every heap is 0 or 1, with {count_text(len(heaps), 'heap')} of 1"
    if a.outcome is Outcome.N and a.best is not None and a.best.winning:
        lines.append(
            _winning_sentence(a, f"Here {state}; the move leaves a P-position by the same rule.")
        )
    elif a.outcome is Outcome.P:
        lines.append(
            _no_winning_sentence(
                a,
                f"{state}: every move changes one heap's value, or leaves an even number of heaps "
                "of 1 once the last heap of 2 or more is gone, an N-position.",
            )
        )
    return lines


def misere_quotient_of(
    ruleset: Ruleset, position: Canon, budget: Budget | None = None
) -> MisereQuotient | None:
    """The misère quotient that covers ``position``, for misère octal games without extra end
    positions (``None`` otherwise, or out of reach within ``budget``, the question's: the one
    that valued the position, so that its attempt is not made twice). Cost: the engine's
    quotient (computed once per game and remembered)."""
    r = ruleset
    if not r.misere or not r.is_textbook or r.rule.is_nim or not position:
        return None
    try:
        return r.engine.quotient(position, budget)
    except (ValueError, BudgetExceeded):
        return None


def _covered(q: MisereQuotient) -> str:
    """What a quotient that is not proven for every heap covers: `` (the quotient of the heaps
    up to 20, which covers these)``."""
    if q.proven:
        return ""
    return f" (the quotient of the heaps up to {q.heap_bound}, which covers these)"


def _explain_quotient(a: Analysis, heaps: tuple[int, ...], q: MisereQuotient) -> list[str]:
    """The misère quotient's working: each heap's element, their product, the P-portion."""
    from nimlab.theory.quotient import default_heap_bound

    r = a.ruleset
    name = q.elements
    images = [q.image(h) for h in heaps]
    product = q.element_of(heaps)
    p_portion = ", ".join(name[x] for x in q.p_elements)
    how = (
        "it was proven by the quotient"
        if a.method == "misere-quotient"
        else "an exact search agrees, and gives each move's remoteness"
    )
    lines = [
        f"{_title(r)}, misère play: the Sprague–Grundy theorem does not hold when the last "
        "move loses, but the game's misère quotient (Plambeck–Siegel) does: each heap stands "
        f"for an element of a finite monoid of {q.order} elements{_covered(q)}; the position "
        "is P exactly "
        f"when the product of its heaps' elements lies in the P-portion ({p_portion}); {how}.",
    ]
    label = max(len(f"{h:,}") for h in heaps[:12])
    lines += [f"  heap {h:>{label},}  {name[x]}" for h, x in zip(heaps[:12], images, strict=False)]
    if len(heaps) > 12:
        lines.append(f"  ... ({len(heaps) - 12:,} more heaps)")
    in_p = "in the P-portion" if q.is_p(product) else "not in the P-portion"
    lines.append(f"  {'product':<{label + 5}}  {name[product]}  ({in_p})")
    lines.append(
        f"The quotient's generators, relations, heap images and multiplication table: "
        f"nimlab quotient {r.game.label} --table"
        + (f" --max-heap {q.heap_bound}." if q.heap_bound > default_heap_bound(r.rule) else ".")
    )
    best = a.best
    if a.outcome is Outcome.N and best is not None and best.winning:
        heap, parts = _moved(a.board, best.result)
        left = " and ".join(name[q.image(p)] for p in parts)
        if len(parts) > 1:
            left = f"elements {left}, product {name[q.element_of(parts)]}"
        else:
            left = f"element {left or name[0]}"
        after = name[q.element_of(tuple(h for h in best.result if h))]
        why = (
            f"It changes the heap of {heap:,} (element {name[q.image(heap)]}) into "
            f"{_parts_text(parts)} ({left}), so the product becomes {after}, in the "
            "P-portion."
        )
        lines.append(_winning_sentence(a, why))
    elif a.outcome is Outcome.P:
        lines.append(
            _no_winning_sentence(a, "the product is in the P-portion, and no move keeps it there.")
        )
    return lines


def _explain_relative(a: Analysis, board: Piles) -> list[str]:
    """The working of a relative's theorem (Wythoff's pairs, Moore's digits, ...) where it
    decided, else why only an exact search does; then the winning move or why there is none."""
    r = a.ruleset
    rules = r.relative_rules
    lines: list[str] = []
    if a.method == rules.method:
        lines += rules.explain(board, r.misere)
        if a.grundy is not None:
            lines.append(
                f"Its Grundy value is {a.grundy}: the least value no move leads to (0 exactly at "
                "the P-positions); in a sum with other games the nim-sum of the values decides "
                "(normal play)."
            )
    else:
        if r.end_positions:
            ends = ", ".join(
                short_position(e) for e in sorted(r.end_positions, key=lambda e: (len(e), e))
            )
            why = (
                f"No theorem applies: the extra end positions ({ends}) change the game, and "
                f"{rules.theory_name} assumes its own end."
            )
        else:
            why = f"No theorem applies: {rules.theory_name} is not known to hold in misère play."
        lines.append(why + " An exact search over every position reachable from here decided.")
    if a.outcome is Outcome.N and a.best is not None and a.best.winning:
        lines.append(_winning_sentence(a, ""))
    elif a.outcome is Outcome.P:
        lines.append(_no_winning_sentence(a, "every move leaves an N-position."))
    return lines


def _explain_search(a: Analysis) -> list[str]:
    """Why no formula applies, and what the moves' remoteness says."""
    r = a.ruleset
    if r.end_positions:
        ends = ", ".join(
            short_position(e) for e in sorted(r.end_positions, key=lambda e: (len(e), e))
        )
        why = (
            f"No formula applies: the extra end positions ({ends}) end the game early, so it is "
            "no longer a sum of independent heaps and neither Grundy values nor a misère "
            "quotient decide it."
        )
    elif r.misere:
        why = (
            "No formula applies: in misère play the Sprague–Grundy theorem does not hold, and "
            "this game's misère quotient is out of reach here."
        )
    else:
        why = (
            "No formula applies here: the heaps' Grundy values are out of reach (a heap too "
            "large, with no proven period)."
        )
    lines = [
        why + " An exact search over every position reachable from here proved the outcome.",
    ]
    if a.remoteness is not None:
        lines.append(
            "Remoteness counts the moves left with perfect play (the winner ends the game as "
            "soon as possible, the loser resists as long as possible); each move's remoteness "
            "is shown with it."
        )
    if a.outcome is Outcome.N and a.best is not None and a.best.winning:
        lines.append(_winning_sentence(a, ""))
    elif a.outcome is Outcome.P:
        lines.append(_no_winning_sentence(a, "every move leaves an N-position."))
    return lines


def short_position(heaps: tuple[int, ...], limit: int = 12) -> str:
    """``[1, 4, 5]`` (thousands separated), or the first heaps and a count for long
    positions."""
    if len(heaps) <= limit:
        return "[" + ", ".join(f"{h:,}" for h in heaps) + "]"
    return "[" + ", ".join(f"{h:,}" for h in heaps[:limit]) + f", ... ({len(heaps):,} heaps)]"


def describe_move(move: Move, board: Board) -> str:
    """``"take 3 from pile 2"``, ``"take stones 4-5 of row 1"``, ``"split row 1 before stone
    3"`` (the relatives: as their rules say, e.g. ``"take 2 from both piles"``)."""
    if isinstance(board, Piles):
        return board.rule.describe_move(move, board)
    return move_words(move)


def child_canonical(board: Board, ruleset: Ruleset, move: Move) -> Canon:
    return canonical(board.play(ruleset.rule, move).heaps)
