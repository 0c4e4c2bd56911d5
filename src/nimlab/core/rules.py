"""The rules of a game as one protocol, and its implementations.

The names (as in OpenSpiel and python-chess):

- **the rules** (:class:`Rules`): one game with its parameters (``nim``, ``moore:2``,
  ``octal:0.137``): its positions, its legal moves and their text forms, whether moves split
  heaps, whether positions are sums of independent heaps (so that Grundy values and misère
  quotients mean something), which theory decides it, which board shows it. A
  :class:`~nimlab.core.ruleset.Ruleset` adds normal or misère play and extra end positions.
- **a position** (a board: :class:`~nimlab.core.position.Position`,
  :class:`~nimlab.core.position.Rows` or :class:`~nimlab.core.position.Piles`): one moment's
  heaps, immutable; :class:`~nimlab.core.state.GameState` adds whose turn it is.
- **a match** (:class:`~nimlab.core.game.Game`): a session with players and history.

Every interface asks the rules (through the registry's :class:`~nimlab.core.games.GameKind`)
instead of special-casing games. :class:`HeapRules` is every take-and-break game
(:class:`~nimlab.theory.octal.TakeAndBreak`: Nim, octal and subtraction games, Lasker's Nim,
Grundy's game); :class:`WythoffRules`, :class:`MooreRules`, :class:`StaircaseRules` and
:class:`FibonacciRules` are the classic relatives of Nim whose positions are not sums of
independent heaps (or carry more than heaps), played on :class:`~nimlab.core.position.Piles`.
"""

from __future__ import annotations

import random
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from nimlab.core.errors import IllegalMoveError, PositionError
from nimlab.core.position import (
    Board,
    Move,
    Piles,
    Position,
    Rows,
    board_for,
    parse_heaps,
    pile_letter,
    take_places,
)
from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.move_engine import MoveEngine
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, canonical

__all__ = [
    "BoardKind",
    "FibonacciRules",
    "HeapRules",
    "HowToMove",
    "MooreRules",
    "MoveEngine",
    "MoveShape",
    "PileRules",
    "Rules",
    "StaircaseRules",
    "WythoffRules",
    "how_to_move",
    "move_phrase",
    "move_rule_text",
    "move_words",
    "rules_of",
    "typed_move",
]

BoardKind = Literal["piles", "rows"]

MoveShape = Literal["one-pile", "several-piles", "stones"]
"""What a move looks like, for interfaces that let people make one: take from one pile, take
from several piles at once, or take adjacent stones from a row (a cut of zero stones where the
rules allow it)."""


PieceWords = tuple[str, str, str]
"""What a pile is called, and one and several of what is on it: ``("pile", "match",
"matches")``."""
PILE_WORDS: PieceWords = ("pile", "match", "matches")
ROW_WORDS: PieceWords = ("row", "stone", "stones")


@runtime_checkable
class Rules(Protocol):
    """The rules of one game with its parameters (OpenSpiel's Game)."""

    @property
    def board(self) -> BoardKind:
        """How positions are shown: ``piles``, or ``rows`` of stones for games that split."""
        ...

    @property
    def move_shape(self) -> MoveShape: ...

    @property
    def splits(self) -> bool:
        """Whether a move can leave two heaps where there was one."""
        ...

    @property
    def heap_sum(self) -> bool:
        """Whether every position is a sum of independent heaps: then Grundy values (normal
        play) and misère quotients mean something."""
        ...

    @property
    def heap_rule(self) -> TakeAndBreak | None:
        """The take-and-break rule of a heap game (``None`` for the relatives)."""
        ...

    @property
    def own_words(self) -> bool:
        """Whether :meth:`move_phrase` words a move otherwise than taking from piles (Staircase
        Nim moves coins down a step): a page then shows the server's words for a move."""
        ...

    @property
    def end_positions_allowed(self) -> bool:
        """Whether extra end positions (multisets of heap sizes) can be added."""
        ...

    @property
    def piece_words(self) -> PieceWords:
        """What a pile and what is on it are called: ``("pile", "match", "matches")``, rows:
        ``("row", "stone", "stones")``, Staircase Nim: ``("step", "coin", "coins")``."""
        ...

    @property
    def max_players(self) -> int | None:
        """The most players the rules are solved for (``None``: any number)."""
        ...

    @property
    def piles(self) -> int | None:
        """How many piles a position has, for games played on a fixed number (``None``:
        any)."""
        ...

    def why_not_heaps(self) -> str:
        """Why Grundy values and quotients do not apply ("" when they do)."""
        ...

    def start(self, heaps: Iterable[Any]) -> Board:
        """The board a game starts on from heap sizes; raises :class:`PositionError`."""
        ...

    def as_board(self, value: object) -> Board:
        """A board as it is (checked to be one of these rules), or heap sizes as :meth:`start`
        makes them; raises :class:`PositionError`."""
        ...

    def successors(self, board: Board) -> Iterator[tuple[Move, Board]]: ...

    def legal_moves(self, board: Board) -> Iterator[Move]:
        """Every legal move on ``board``, in the order of :meth:`successors`, without making
        the boards they leave."""
        ...

    def play(self, board: Board, move: Move) -> Board:
        """The board after ``move``; raises :class:`IllegalMoveError` saying what is allowed."""
        ...

    def is_dead(self, board: Board) -> bool:
        """Whether no move is left (end positions of the ruleset aside)."""
        ...

    def parse_move(self, text: str, board: Board) -> Move:
        """Read move text as people type it on this board; raises :class:`InvalidMoveError`."""
        ...

    def describe_move(self, move: Move, board: Board) -> str:
        """``"take 3 from pile 2"``, ``"take 2 from both piles"`` ..."""
        ...

    def move_phrase(
        self, move: Move, board: Board, name: Callable[[int], str] = str, *, past: bool = False
    ) -> str:
        """What a move does, with piles named by ``name`` (the terminal's letters): after a
        player's name (``past``: ``"took 2 from pile C"``, ``"moved 2 coins from step C down
        to step B"``) or as an instruction (``"take 2 from pile C"``). Every sentence about a
        move (the terminal, the shell, the page's move list, reviews) is made of it."""
        ...


Namer = Callable[[int], str]
"""How piles are named in a sentence (their number, or the terminal's letter)."""


