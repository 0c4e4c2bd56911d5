"""Analysis of a position as people and scripts want it: outcome, Grundy value, nim-sum in binary,
the value and remoteness of every legal move, and a plain-language explanation.

Both the ``analyze`` command and the perfect bot use :func:`move_values`, so what the bot plays is
exactly what the analysis shows.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from nimlab.core.position import Board, Move, Position
from nimlab.core.ruleset import Ruleset
from nimlab.theory.engine import Evaluation
from nimlab.theory.nim import misere_nim_winning_moves, nim_sum, nim_winning_moves
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, canonical

__all__ = ["Analysis", "MoveValue", "analyze", "formula_winning_moves", "move_values"]

DEFAULT_MAX_MOVES = 1000


@dataclass(frozen=True, slots=True)
class MoveValue:
    """One legal move and the value of the position it leaves (for the opponent to move)."""

    move: Move
    result: tuple[int, ...]
    outcome: Outcome | None
    remoteness: int | None

    @property
    def winning(self) -> bool:
        """The move leaves a P-position: the mover wins with perfect play."""
        return self.outcome is Outcome.P

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
        return out


def formula_winning_moves(ruleset: Ruleset, board: Board, limit: int = 64) -> list[Move] | None:
    """Winning moves of plain Nim (normal or misère, no extra end positions) straight from the
    formula, O(piles) whatever the heap sizes; ``None`` for any other ruleset."""
    if not (ruleset.rule.is_nim and ruleset.is_textbook and isinstance(board, Position)):
        return None
    finder = misere_nim_winning_moves if ruleset.misere else nim_winning_moves
    return [Move(i + 1, board.heaps[i] - after) for i, after in finder(board.heaps, limit=limit)]


def _distinct_moves(board: Board, ruleset: Ruleset) -> Iterator[tuple[Move, Board]]:
    """Legal moves with their results, one per distinct (pile, resulting position)."""
    seen: set[tuple[int, tuple[int, ...]]] = set()
    for move, after in board.successors(ruleset.rule):
        key = (move.pile, after.heaps)
        if key not in seen:
            seen.add(key)
            yield move, after


def move_values(
    ruleset: Ruleset,
    board: Board,
    *,
    max_moves: int | None = DEFAULT_MAX_MOVES,
    move_count: int | None = None,
) -> tuple[list[MoveValue], bool]:
    """The value of every legal move (one per distinct pile and resulting position).

    When the position has more than ``max_moves`` legal moves only the winning moves found by
    formula are listed and the second item is ``False`` (the list is incomplete).
    ``move_count``, when the caller already knows it, saves counting the moves again.
    Cost: one exact evaluation per distinct resulting canonical position (cached per ruleset).
    """
    evaluator = ruleset.evaluator
    if max_moves is not None and (
        (move_count if move_count is not None else board.count_moves(ruleset.rule)) > max_moves
    ):
        shortcut = formula_winning_moves(ruleset, board, limit=max_moves)
        values = []
        for move in shortcut or []:
            after = board.play(ruleset.rule, move)
            ev = evaluator.evaluate(after.canonical)
            values.append(MoveValue(move, after.heaps, ev.outcome, ev.remoteness))
        return values, False
    cache: dict[Canon, Evaluation] = {}
    values = []
    for move, after in _distinct_moves(board, ruleset):
        c = after.canonical
        if c not in cache:
            cache[c] = evaluator.evaluate(c)
        ev = cache[c]
        values.append(MoveValue(move, after.heaps, ev.outcome, ev.remoteness))
    return values, True


@dataclass(frozen=True)
class Analysis:
    """Everything nimlab knows about a position for two players."""

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
    explanation: list[str] = field(default_factory=list)

    @property
    def proven(self) -> bool:
        return self.outcome is not None

    @property
    def winning_moves(self) -> list[MoveValue]:
        return [m for m in self.moves if m.winning]

    @property
    def nim_sum(self) -> int:
        return nim_sum(self.board.heaps)

    def to_json(self) -> dict[str, Any]:
        """The ``analyze --json`` object (interfaces.md)."""
        out: dict[str, Any] = {
            "position": list(self.board.heaps),
            "game": self.ruleset.game.name,
            "misere": self.ruleset.misere,
            "end_positions": [
                list(e) for e in sorted(self.ruleset.end_positions, key=lambda e: (len(e), e))
            ],
            "outcome": None if self.outcome is None else str(self.outcome),
            "proven": self.proven,
            "grundy": self.grundy,
            "remoteness": self.remoteness,
            "moves": [m.to_json() for m in self.moves],
        }
        if not self.moves_complete:
            out["moves_complete"] = False
            out["move_count"] = self.move_count
        if self.terminal:
            out["terminal"] = True
        return out


def analyze(
    ruleset: Ruleset, board: Board, *, max_moves: int | None = DEFAULT_MAX_MOVES
) -> Analysis:
    """Analyse a position under a ruleset for two players (see :class:`Analysis`)."""
    evaluator = ruleset.evaluator
    c = board.canonical
    terminal = ruleset.is_terminal(board.heaps)
    count = board.count_moves(ruleset.rule) if not terminal else 0
    small = max_moves is None or count <= max_moves
    ev = evaluator.evaluate(c, remoteness=small or evaluator.search_size(c) is not None)
    grundy = evaluator.grundy(c)
    if terminal:
        moves: list[MoveValue] = []
        complete = True
    else:
        moves, complete = move_values(ruleset, board, max_moves=max_moves, move_count=count)
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
    )
    analysis.explanation.extend(explain(analysis))
    return analysis


def binary_table(heaps: tuple[int, ...], limit: int = 12) -> list[str]:
    """The nim-sum worked out in binary, one line per heap and the XOR at the bottom."""
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
            "Not proven: the exact search needed more positions than its budget. The moves "
            "shown are the textbook strategy's best guess."
        )
        return lines
    heaps = tuple(h for h in a.board.heaps if h)
    plain_nim = r.rule.is_nim and r.is_textbook
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
    if a.outcome is Outcome.N and winning:
        best = min(winning, key=lambda m: (m.remoteness is None, m.remoteness or 0))
        others = len(winning) - 1
        lines.append(
            f"Winning move: {describe_move(best.move, a.board)}, leaving {list(best.result)}, a "
            "P-position"
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


def describe_move(move: Move, board: Board) -> str:
    """``"take 3 from pile 2"`` or ``"take 2 stones at 4-5 of row 1"``."""
    if move.at is None:
        return f"take {move.take} from pile {move.pile}"
    stones = f"stone {move.at}" if move.take == 1 else f"stones {move.at}-{move.at + move.take - 1}"
    return f"take {stones} of row {move.pile}"


def child_canonical(board: Board, ruleset: Ruleset, move: Move) -> Canon:
    return canonical(board.play(ruleset.rule, move).heaps)
