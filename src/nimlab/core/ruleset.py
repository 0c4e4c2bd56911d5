"""Rulesets: which game (move rule), normal or misère play, and the extra end positions.

A ruleset has a one-line text form that round-trips, in the spirit of OpenSpiel's game strings
(end positions in a fixed order: fewer heaps first, then by heap sizes):

>>> r = Ruleset.parse("nim misere end=2.2.2 end=1.2.3 end=1.1.2.2")
>>> str(r)
'nim misere end=1.2.3 end=2.2.2 end=1.1.2.2'
>>> Ruleset.parse(str(r)) == r
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

from nimlab.core.arguments import shown
from nimlab.core.errors import RulesetError
from nimlab.core.games import ALIASES, GAME_CHOICES, NIM, GameKind, game_choices, parse_game
from nimlab.core.position import Board, Piles
from nimlab.core.rules import PileRules, Rules
from nimlab.theory.engine import Engine, EngineKey, engine_key, engine_of
from nimlab.theory.move_engine import MoveEngine
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.positions import Canon, canonical

__all__ = [
    "ALIASES",
    "DEFAULT_END_POSITIONS",
    "GAME_CHOICES",
    "MAX_PLAYERS",
    "GameKind",
    "Ruleset",
    "as_ruleset",
    "parse_end_position",
    "parse_game",
]

MAX_PLAYERS = 64
"""The most players of any game (a game's rules may allow fewer: ``rules.max_players``)."""

DEFAULT_END_POSITIONS: tuple[Canon, ...] = ((2, 2, 2), (1, 2, 3), (1, 1, 2, 2))
"""The classic end positions [2,2,2], [1,2,3], [1,1,2,2] (``defaults``)."""

_MAX_END_HEAPS = 64


def parse_end_position(text: str | Iterable[int]) -> Canon:
    """Read an extra end position: free text where every run of digits is a heap size
    (``"2,2,2"``, ``"[1, 2, 3]"``, ``"1.1.2.2"``), or a list of ints. Returns its canonical form;
    the empty position (always an end position) comes back as ``()``."""
    if isinstance(text, str):
        if re.search(r"-\s*[0-9]", text):
            raise RulesetError(f"end position {text[:40]!r}: heap sizes cannot be negative")
        if not re.fullmatch(r"[\s,.;:\[\]()0-9]*", text, flags=re.ASCII) or len(text) > 2000:
            raise RulesetError(
                f"end position {text[:40]!r}: write heap sizes (digits 0-9) separated by commas, "
                "dots or spaces, like 2,2,2 or [1 2 3]"
            )
        numbers = [int(d) for d in re.findall(r"[0-9]+", text)]
        if not numbers:
            raise RulesetError(f"end position {text!r} has no numbers: write heap sizes like 2,2,2")
    elif not isinstance(text, Iterable):
        raise RulesetError(
            f"an end position is text like '2,2,2' or a list of heap sizes, not "
            f"{type(text).__name__}"
        )
    else:
        numbers = list(text)
        for n in numbers:
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise RulesetError(
                    f"end position {shown(numbers)}: heap sizes must be whole numbers 0 or more"
                )
    if len(numbers) > _MAX_END_HEAPS:
        raise RulesetError(f"an end position has at most {_MAX_END_HEAPS} heaps")
    return canonical(numbers)


@dataclass(frozen=True)
class Ruleset:
    """The rules of a game, immutable: the move rule, normal or misère play, and the extra end
    positions (canonical forms; the empty position is always an end position and not listed).

    Normal play: whoever moves into an end position (or leaves no legal move) wins.
    Misère play: whoever does so loses (with more than two players: is eliminated).
    """

    game: GameKind = NIM
    misere: bool = False
    end_positions: frozenset[Canon] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        ends = frozenset(canonical(e) for e in self.end_positions)
        object.__setattr__(self, "end_positions", frozenset(e for e in ends if e))
        if self.end_positions and not self.game.rules.end_positions_allowed:
            raise RulesetError(
                f"{self.game.title} takes no extra end positions (its positions are more than "
                "a multiset of heaps)"
            )

    # -- text form ----------------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> Ruleset:
        """Read the one-line form: ``GAME [misere|normal] [end H,H,H ...] [defaults]``, with the
        command line's words (``end 2,2``, ``--end 2,2``, ``--misere``, ``--defaults``) or the
        stored form's (``end=2.2``). The rulesets read last are remembered (256 texts; a
        ruleset is immutable). Raises :class:`~nimlab.core.errors.RulesetError`."""
        if not isinstance(text, str):
            raise RulesetError(f"a ruleset is text like 'nim misere', not {type(text).__name__}")
        return _parsed_ruleset(text)

    @classmethod
    def _read(cls, text: str) -> Ruleset:
        words = text.split()
        if not words:
            raise RulesetError(f"empty ruleset: start with a game ({game_choices()})")
        game = parse_game(words[0])
        misere = False
        ends: set[Canon] = set()
        rest = iter(words[1:])
        for word in rest:
            lower = word.lower().removeprefix("--")
            if lower in ("misere", "misère"):
                misere = True
            elif lower == "normal":
                misere = False
            elif lower == "defaults":
                ends.update(DEFAULT_END_POSITIONS)
            elif lower.startswith("end="):
                ends.add(parse_end_position(lower.removeprefix("end=")))
            elif lower == "end":  # as on the command line: end 2,2 (or --end 2,2)
                value = next(rest, None)
                if value is None:
                    raise RulesetError("'end' needs an end position after it, e.g. end 2,2")
                ends.add(parse_end_position(value))
            else:
                raise RulesetError(
                    f"unknown ruleset word {word!r}: allowed are misere, normal, defaults "
                    "and end H,H,H (or end=H.H.H; e.g. end 2,2,2)"
                )
        return cls(game, misere, frozenset(ends))

    def __str__(self) -> str:
        words = [self.game.name]
        if self.misere:
            words.append("misere")
        words += [
            "end=" + ".".join(map(str, e))
            for e in sorted(self.end_positions, key=lambda e: (len(e), e))
        ]
        return " ".join(words)

    def __repr__(self) -> str:
        """``Ruleset.parse('kayles misere end=2.2')``: the text form, which reads back."""
        return f"Ruleset.parse({str(self)!r})"

    def describe(self) -> str:
        """A sentence for people."""
        play = (
            "misère play (whoever moves into an end position loses)"
            if self.misere
            else ("normal play (whoever moves into an end position wins)")
        )
        text = f"{self.game.title}, {play}"
        if self.end_positions:
            ends = ", ".join(
                "[" + ",".join(map(str, e)) + "]"
                for e in sorted(self.end_positions, key=lambda e: (len(e), e))
            )
            text += f"; extra end positions {ends}"
        return text

    # -- variations ---------------------------------------------------------------------------

    def with_end_positions(self, *ends: Iterable[int] | str) -> Ruleset:
        """This ruleset with more extra end positions; an empty one is refused (the empty
        position always ends the game)."""
        parsed = {parse_end_position(e) for e in ends}
        if () in parsed:
            raise RulesetError(
                "the empty position always ends the game: an extra end position needs at least "
                "one non-empty heap, like 2,2,2"
            )
        return replace(self, end_positions=self.end_positions | parsed)

    def with_defaults(self) -> Ruleset:
        """This ruleset plus the classic end positions [2,2,2], [1,2,3], [1,1,2,2]."""
        return self.with_end_positions(*DEFAULT_END_POSITIONS)

    @property
    def rule(self) -> TakeAndBreak:
        """The take-and-break rule of a heap game; raises :class:`RulesetError` for the
        others (ask :attr:`rules`)."""
        return self.game.rule

    @property
    def rules(self) -> Rules:
        """The game's rules (:class:`~nimlab.core.rules.Rules`): every game has them."""
        return self.game.rules

    def is_over(self, board: Board) -> bool:
        """Whether the game is over on ``board``: an end position, or no legal move is left.
        O(piles) for heap games; for the relatives, O(1) moves listed."""
        if isinstance(board, Piles):
            return (
                bool(self.end_positions) and canonical(board.heaps) in self.end_positions
            ) or self.rules.is_dead(board)
        return self.is_terminal(board.heaps)

    def kernel_groups(self, players: int = 2) -> list[str]:
        """The compiled kernel groups questions about this ruleset use (none for the
        relatives: their engine is pure Python)."""
        if not self.game.is_heap_game:
            return []
        from nimlab.theory import kernels

        return kernels.groups_for(self.rule, misere=self.misere, players=players)

    @property
    def relative_rules(self) -> PileRules:
        """The rules of a game played on :class:`~nimlab.core.position.Piles` (raises
        :class:`RulesetError` for heap games)."""
        rules = self.rules
        if not isinstance(rules, PileRules):
            raise RulesetError(f"{self.game.name} is a heap game: ask its engine")
        return rules

    @property
    def relative_engine(self) -> MoveEngine:
        """The engine of a game that is not a heap game (raises :class:`RulesetError` for heap
        games, whose engine is :attr:`engine`)."""
        return self.relative_rules.engine(self.misere, self.end_positions)

    @property
    def solver(self) -> Engine | MoveEngine:
        """The engine that values this game's positions (:attr:`engine` for heap games), for
        callers that only ask :meth:`~nimlab.theory.engine.Engine.evaluate` of a board's
        ``canonical`` key."""
        return self.engine if self.game.is_heap_game else self.relative_engine

    @property
    def is_textbook(self) -> bool:
        """No extra end positions: the classical theory applies."""
        return not self.end_positions

    # -- ends and values ----------------------------------------------------------------------

    def is_end_position(self, heaps: Iterable[int]) -> bool:
        """Whether the position is an end position (empty, or equal to an extra one as a
        multiset of non-empty heaps)."""
        c = canonical(heaps)
        return not c or c in self.end_positions

    def is_terminal(self, heaps: Iterable[int]) -> bool:
        """Whether the game is over: an end position, or no legal move is left (heap games;
        every game: :meth:`is_over` of a board)."""
        from nimlab.theory.positions import is_terminal

        if not self.game.is_heap_game:
            c = canonical(heaps)
            return not c or c in self.end_positions
        return is_terminal(self.rule, canonical(heaps), self.end_positions)

    @property
    def engine(self) -> Engine:
        """The shared engine for this ruleset: every outcome, remoteness, winning move and
        multi-player value comes from it (its tables persist across games, bounded). O(1)."""
        return engine_of(self._engine_key)

    @cached_property
    def _engine_key(self) -> EngineKey:
        """What :func:`~nimlab.theory.engine.engine_for` keeps this ruleset's engine under,
        made once per ruleset (a perfect bot asks for its engine a few times a move)."""
        return engine_key(
            self.rule,
            misere=self.misere,
            end_positions=self.end_positions,
            allowed=frozenset(self.game.strategies),
        )

    @property
    def evaluator(self) -> Engine:
        """The former name of :attr:`engine`."""
        return self.engine

    def textbook(self) -> Ruleset:
        """The same game without extra end positions (what the classic strategy assumes)."""
        return replace(self, end_positions=frozenset())


def as_ruleset(value: object) -> Ruleset:
    """What the Python API takes as rules (``Game(...)``, ``analyze(...)``): a :class:`Ruleset`
    as it is, or its one-line text form (:meth:`Ruleset.parse`). Raises :class:`RulesetError`
    for anything else."""
    if isinstance(value, Ruleset):
        return value
    if isinstance(value, str):
        return Ruleset.parse(value)
    raise RulesetError(f"rules are a Ruleset or text like 'nim misere', not {type(value).__name__}")


@lru_cache(maxsize=256)
def _parsed_ruleset(text: str) -> Ruleset:
    return Ruleset._read(text)