def _taken_words(move: Move, board: Board, name: Namer) -> str:
    """What a move takes, after "took" or "take": ``"2 from pile C"``, ``"1 from pile A and 1
    from pile B"``, ``"stones 4-5"`` (one row of stones), ``"stone 4 from row 2"`` or ``"no
    stone, cutting before stone 3"`` (a split that takes nothing)."""
    if move.at is None:
        return " and ".join(f"{take:,} from pile {name(pile)}" for pile, take in move.parts)
    single = isinstance(board, Rows) and board.pile_count == 1
    if move.take == 0:  # a split that takes nothing (Lasker's Nim, codes like 4.07)
        where = "" if single else f" of row {move.pile}"
        return f"no stone, cutting before stone {move.at}{where}"
    last = move.at + move.take - 1
    stones = f"stone {move.at}" if move.take == 1 else f"stones {move.at}-{last}"
    return stones if single else f"{stones} from row {move.pile}"


def _take_phrase(move: Move, board: Board, name: Namer, past: bool) -> str:
    return ("took " if past else "take ") + _taken_words(move, board, name)


def move_phrase(move: Move, board: Board, name: Namer = str, *, past: bool = False) -> str:
    """:meth:`Rules.move_phrase` of the board's rules: a board of :class:`Piles` knows its
    rules; every heap game (piles or rows of stones) words its moves alike."""
    if isinstance(board, Piles):
        return board.rule.move_phrase(move, board, name, past=past)
    return _take_phrase(move, board, name, past)


def _single(board: Board) -> tuple[bool, bool]:
    rows = isinstance(board, Rows)
    return rows, board.pile_count == 1


def _parse_board_move(text: str, board: Board, rules: Rules | None = None) -> Move:
    rows, single = _single(board)

    def syntax() -> str:
        assert rules is not None
        return how_to_move(rules, board).syntax

    return Move.from_text(
        text,
        rows=rows,
        single_row=rows and single,
        single_pile=not rows and single,
        syntax=None if rules is None else syntax,
    )


# -- how to move: each game's help, generated from its rules -----------------------------------


def _amount(first: int, last: int | None) -> str:
    """``"1"``, ``"1 or 2"``, ``"2 to 5"``, ``"any number"``, ``"3 or more"``."""
    if last is None:
        return "any number" if first == 1 else f"{first} or more"
    if last == first:
        return str(first)
    return f"{first} or {last}" if last == first + 1 else f"{first} to {last}"


def _amounts(spans: list[tuple[int, int | None]]) -> str:
    """Several spans of amounts in words: ``"1, 3 or 4"``, ``"1 to 3 or 5"``."""
    words: list[str] = []
    for first, last in spans:
        if last is not None and last == first + 1:
            words += [str(first), str(last)]
        else:
            words.append(_amount(first, last))
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def take_rule_text(rule: TakeAndBreak) -> str:
    """What a move of a take-and-break game may do, in a sentence: ``"a move takes any number
    from one pile"`` (Nim), ``"a move takes 1 or 2 adjacent stones from anywhere in a run"``
    (Kayles), ``"a move splits a run in two runs of different lengths, taking no stone"``
    (Grundy's game). Runs of takes with the same octal digit are said together. O(digits)."""
    rows = rule.splits
    spans: dict[int, list[tuple[int, int | None]]] = {}  # digit -> spans of takes, in order
    for k, d in enumerate(rule.digits, 1):
        if not d:
            continue
        have = spans.setdefault(d, [])
        if have and have[-1][1] == k - 1:
            have[-1] = (have[-1][0], k)
        else:
            have.append((k, k))
    if rule.tail:
        k = len(rule.digits) + 1
        have = spans.setdefault(rule.tail, [])
        if have and have[-1][1] == k - 1:
            have[-1] = (have[-1][0], None)
        else:
            have.append((k, None))
    clauses = []
    for d, takes in spans.items():
        amount = _amounts(takes)
        if rows:
            stones = "stone" if amount == "1" else "adjacent stones"
            amount = "any number of" if amount == "any number" else amount
            clauses.append(f"takes {amount} {stones} {take_places(d, rows=True)}")
        else:
            clauses.append(f"takes {amount} {take_places(d, rows=False)}")
    if rule.d0 & 4:
        unequal = " of different lengths" if rule.unequal else ""
        clauses.append(f"splits a run into two runs{unequal}, taking no stone")
    return "a move " + ("; or ".join(clauses) if clauses else "is not possible")


def move_rule_text(rules: Rules) -> str:
    """What a move of the game may do, in a sentence (its rules' own words for the relatives
    on piles, :func:`take_rule_text` for take-and-break games)."""
    if isinstance(rules, PileRules):
        return rules.rule_text
    rule = rules.heap_rule
    return take_rule_text(rule) if rule is not None else "a move follows the game's rules"


def typed_move(move: Move, board: Board, *, letters: bool = False) -> str:
    """A move as people type it on ``board`` (what :meth:`Rules.parse_move` reads back):
    ``"3"`` (one pile), ``"b3"`` or ``"2 3"``, ``"a2 b2"`` (several piles), ``"3 2"`` (one row:
    POSITION COUNT), ``"1 3 2"`` (ROW POSITION COUNT), ``"3 0"`` (a split taking nothing)."""
    if move.at is not None:
        if board.pile_count == 1:
            return f"{move.at} {move.take}"
        return f"{move.pile} {move.at} {move.take}"
    if board.pile_count == 1 and not move.also:
        return str(move.take)
    if letters and board.pile_count <= 26:
        return " ".join(f"{pile_letter(p).lower()}{t}" for p, t in move.parts)
    return " ".join(f"{p} {t}" for p, t in move.parts)


EXAMPLE_SCAN = 2000
"""Legal moves looked at for an example of each kind of move (the middle one is shown)."""


