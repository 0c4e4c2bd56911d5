"""Analysis of a position as people and scripts want it: outcome, Grundy value, nim-sum in binary,
the value and remoteness of every legal move, and a plain-language explanation.

Every value comes from the ruleset's :class:`~nimlab.theory.engine.Engine`; this module only maps
the engine's canonical answers onto the board people see. The ``limit`` on listed moves trims
what is *shown*, never what is known or played: when a position has more legal moves than the
limit, its winning moves are still all listed (from the engine's formulas where the moves are too
many to value one by one).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from nimlab.core.position import Board, Move, Rows
from nimlab.core.ruleset import Ruleset
from nimlab.theory.budget import Budget, BudgetExceeded, Shortfall
from nimlab.theory.engine import CanonMove, Evaluation, apply_move, interactive_budget
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, canonical, is_terminal

__all__ = [
    "DEFAULT_MAX_MOVES",
    "MODELS",
    "Analysis",
    "MoveValue",
    "analyze",
    "board_move",
    "count_moves",
    "display_heaps",
    "move_values",
]

DEFAULT_MAX_MOVES = 1000
"""Moves listed one by one at most (a display limit; winning moves are always listed)."""

RESULT_CELLS = 2_000_000
"""Most heaps listed in the results of an incomplete move list (bounds huge answers)."""

MODELS = ("paranoid", "li")
"""Models of play for more than two players (see :func:`analyze`)."""


@dataclass(frozen=True, slots=True)
class MoveValue:
    """One legal move and the value of the position it leaves (for the opponent to move).

    ``outcome`` is ``None`` when it could not be proven; ``winning`` is then ``None`` too. With
    more than two players (paranoid model) ``outcome`` is ``None`` and ``hero_wins`` says whether
    the move wins for the mover against all the others together.
    """

    move: Move
    result: tuple[int, ...]
    outcome: Outcome | None
    remoteness: int | None
    hero_wins: bool | None = None
    last_mover: int | None = None

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
        out.update(
            result=list(self.result),
            outcome=None if self.outcome is None else str(self.outcome),
            remoteness=self.remoteness,
            winning=self.winning,
        )
        if self.last_mover is not None:
            out["last_mover"] = self.last_mover
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


def _heap_move_count(ruleset: Ruleset, heap: int, rows: bool) -> int:
    """Legal moves from one heap (rows: counting each place in the run). O(explicit digits)."""
    rule = ruleset.rule
    if heap <= 0:
        return 0
    if rule.is_nim and not rows:
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
            n += 2 if rows else 1
        if d & 4 and rest >= 2:
            n += (rest - 1) if rows else rest // 2
        return n

    for k in range(0, min(heap, explicit) + 1):
        total += count(k, rule.digit(k)) if k else count(0, rule.digit(0)) if rows else 0
    if rule.tail and heap > explicit:
        d = rule.tail
        lo, hi = explicit + 1, heap
        # k < heap: d & 2 leaves one heap; d & 4 splits the rest; k == heap takes it all.
        span = max(0, (hi - 1) - lo + 1)
        if d & 2:
            total += span * (2 if rows else 1)
        if d & 4:
            total += sum(count(k, 4) for k in range(lo, hi)) if span < 4096 else span * heap
        if d & 1:
            total += 1
    return total


def count_moves(ruleset: Ruleset, board: Board) -> int:
    """The number of legal moves on the board without listing them: O(piles) for Nim,
    O(piles * explicit digits) otherwise, whatever the heap sizes."""
    rows = isinstance(board, Rows)
    if ruleset.rule.is_nim and not rows:
        return sum(board.heaps)
    return sum(_heap_move_count(ruleset, h, rows) for h in board.heaps)


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


# -- move values --------------------------------------------------------------------------------


def move_values(
    ruleset: Ruleset,
    board: Board,
    *,
    max_moves: int | None = DEFAULT_MAX_MOVES,
    move_count: int | None = None,
    budget: Budget | None = None,
    position: Canon | None = None,
) -> tuple[list[MoveValue], bool]:
    """The value of every legal move (one per distinct pile and resulting position), and
    whether the list is complete. ``move_count`` and ``position`` (the board's canonical form),
    when the caller knows them, are not computed again.

    With more than ``max_moves`` legal moves only winning moves are listed (from the engine's
    formulas, O(piles) for Nim) and the second item is ``False``: at most ``max_moves`` of them,
    and at most :data:`RESULT_CELLS` heaps of results in all (each lists the whole position), so
    the answer stays linear in the size of the position. Values that
    could not be proven within ``budget`` are ``None``. Cost: one engine evaluation per distinct
    resulting canonical position (remembered by the engine).
    """
    engine = ruleset.engine
    budget = budget if budget is not None else interactive_budget()
    count = move_count if move_count is not None else count_moves(ruleset, board)
    if max_moves is not None and count > max_moves:
        shown = max(1, min(max_moves, RESULT_CELLS // max(1, len(board.heaps))))
        c = position if position is not None else board.canonical
        wins = engine.winning_moves(c, limit=shown, budget=budget) or []
        searchable = engine.remoteness_within_reach(c)
        values = []
        for cmove in wins:
            move = board_move(board, cmove)
            after = board.play(ruleset.rule, move)
            remoteness = None
            child = apply_move(c, cmove)
            if searchable or is_terminal(ruleset.rule, child, ruleset.end_positions):
                remoteness = engine.evaluate(child, budget=budget).remoteness
            values.append(MoveValue(move, display_heaps(after), Outcome.P, remoteness))
        return values, False
    cache: dict[Canon, Evaluation] = {}
    values = []
    for move, after in _distinct_moves(board, ruleset):
        c = after.canonical
        if c not in cache:
            cache[c] = engine.evaluate(c, budget=budget)
        ev = cache[c]
        values.append(MoveValue(move, display_heaps(after), ev.outcome, ev.remoteness))
    return values, True


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
    shortfall: Shortfall | None = None
    """When not proven: which step ran out of which budget."""

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
        the longest-resisting ones; ``None`` when nothing is proven or there is no move."""
        wins = self.winning_moves
        if wins:
            return min(wins, key=lambda m: m.remoteness if m.remoteness is not None else 1 << 62)
        known = [m for m in self.moves if m.winning is False]
        if not known or self.outcome is None:
            return None
        return max(known, key=lambda m: m.remoteness if m.remoteness is not None else -1)

    @property
    def nim_sum(self) -> int:
        from nimlab.theory.nim import nim_sum

        return nim_sum(self.board.heaps)

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
            out["move_count"] = self.move_count
        if self.terminal:
            out["terminal"] = True
        return out


def analyze(
    ruleset: Ruleset,
    board: Board,
    *,
    max_moves: int | None = DEFAULT_MAX_MOVES,
    budget: Budget | None = None,
    players: int = 2,
    model: str = "paranoid",
) -> Analysis:
    """Analyse a position under a ruleset (see :class:`Analysis`). ``max_moves`` limits only
    the moves listed one by one. ``budget`` bounds the whole question (default: about 2 s).
    With ``players > 2`` the position is a round's start with every player in, the first to
    move; ``model`` is ``"paranoid"`` or ``"li"`` (normal play). O(piles) for formulas."""
    budget = budget if budget is not None else interactive_budget()
    engine = ruleset.engine
    c = board.canonical
    terminal = is_terminal(ruleset.rule, c, ruleset.end_positions)
    count = 0 if terminal else count_moves(ruleset, board)
    if players > 2:
        return _analyze_players(ruleset, board, players, model, budget, terminal, count)
    small = max_moves is None or count <= max_moves
    ev = engine.evaluate(c, remoteness=small or terminal, budget=budget)
    grundy = engine.grundy(c) if not ruleset.misere and not ruleset.end_positions else None
    if terminal:
        moves: list[MoveValue] = []
        complete = True
    else:
        moves, complete = move_values(
            ruleset, board, max_moves=max_moves, move_count=count, budget=budget, position=c
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


def explain(a: Analysis) -> list[str]:
    """Plain-language reasons for the outcome and the winning moves."""
    r = a.ruleset
    lines: list[str] = []
    if a.terminal:
        who = "lost" if r.misere else "won"
        lines.append(
            f"The game is over here: whoever moved into this position has {who} "
            f"({'misère' if r.misere else 'normal'} play), so it counts as a "
            f"{'N' if r.misere else 'P'}-position. As a start position, the first player "
            f"{'is eliminated' if r.misere else 'wins'} at once."
        )
        return lines
    if a.outcome is None:
        lines.append(
            "Not proven: the exact search needed more time or positions than its budget, and "
            "no theorem covers these rules, so no move is marked winning or losing."
        )
        return lines
    heaps = tuple(h for h in a.board.heaps if h)
    plain_nim = r.rule.is_nim and r.is_textbook
    quotient = a.method == "misere-quotient"
    if plain_nim and not r.misere:
        lines += [
            "Normal-play Nim: a position is P exactly when its nim-sum is 0 (Bouton's theorem).",
            *binary_table(heaps),
        ]
        if a.outcome is Outcome.N:
            lines.append(
                "The nim-sum is not 0, so the player to move wins: reduce a heap whose binary "
                "form has a 1 in the nim-sum's highest column, so that every column becomes even "
                "(nim-sum 0). Every reply then makes the nim-sum non-zero again."
            )
        else:
            lines.append(
                "The nim-sum is 0, so every move makes it non-zero and the opponent can restore 0: "
                "the player to move loses against perfect play."
            )
    elif plain_nim:
        big = sum(1 for h in heaps if h > 1)
        lines.append(
            "Misère Nim: play as in normal Nim (nim-sum 0) while two or more heaps are larger "
            "than 1; once only one is, reduce it to 0 or 1 to leave an odd number of 1-heaps."
        )
        if big >= 1:
            lines += binary_table(heaps)
        else:
            ones = len(heaps)
            lines.append(
                f"All heaps are 1: there are {ones}, and the player who takes the last one loses."
            )
    elif r.is_textbook and not r.misere and a.grundy is not None:
        lines.append(
            f"{r.game.title}: by the Sprague–Grundy theorem the position is worth nimber "
            f"*{a.grundy}, the XOR of its heaps' Grundy values; it is P exactly when that is 0."
        )
    elif quotient:
        lines.append(
            f"{r.game.title}, misère play: by the game's misère quotient (Plambeck–Siegel) each "
            "heap stands for an element of a finite monoid; the position is P exactly when "
            "the product of its heaps' elements lies in the P-portion."
        )
    else:
        reason = []
        if r.end_positions:
            reason.append("extra end positions")
        if r.misere:
            reason.append("misère play")
        lines.append(
            f"No formula covers {' and '.join(reason) or 'this game'}: the outcome was proven "
            "by exact search over all positions reachable from here."
        )
    winning = a.winning_moves
    best = a.best
    if a.outcome is Outcome.N and winning and best is not None:
        others = len(winning) - 1
        lines.append(
            f"Winning move: {describe_move(best.move, a.board)}, leaving "
            f"{short_position(best.result)}, a P-position"
            + (
                (
                    " (which ends the game)"
                    if best.remoteness == 0
                    else f" (the game then ends within {best.remoteness} more moves)"
                )
                if best.remoteness is not None
                else ""
            )
            + (
                f"; {others} other winning move{'s' if others > 1 else ''}."
                if others
                else "; it is the only one."
            )
        )
    elif a.outcome is Outcome.P:
        lines.append(
            "No winning move: every move leaves an N-position"
            + (
                f"; with best resistance the game lasts {a.remoteness} more moves."
                if a.remoteness
                else "."
            )
        )
    return lines


def short_position(heaps: tuple[int, ...], limit: int = 12) -> str:
    """``[1, 4, 5]``, or the first heaps and a count for long positions."""
    if len(heaps) <= limit:
        return "[" + ", ".join(map(str, heaps)) + "]"
    return "[" + ", ".join(map(str, heaps[:limit])) + f", ... ({len(heaps):,} heaps)]"


def describe_move(move: Move, board: Board) -> str:
    """``"take 3 from pile 2"`` or ``"take 2 stones at 4-5 of row 1"``."""
    if move.at is None:
        return f"take {move.take} from pile {move.pile}"
    stones = f"stone {move.at}" if move.take == 1 else f"stones {move.at}-{move.at + move.take - 1}"
    return f"take {stones} of row {move.pile}"


def child_canonical(board: Board, ruleset: Ruleset, move: Move) -> Canon:
    return canonical(board.play(ruleset.rule, move).heaps)