def _example(
    rules: Rules, board: Board, wanted: Callable[[Move], bool], letters: bool
) -> str | None:
    """A legal move of the kind ``wanted`` as it is typed (the middle one of the first
    :data:`EXAMPLE_SCAN` such moves), or ``None`` when there is none now: an example is always
    one the game accepts. O(EXAMPLE_SCAN)."""
    found: list[Move] = []
    for i, move in enumerate(rules.legal_moves(board)):
        if wanted(move):
            found.append(move)
        if i >= EXAMPLE_SCAN:
            break
    if not found:
        return None
    return typed_move(found[len(found) // 2], board, letters=letters)


def _eg(example: str | None) -> str:
    return "" if example is None else f" (e.g. {example})"


@dataclass(frozen=True, slots=True)
class HowToMove:
    """How to make a move in a game, for people: ``rule`` says what a move may do, ``syntax``
    how to type one, with an example the game accepts now."""

    rule: str
    syntax: str


def how_to_move(rules: Rules, board: Board, *, letters: bool = False) -> HowToMove:
    """The help of a game on ``board``, generated from its rules (every interface shows this
    one: the terminal's first prompt and ``help``, the shell's ``help``, and the message of a
    move that cannot be read). ``letters``: piles named by letter, as the terminal draws
    them. O(:data:`EXAMPLE_SCAN`)."""
    rule = move_rule_text(rules)
    single = board.pile_count == 1
    if isinstance(board, Rows):
        heap_rule = rules.heap_rule
        assert heap_rule is not None
        parts = []
        if heap_rule.digits or heap_rule.tail:
            ex = _example(rules, board, lambda m: m.take > 0, letters)
            parts.append(
                "type POSITION COUNT to take COUNT adjacent stones from stone POSITION on"
                if single
                else "type ROW POSITION COUNT to take COUNT adjacent stones of row ROW from "
                "stone POSITION on"
            )
            parts[-1] += _eg(ex)
        if heap_rule.d0 & 4:
            ex = _example(rules, board, lambda m: m.take == 0, letters)
            split = (
                "POSITION 0 to split the run just before stone POSITION"
                if single
                else "ROW POSITION 0 to split row ROW just before stone POSITION"
            )
            parts.append(("type " if not parts else "") + split + _eg(ex))
        return HowToMove(rule, ", or ".join(parts))
    ex = _example(rules, board, lambda m: not m.also, letters)
    if isinstance(rules, StaircaseRules):
        return HowToMove(
            rule,
            "type STEP COINS to move COINS coins from STEP to the step below" + _eg(ex),
        )
    if single:
        return HowToMove(rule, "type how many to take" + _eg(ex))
    by_letter = letters and board.pile_count <= 26
    if by_letter and ex is not None:  # the letter drawn, or the number analyze names it by
        ex += " or " + str(_example(rules, board, lambda m: not m.also, False))
    piles = "PILE AMOUNT to take AMOUNT from PILE" + (
        ", the pile by its letter or number" if by_letter else ""
    )
    syntax = f"type {piles}{_eg(ex)}"
    if rules.move_shape == "several-piles":
        several = _example(rules, board, lambda m: bool(m.also), letters)
        syntax += ", or one PILE AMOUNT per pile to take from several at once" + _eg(several)
    return HowToMove(rule, syntax)


def move_words(move: Move) -> str:
    """A move of a heap game in words: ``"take 3 from pile 2"``, ``"take stones 4-5 of row
    1"``, ``"split row 1 before stone 3"`` (a cut that takes nothing)."""
    if move.at is None:
        return _pile_words(move)
    if move.take == 0:
        return f"split row {move.pile} before stone {move.at}"
    last = move.at + move.take - 1
    stones = f"stone {move.at}" if move.take == 1 else f"stones {move.at}-{last}"
    return f"take {stones} of row {move.pile}"


def _pile_words(move: Move) -> str:
    """``"take 3 from pile 2"`` or, for several piles, ``"take 3 from pile 1 and 2 from pile
    2"``."""
    return "take " + " and ".join(f"{t:,} from pile {p}" for p, t in move.parts)


@dataclass(frozen=True)
class HeapRules:
    """A take-and-break game on heaps (:class:`~nimlab.theory.octal.TakeAndBreak`): Nim,
    octal and subtraction games, Lasker's Nim, Grundy's game. Positions are sums of
    independent heaps; games that split heaps are played on rows of stones."""

    rule: TakeAndBreak

    @property
    def board(self) -> BoardKind:
        return "rows" if self.rule.splits else "piles"

    @property
    def move_shape(self) -> MoveShape:
        return "stones" if self.rule.splits else "one-pile"

    @property
    def splits(self) -> bool:
        return self.rule.splits

    @property
    def heap_sum(self) -> bool:
        return True

    @property
    def own_words(self) -> bool:
        return False

    @property
    def piece_words(self) -> PieceWords:
        return ROW_WORDS if self.rule.splits else PILE_WORDS

    @property
    def heap_rule(self) -> TakeAndBreak:
        return self.rule

    @property
    def end_positions_allowed(self) -> bool:
        return True

    @property
    def max_players(self) -> int | None:
        return None if not self.rule.unequal else 2

    @property
    def piles(self) -> int | None:
        return None

    def why_not_heaps(self) -> str:
        return ""

    def start(self, heaps: Iterable[Any]) -> Board:
        return board_for(self.rule, heaps)

    def as_board(self, value: object) -> Board:
        if isinstance(value, Piles):
            raise PositionError("this game is played on piles of its own rule, not these")
        if isinstance(value, Position | Rows):
            if self.rule.splits != isinstance(value, Rows):
                kind = "rows of stones" if self.rule.splits else "piles"
                raise PositionError(f"this game is played on {kind}")
            return value
        from nimlab.core.position import as_board

        return as_board(self.rule, value)

    def successors(self, board: Board) -> Iterator[tuple[Move, Board]]:
        return board.successors(self.rule)

    def legal_moves(self, board: Board) -> Iterator[Move]:
        return board.legal_moves(self.rule)

    def play(self, board: Board, move: Move) -> Board:
        if move.also:
            raise IllegalMoveError("a move takes from one pile (or one run of stones) only")
        return board.play(self.rule, move)

    def is_dead(self, board: Board) -> bool:
        from nimlab.theory.positions import is_terminal

        return is_terminal(self.rule, board.canonical, frozenset())

    def parse_move(self, text: str, board: Board) -> Move:
        return _parse_board_move(text, board, self)

    def describe_move(self, move: Move, board: Board) -> str:
        return move_words(move)

    def move_phrase(
        self, move: Move, board: Board, name: Namer = str, *, past: bool = False
    ) -> str:
        return _take_phrase(move, board, name, past)


# -- the classic relatives, on piles -------------------------------------------------------------


RANDOM_LISTED = 100_000
"""Up to this many moves a random move is drawn from the list of them all."""

_ENGINES: OrderedDict[tuple[object, bool, frozenset[Canon]], MoveEngine] = OrderedDict()
_ENGINES_LOCK = threading.Lock()
MAX_RELATIVE_ENGINES = 8


def _cost(n: int) -> float:
    """``n`` as an estimated number of positions: a float, ``inf`` beyond what a float holds
    (``float(n)`` raises OverflowError for a heap of more than 308 digits)."""
    return float(n) if n < 10**300 else float("inf")


class PileRules:
    """What the relatives on piles share: boards of :class:`Piles`, moves read as ``PILE
    AMOUNT`` (pairs of them for moves on several piles), the exact search over the rules' own
    move generator, and the theorem of :meth:`formula` where it holds. Subclasses give
    :meth:`successors`, :meth:`play`, :meth:`key` and :meth:`formula`."""

    board: BoardKind = "piles"
    move_shape: MoveShape = "one-pile"
    splits = False
    heap_sum = False
    heap_rule: TakeAndBreak | None = None
    own_words = False
    piece_words: PieceWords = PILE_WORDS
    end_positions_allowed = True
    max_players: int | None = 2
    method = "theory"
    """The engine's name for the theorem (``"wythoff"``, ...)."""
    theory_name = "the theorem"
    """The theorem in words, for sentences ("Wythoff's theorem")."""
    lists_every_win = True
    """Whether :meth:`theorem_wins` names every winning move (else one of them)."""
    rule_text = "a move takes any number from one pile"
    """What a move may do, in a sentence (:func:`move_rule_text`)."""
    piles: int | None = None
    """How many piles a position has (``None``: any number)."""

    def why_not_heaps(self) -> str:
        return "its positions are not sums of independent heaps"

    # -- positions ------------------------------------------------------------------------

    def start(self, heaps: Iterable[Any]) -> Piles:
        sizes = parse_heaps(heaps)
        if self.piles is not None and len(sizes) != self.piles:
            count = "one pile" if self.piles == 1 else f"{self.piles} piles"
            raise PositionError(f"this game is played on {count} (got {len(sizes)})")
        return Piles(sizes, self, self.start_limit(sizes))

    def start_limit(self, heaps: tuple[int, ...]) -> int | None:
        return None

    def as_board(self, value: object) -> Board:
        if isinstance(value, Piles):
            if value.rule != self:
                raise PositionError("this position belongs to another game")
            return value
        if isinstance(value, Position | Rows):
            return self.start(value.heaps)
        if isinstance(value, str | bytes) or not isinstance(value, Iterable):
            raise PositionError(
                f"a position is a list of heap sizes like [3, 5], not {type(value).__name__}"
            )
        return self.start(value)

    def key(self, board: Piles) -> Canon:
        """The engine's key: what counts as the same position (default: the multiset)."""
        return canonical(board.heaps)

    def board_of(self, key: Canon) -> Piles:
        """A board with the key ``key`` (for the search over keys)."""
        return Piles(key, self, None)

    def end_key(self, key: Canon) -> Canon:
        """The multiset of heaps of a key (what extra end positions are compared with)."""
        return canonical(key)

    def key_moves(self, key: Canon) -> Iterator[Canon]:
        """The keys one move away from ``key``: the exact search's move generator."""
        for _move, after in self.successors(self.board_of(key)):
            yield after.canonical

    def search_cost(self, key: Canon) -> float:
        """About how many positions an exact search from ``key`` stores (default: every
        position with piles no larger, ``prod(h + 1)``). O(piles)."""
        total = 1.0
        for h in key:
            total *= _cost(h + 1)  # (a float product beyond 1e308 is inf, never an error)
        return total

    def count_moves(self, board: Piles) -> int:
        """The number of legal moves (default: listing them; every relative here counts them
        in closed form, O(piles) or O(piles * k), whatever the sizes)."""
        return sum(1 for _ in self.successors(board))

    def random_move(self, board: Piles, rng: random.Random) -> Move:
        """A random legal move: uniform up to :data:`RANDOM_LISTED` moves, beyond that a
        uniform move among those that take from one pile only (every relative has them),
        drawn in exact integers without listing them: O(piles).
        Raises :class:`IllegalMoveError` when there is no move."""
        count = self.count_moves(board)
        if count <= RANDOM_LISTED:
            moves = [move for move, _ in self.successors(board)]
            if not moves:
                raise IllegalMoveError("no move is left")
            return rng.choice(moves)
        pick, i = rng.randrange(sum(board.heaps)), 0
        while pick >= board.heaps[i]:
            pick -= board.heaps[i]
            i += 1
        h = board.heaps[i]
        most = h if board.limit is None else min(h, board.limit)
        return Move(i + 1, rng.randrange(1, most + 1))

    def explain(self, board: Piles, misere: bool) -> list[str]:
        """The theorem's working on ``board``, in sentences (when it decided)."""
        return [f"{self.theory_name[:1].upper()}{self.theory_name[1:]} decides this position."]

    def theorem_wins(self, board: Piles, misere: bool) -> list[Move] | None:
        """Winning moves straight from the theorem (without extra end positions), where it
        holds and names them: every one (Wythoff's game, Staircase Nim, Fibonacci Nim) or one
        (Moore's Nim); ``[]`` for a P-position; ``None`` where the theorem says nothing.
        O(piles) or so, whatever the number of moves."""
        return None

    def _move_to(self, board: Piles, after: Iterable[int]) -> Move:
        """The move that leaves the piles ``after`` (each pile that shrank, by how much)."""
        parts = [
            (i, h - a) for i, (h, a) in enumerate(zip(board.heaps, after, strict=True), 1) if a < h
        ]
        return Move(parts[0][0], parts[0][1], also=tuple(parts[1:]))

    def formula(self, key: Canon, misere: bool) -> Outcome | None:
        """The theorem's outcome without extra end positions (``None``: no theorem is known
        for this play)."""
        return None

    def grundy_values(
        self, positions: list[tuple[int, ...]], budget: Budget
    ) -> list[int | None] | None:
        """The Grundy values (normal play, no extra end positions: where the Sprague–Grundy
        theory holds) of ``positions`` of these rules, ``None`` for each one out of reach
        within ``budget``; ``None`` when the rules have no Grundy values here (default)."""
        return None

    def engine(self, misere: bool, end_positions: frozenset[Canon]) -> MoveEngine:
        """The shared engine for these rules under a ruleset (least recently used, bounded)."""
        k = (self, misere, end_positions)
        with _ENGINES_LOCK:
            engine = _ENGINES.get(k)
            if engine is None:
                engine = _ENGINES[k] = MoveEngine(
                    self.key_moves,
                    self.formula,
                    misere=misere,
                    end_positions=end_positions,
                    end_key=self.end_key,
                    cost=self.search_cost,
                    method=self.method,
                )
                while len(_ENGINES) > MAX_RELATIVE_ENGINES:
                    _ENGINES.popitem(last=False)
            else:
                _ENGINES.move_to_end(k)
            return engine

    # -- moves ----------------------------------------------------------------------------

    def successors(self, board: Board) -> Iterator[tuple[Move, Board]]:
        raise NotImplementedError

    def legal_moves(self, board: Board) -> Iterator[Move]:
        return (move for move, _ in self.successors(board))

    def play(self, board: Board, move: Move) -> Piles:
        raise NotImplementedError

    def is_dead(self, board: Board) -> bool:
        """Whether no move is left: the rules' count of moves is 0 (O(piles) or so: never
        listing the moves of a huge pile)."""
        return self.count_moves(self._piles(board)) == 0

    def parse_move(self, text: str, board: Board) -> Move:
        return _parse_board_move(text, board, self)

    def describe_move(self, move: Move, board: Board) -> str:
        return _pile_words(move)

    def move_phrase(
        self, move: Move, board: Board, name: Namer = str, *, past: bool = False
    ) -> str:
        return _take_phrase(move, board, name, past)

    def _piles(self, board: Board) -> Piles:
        if not isinstance(board, Piles):
            raise IllegalMoveError("this game is played on piles of its own rule")
        return board

    def _check_parts(self, board: Piles, move: Move) -> dict[int, int]:
        """The move's parts as pile -> take, each pile existing, taking 1 to its size, no pile
        twice; raises :class:`IllegalMoveError`."""
        if move.at is not None:
            raise IllegalMoveError("piles take no stone position: type PILE AMOUNT (e.g. 2 3)")
        n = len(board.heaps)
        takes: dict[int, int] = {}
        for pile, take in move.parts:
            if not 1 <= pile <= n:
                allowed = "piles are 1" if n == 1 else f"piles are 1-{n}"
                raise IllegalMoveError(f"pile {pile} does not exist: {allowed}")
            if pile in takes:
                raise IllegalMoveError(f"pile {pile} is named twice in one move")
            heap = board.heaps[pile - 1]
            if heap == 0:
                raise IllegalMoveError(f"pile {pile} is empty: choose a pile with objects in it")
            if not 1 <= take <= heap:
                raise IllegalMoveError(
                    f"cannot take {take} from pile {pile}: take 1 to {heap:,} (it has {heap:,})"
                )
            takes[pile] = take
        return takes

    def _taken(self, board: Piles, takes: dict[int, int], limit: int | None = None) -> Piles:
        heaps = list(board.heaps)
        for pile, take in takes.items():
            heaps[pile - 1] -= take
        return Piles(tuple(heaps), self, limit)


GRUNDY_TABLE_CELLS = 2_000_000
"""The most cells of Wythoff's Grundy table an analysis computes (piles up to about 2000 by
2000, a few seconds), within its time budget."""


@dataclass(frozen=True)
class WythoffRules(PileRules):
    """Wythoff's game: two piles; take any number from one pile, or the same number from
    both. The P-positions are Wythoff's pairs (⌊kφ⌋, ⌊kφ²⌋)."""

    move_shape: MoveShape = "several-piles"
    method = "wythoff"
    theory_name = "Wythoff's theorem"
    piles = 2
    rule_text = "a move takes any number from one pile, or the same number from both piles"

    def key(self, board: Piles) -> Canon:
        a, b = board.heaps
        return (a, b) if a <= b else (b, a)

    def successors(self, board: Board) -> Iterator[tuple[Move, Board]]:
        b = self._piles(board)
        for i, heap in enumerate(b.heaps, 1):
            for k in range(1, heap + 1):
                yield Move(i, k), self._taken(b, {i: k})
        for k in range(1, min(b.heaps) + 1):
            yield Move(1, k, also=((2, k),)), self._taken(b, {1: k, 2: k})

    def play(self, board: Board, move: Move) -> Piles:
        b = self._piles(board)
        takes = self._check_parts(b, move)
        if len(takes) == 2 and takes[1] != takes[2]:
            raise IllegalMoveError(
                "a move on both piles takes the same number from each (e.g. 1 3 2 3)"
            )
        return self._taken(b, takes)

    def describe_move(self, move: Move, board: Board) -> str:
        if move.also:
            return f"take {move.take:,} from both piles"
        return _pile_words(move)

    def count_moves(self, board: Piles) -> int:
        return sum(board.heaps) + min(board.heaps)

    def key_moves(self, key: Canon) -> Iterator[Canon]:
        from nimlab.theory.wythoff import wythoff_moves

        for a, b in wythoff_moves((key[0], key[1])):
            yield (a, b) if a <= b else (b, a)

    def theorem_wins(self, board: Piles, misere: bool) -> list[Move] | None:
        from nimlab.theory.wythoff import wythoff_winning_moves

        x, y = board.heaps
        return [
            self._move_to(board, after) for after in wythoff_winning_moves((x, y), misere=misere)
        ]

    def formula(self, key: Canon, misere: bool) -> Outcome | None:
        from nimlab.theory.wythoff import wythoff_outcome

        return wythoff_outcome((key[0], key[1]), misere=misere)

    def grundy_values(
        self, positions: list[tuple[int, ...]], budget: Budget
    ) -> list[int | None] | None:
        """One table covers a position and the results of its moves
        (:func:`~nimlab.theory.wythoff.wythoff_grundy_values`) when it has at most
        :data:`GRUNDY_TABLE_CELLS` cells to compute and is done within half of the time left;
        else the values the theorems give at once (``(0, n)``, the P-positions), ``None`` for
        the others."""
        from nimlab.theory.wythoff import (
            table_cells,
            wythoff_grundy_known,
            wythoff_grundy_values,
        )

        pairs = [(p[0], p[1]) for p in positions]
        known = [wythoff_grundy_known(p) for p in pairs]
        rest = [(min(p), max(p)) for p, k in zip(pairs, known, strict=True) if k is None]
        if not rest:
            return list(known)
        cells = table_cells(max(a for a, _ in rest) + 1, max(b for _, b in rest) + 1)
        if cells <= GRUNDY_TABLE_CELLS:
            try:
                return list(wythoff_grundy_values(pairs, budget=budget.share(0.5)))
            except BudgetExceeded:
                pass
        return list(known)

    def explain(self, board: Piles, misere: bool) -> list[str]:
        from nimlab.theory.wythoff import wythoff_working

        x, y = board.heaps
        w = wythoff_working((x, y), misere=misere)
        a, b = w.pair
        if misere and w.k <= 1:
            which = f"in misère play the P-position whose piles differ by {w.k} is ({a}, {b})"
        else:
            kth = (
                ""
                if w.k == 0
                else f" the {_ordinal(w.k)} Wythoff pair (⌊{w.k}φ⌋, ⌊{w.k}φ⌋ + {w.k}),"
            )
            which = f"the only P-position whose piles differ by {w.k} is{kth} ({a}, {b})"
            if misere:
                which += " (misère play changes only the pairs of difference 0 and 1)"
        lines = [
            "Wythoff's theorem: the P-positions are the pairs (⌊kφ⌋, ⌊kφ⌋ + k), φ the golden "
            "ratio: (0, 0), (1, 2), (3, 5), (4, 7), (6, 10), ...; "
            f"the piles ({x}, {y}) differ by {w.k}, and {which}."
        ]
        if w.p_position:
            lines.append(
                f"({x}, {y}) is that pair, so it is a P-position: no move reaches another "
                "pair (taking from one pile keeps the other, and every number is in just one "
                "pair; taking the same from both keeps the difference, whose only pair is this)."
            )
        else:
            lines.append(
                f"The smaller pile is {w.smaller}, not {a}, so ({x}, {y}) is an N-position: "
                "a move reaches a pair (the smaller pile's partner, or the pair of the "
                "difference by taking the same from both)."
            )
        return lines


MOORE_COLUMNS_SHOWN = 24
"""Most binary columns Moore's working lists (beyond, only the columns that are not multiples,
up to this many: a heap of 10**100 has 333 columns)."""


def _column(j: int) -> str:
    """Binary column ``j``'s name: its value, or ``2^j`` once that is long."""
    return str(1 << j) if j < 20 else f"2^{j}"


@dataclass(frozen=True)
class MooreRules(PileRules):
    """Moore's Nim_k: take any positive numbers from at least one and at most ``k`` piles.
    A position is a P-position when every binary digit's count over the piles is divisible by
    ``k + 1`` (misère play: the same while some pile holds 2 or more; else when the piles of 1
    number ``1 mod (k + 1)``; :mod:`nimlab.theory.moore` proves it). ``k = 1`` is Nim."""

    k: int = 2
    move_shape: MoveShape = "several-piles"
    lists_every_win = False
    method = "moore"
    theory_name = "Moore's theorem"

    @property
    def rule_text(self) -> str:  # type: ignore[override]
        return f"a move takes any number from each of {_amount(1, self.k)} piles"

    def successors(self, board: Board) -> Iterator[tuple[Move, Board]]:
        """Every move (lazily, as :func:`~nimlab.theory.moore.moore_takes` lists them: O(k)
        per move and O(piles) memory however large the piles)."""
        from nimlab.theory.moore import moore_takes

        b = self._piles(board)
        for chosen, takes in moore_takes(b.heaps, self.k):
            parts = tuple((i + 1, t) for i, t in zip(chosen, takes, strict=True))
            yield Move(parts[0][0], parts[0][1], also=parts[1:]), self._taken(b, dict(parts))

    def count_moves(self, board: Piles) -> int:
        """Sum over sets of at most k non-empty piles of the product of their sizes: the
        elementary symmetric sums e_1 .. e_k. O(piles * k)."""
        e = [1] + [0] * self.k
        for h in board.heaps:
            for j in range(self.k, 0, -1):
                e[j] += e[j - 1] * h
        return sum(e[1:])

    def random_move(self, board: Piles, rng: random.Random) -> Move:
        """A uniformly random legal move: up to :data:`RANDOM_LISTED` moves drawn from their
        list (as every relative's), beyond that without listing them, O(piles * k) exact
        integers: the draw is a move's rank among all of them, in the order of the
        elementary symmetric sums of the piles after each pile (how many ways the piles
        after it give at most ``m`` piles to take from)."""
        count = self.count_moves(board)
        if count <= RANDOM_LISTED:
            return super().random_move(board, rng)
        heaps = board.heaps
        n = len(heaps)
        # after[i][m]: the ways to choose at most m of the piles i.. and an amount from each
        after = [[1] * (self.k + 1) for _ in range(n + 1)]
        for i in range(n - 1, -1, -1):
            for m in range(1, self.k + 1):
                after[i][m] = after[i + 1][m] + heaps[i] * after[i + 1][m - 1]
        rank = rng.randrange(1, after[0][self.k])  # rank 0: taking from no pile
        parts: list[tuple[int, int]] = []
        m = self.k
        for i in range(n):
            skip = after[i + 1][m]
            if rank < skip:
                continue
            take, rank = divmod(rank - skip, after[i + 1][m - 1])
            parts.append((i + 1, take + 1))
            m -= 1
            if not rank:
                break
        return Move(parts[0][0], parts[0][1], also=tuple(parts[1:]))

    def play(self, board: Board, move: Move) -> Piles:
        b = self._piles(board)
        takes = self._check_parts(b, move)
        if len(takes) > self.k:
            raise IllegalMoveError(
                f"a move takes from at most {self.k} piles (this one names {len(takes)})"
            )
        return self._taken(b, takes)

    def key_moves(self, key: Canon) -> Iterator[Canon]:
        from nimlab.theory.moore import moore_moves

        for after in moore_moves(key, self.k):
            yield canonical(after)

    def theorem_wins(self, board: Piles, misere: bool) -> list[Move] | None:
        """One winning move by Moore's construction (normal and misère play), ``[]`` for a
        P-position. O(piles * bits * k)."""
        from nimlab.theory.moore import moore_winning_move

        if not any(board.heaps):
            return []
        after = moore_winning_move(board.heaps, self.k, misere=misere)
        return [] if after is None else [self._move_to(board, after)]

    def formula(self, key: Canon, misere: bool) -> Outcome | None:
        """Moore's theorem, normal and misère play. O(piles * bits)."""
        from nimlab.theory.moore import moore_outcome

        return moore_outcome(key, self.k, misere=misere)

    def explain(self, board: Piles, misere: bool) -> list[str]:
        from nimlab.theory.moore import moore_working

        w = moore_working(board.heaps, self.k, misere=misere)
        m = self.k + 1
        lines = [
            f"Moore's theorem: write the heaps in binary; the position is a P-position exactly "
            f"when every column's count of 1s is a multiple of k + 1 = {m}."
        ]
        if misere and not w.big:
            lines.append(
                "In misère play with no heap above 1 it is a P-position exactly when the heaps "
                f"of 1 number 1 mod {m}: there are {w.ones}, {w.ones % m} mod {m}, so it is "
                f"{'a P' if w.p_position else 'an N'}-position (taking 1 to {self.k} heaps of "
                f"1 {'cannot keep' if w.p_position else 'makes'} their number 1 mod {m})."
            )
            return lines
        if misere:
            lines[0] += " Misère play changes only positions with no heap above 1."
        width = len(w.columns)
        if width <= MOORE_COLUMNS_SHOWN:  # each heap in binary, while the rows stay short
            heaps = board.heaps[:MOORE_TABLE_HEAPS]
            label = max(len(str(h)) for h in heaps) if heaps else 1
            lines += [f"  {h:>{label}} = {h:0{width}b}" for h in heaps]
            if len(board.heaps) > MOORE_TABLE_HEAPS:
                lines.append(f"  ... ({len(board.heaps) - MOORE_TABLE_HEAPS} more heaps)")
        shown = [
            j for j in reversed(range(width)) if width <= MOORE_COLUMNS_SHOWN or w.residues[j]
        ][:MOORE_COLUMNS_SHOWN]
        for j in shown:
            heaps_word = "heap" if w.columns[j] == 1 else "heaps"
            lines.append(
                f"  column {_column(j):>6}: {w.columns[j]} {heaps_word}, {w.residues[j]} mod {m}"
            )
        if len(shown) < width:
            lines.append(f"  (the other {width - len(shown)} columns are multiples of {m})")
        if w.p_position:
            lines.append("Every column is a multiple, so it is a P-position.")
            return lines
        bad = [_column(j) for j in reversed(range(width)) if w.residues[j]]
        more = ", ..." if len(bad) > MOORE_COLUMNS_SHOWN else ""
        named = ", ".join(bad[:MOORE_COLUMNS_SHOWN]) + more
        lines.append(f"The columns {named} are not, so it is an N-position: ")
        big = sum(1 for h in board.heaps if h > 1)
        if misere and big <= self.k:
            lines[-1] += (
                f"in misère play the winning move lowers every heap above 1 ({big} here) to 0 "
                f"or 1 and empties some heaps of 1, so that the heaps of 1 number 1 mod {m} "
                f"(at most {self.k} heaps change)."
            )
        else:
            lines[-1] += f"taking from at most {self.k} heaps makes every column a multiple."
        return lines


MOORE_TABLE_HEAPS = 12
"""Moore's Nim's explanation writes at most this many heaps in binary."""


@dataclass(frozen=True)
class StaircaseRules(PileRules):
    """Staircase Nim: coins on the steps of a staircase, listed from the step next to the
    ground; a move moves any number of coins from one step to the step below (from step 1 to
    the ground, out of the game). A position is a P-position when the coins on the odd steps
    have nim-sum 0."""

    method = "staircase"
    piece_words: PieceWords = ("step", "coin", "coins")
    rule_text = (
        "a move moves any number of coins from one step to the step below (from the lowest "
        "step they leave the game)"
    )
    theory_name = "the odd-steps rule"
    end_positions_allowed = False

    def key(self, board: Piles) -> Canon:
        heaps = board.heaps
        end = len(heaps)
        while end and not heaps[end - 1]:
            end -= 1
        return heaps[:end]

    def end_key(self, key: Canon) -> Canon:
        return key

    def successors(self, board: Board) -> Iterator[tuple[Move, Board]]:
        b = self._piles(board)
        for i, heap in enumerate(b.heaps, 1):
            for k in range(1, heap + 1):
                yield Move(i, k), self._down(b, i, k)

    def count_moves(self, board: Piles) -> int:
        return sum(board.heaps)

    def search_cost(self, key: Canon) -> float:
        """Coins only move down: at most C(coins + steps, steps) positions."""
        from math import comb

        coins, steps = sum(key), len(key)
        if steps > 64 or coins > 10**6:
            return float("inf")
        return float(comb(coins + steps, steps))

    def _down(self, board: Piles, step: int, k: int) -> Piles:
        heaps = list(board.heaps)
        heaps[step - 1] -= k
        if step > 1:
            heaps[step - 2] += k
        return Piles(tuple(heaps), self, None)

    def play(self, board: Board, move: Move) -> Piles:
        b = self._piles(board)
        takes = self._check_parts(b, move)
        if len(takes) > 1:
            raise IllegalMoveError("a move moves coins from one step only")
        return self._down(b, move.pile, move.take)

    own_words = True

    def describe_move(self, move: Move, board: Board) -> str:
        return self.move_phrase(move, board)

    def move_phrase(
        self, move: Move, board: Board, name: Namer = str, *, past: bool = False
    ) -> str:
        """``"move 2 coins from step 3 down to step 2"``, ``"moved 1 coin from step A to the
        ground"``."""
        where = "to the ground" if move.pile == 1 else f"down to step {name(move.pile - 1)}"
        coins = "1 coin" if move.take == 1 else f"{move.take:,} coins"
        verb = "moved" if past else "move"
        return f"{verb} {coins} from step {name(move.pile)} {where}"

    def key_moves(self, key: Canon) -> Iterator[Canon]:
        from nimlab.theory.staircase import staircase_moves

        for after in staircase_moves(key):
            yield self.key(Piles(after, self, None))

    def theorem_wins(self, board: Piles, misere: bool) -> list[Move] | None:
        from nimlab.theory.staircase import staircase_winning_moves

        return [
            Move(m.step, m.coins)
            for m in staircase_winning_moves(board.heaps or (0,), misere=misere)
        ]

    def formula(self, key: Canon, misere: bool) -> Outcome | None:
        from nimlab.theory.staircase import staircase_outcome

        return staircase_outcome(key, misere=misere)

    def explain(self, board: Piles, misere: bool) -> list[str]:
        from nimlab.theory.staircase import staircase_working

        w = staircase_working(board.heaps or (0,), misere=misere)
        steps = ", ".join(f"step {s}: {c}" for s, c in zip(w.odd_steps, w.odd_coins, strict=True))
        lines = [
            "Staircase Nim is Nim on the odd steps: coins moved from an even step onto an odd "
            "one can be moved on to the next even step at once, so the even steps are Nim's "
            f"discard pile. The odd steps hold {steps}; their nim-sum is {w.nim_sum}."
        ]
        if misere and not w.big_odd_step:
            lines.append(
                "In misère play with no odd step above 1 coin the position is a P-position "
                f"exactly when that nim-sum is 1: it is {'' if w.p_position else 'not '}, so "
                f"this is {'a P' if w.p_position else 'an N'}-position."
            )
        elif w.p_position:
            lines.append("The nim-sum is 0, so it is a P-position.")
        else:
            lines.append(
                "The nim-sum is not 0, so it is an N-position: Nim's winning move on an odd "
                "step (or a move onto it from the even step above) makes it 0."
            )
        return lines


TERMS_SHOWN = 4
"""Zeckendorf terms Fibonacci Nim's working writes at each end of a long sum."""


@dataclass(frozen=True)
class FibonacciRules(PileRules):
    """Fibonacci Nim: one pile; the first move takes any number but not all, every later move
    at least 1 and at most twice what the previous move took (the position carries that limit).
    The mover wins exactly when the pile's smallest Zeckendorf term is within the limit."""

    method = "fibonacci"
    rule_text = (
        "a move takes from the one pile: the first move any number but not the whole pile, "
        "each later move at least 1 and at most twice the previous take"
    )
    lists_every_win = False
    theory_name = "Whinihan's Zeckendorf rule"
    piles = 1
    end_positions_allowed = False

    def start_limit(self, heaps: tuple[int, ...]) -> int | None:
        return max(heaps[0] - 1, 0) if heaps else None

    def key(self, board: Piles) -> Canon:
        heap = board.heaps[0]
        limit = heap if board.limit is None else min(board.limit, heap)
        return (heap, limit)

    def board_of(self, key: Canon) -> Piles:
        return Piles((key[0],), self, key[1])

    def end_key(self, key: Canon) -> Canon:
        return canonical(key[:1])

    def count_moves(self, board: Piles) -> int:
        return self.key(board)[1]

    def search_cost(self, key: Canon) -> float:
        return float(key[0] + 1) ** 2 if key[0] < 10**150 else float("inf")  # (no OverflowError)

    def successors(self, board: Board) -> Iterator[tuple[Move, Board]]:
        b = self._piles(board)
        heap, limit = self.key(b)
        for k in range(1, limit + 1):
            yield Move(1, k), Piles((heap - k,), self, 2 * k)

    def play(self, board: Board, move: Move) -> Piles:
        b = self._piles(board)
        heap, limit = self.key(b)
        if move.at is None and not move.also and move.pile == 1 and move.take > limit >= 1:
            raise IllegalMoveError(f"cannot take {move.take:,} ({self.limit_text(b)})")
        takes = self._check_parts(b, move)
        return Piles((heap - takes[1],), self, 2 * move.take)

    def limit_text(self, board: Piles) -> str:
        """The most the next move may take, and why: ``"at most 4: twice the last take of
        2"``, ``"at most 9: the first move may not take the whole pile"``, ``"at most 3: the
        pile has 3"``. O(1)."""
        heap, limit = self.key(board)
        first = board.limit is not None and board.limit == heap - 1  # a start's limit
        twice = board.limit is not None and board.limit % 2 == 0 and board.limit <= heap
        if first and twice:  # the two rules agree here: say both
            return (
                f"at most {limit:,}: the first move may not take the whole pile, and a later "
                f"move takes at most twice the last take ({limit // 2:,})"
            )
        if twice:
            return f"at most {limit:,}: twice the last take of {limit // 2:,}"
        if first:
            return f"at most {limit:,}: the first move may not take the whole pile"
        return f"at most {limit:,}: the pile has {heap:,}"

    def key_moves(self, key: Canon) -> Iterator[Canon]:
        from nimlab.theory.fibonacci import fibonacci_moves

        return fibonacci_moves((key[0], key[1]))

    def theorem_wins(self, board: Piles, misere: bool) -> list[Move] | None:
        from nimlab.theory.fibonacci import fibonacci_winning_move

        if misere:
            return None
        heap, limit = self.key(board)
        take = fibonacci_winning_move((heap, limit))  # the classic one, O(log heap)
        return [] if take is None else [Move(1, take)]

    def formula(self, key: Canon, misere: bool) -> Outcome | None:
        from nimlab.theory.fibonacci import fibonacci_outcome

        return None if misere else fibonacci_outcome((key[0], key[1]))

    def explain(self, board: Piles, misere: bool) -> list[str]:
        from nimlab.theory.fibonacci import fibonacci_working

        heap, limit = self.key(board)
        w = fibonacci_working((heap, limit))
        shown = [str(t) for t in w.terms[:TERMS_SHOWN]]  # 4,300 digits: thousands of terms
        if len(w.terms) > 2 * TERMS_SHOWN:
            shown.append(f"... ({len(w.terms) - 2 * TERMS_SHOWN:,} more terms)")
        shown += [str(t) for t in w.terms[max(TERMS_SHOWN, len(w.terms) - TERMS_SHOWN) :]]
        terms = " + ".join(shown)
        lines = [
            "Fibonacci Nim (Whinihan): write the pile as a sum of non-consecutive Fibonacci "
            f"numbers (Zeckendorf): {w.heap} = {terms}. The mover wins exactly when the "
            f"smallest term is within the limit of this move ({w.limit})."
        ]
        if w.p_position:
            lines.append(
                f"The smallest term, {w.smallest}, is more than {w.limit}, so it is a "
                "P-position: whatever is taken, the opponent can take the new smallest term."
            )
        else:
            lines.append(
                f"The smallest term, {w.smallest}, is within it, so it is an N-position: "
                f"taking {w.smallest} leaves a smallest term more than twice that."
            )
        return lines


def _ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``, ..."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def rules_of(value: TakeAndBreak | Rules) -> Rules:
    """The rules of a take-and-break rule (:class:`HeapRules`), or rules as they are."""
    if isinstance(value, TakeAndBreak):
        return HeapRules(value)
    return value
