"""Setting up a game: everything that makes one, checked in one place for every interface.

The command line (``nimlab play``), the web app (``POST /api/games``) and the shell all describe
a game the same way: the rules (a game name, normal or misère play, extra end positions), the
start position (heap sizes, or rows of stones), the players in turn order, who moves first and
a seed. :class:`GameSetup` holds that, checked when it is made; :meth:`GameSetup.build` makes
the :class:`~nimlab.core.game.Game`.

>>> setup = GameSetup.from_options(game="kayles", misere=True, piles=[5, 3],
...                                players=["human:Ann", "bot:perfect:Hal"])
>>> game = setup.build()
>>> game.ruleset.describe()
'Kayles (octal 0.77), misère play (whoever moves into an end position loses)'
>>> game.board.to_json()
['*****', '***']
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from nimlab.core.arguments import shown
from nimlab.core.errors import PlayerError, PositionError
from nimlab.core.games import parse_game
from nimlab.core.position import Board, Piles, Position, Rows, heaps_text, parse_heaps
from nimlab.core.ruleset import MAX_PLAYERS, Ruleset, parse_end_position

if TYPE_CHECKING:
    from nimlab.core.game import Game
    from nimlab.core.players import Player  # (loaded by a setup: an analysis needs none)

__all__ = [
    "FIRST_CHOICES",
    "First",
    "GameSetup",
    "check_start",
    "ruleset_from",
    "start_over_message",
]

First = Literal["first", "random", "auto"]
FIRST_CHOICES: tuple[First, ...] = ("first", "random", "auto")
"""Who moves first: the first listed player, a random one, or (two players, one of them a bot)
whoever is in the winning position."""


def ruleset_from(
    game: str = "nim",
    misere: bool = False,
    end_positions: Iterable[str | Iterable[int]] = (),
    *,
    defaults: bool = False,
) -> Ruleset:
    """The ruleset that options describe: a game's text form (see
    :func:`~nimlab.core.games.parse_game`), misère or not, extra end positions as text or heap
    lists, and ``defaults`` for the classic end positions [2,2,2], [1,2,3], [1,1,2,2]. Raises
    :class:`~nimlab.core.errors.RulesetError`."""
    ruleset = Ruleset(parse_game(game), misere)
    ends = [parse_end_position(e) for e in end_positions]
    if ends:
        ruleset = ruleset.with_end_positions(*ends)
    return ruleset.with_defaults() if defaults else ruleset


def start_over_message(start: Board) -> str:
    """Why a start position that is already an end position is refused: the game would be over
    before anyone moves (the rules' first player would win or be eliminated at once), so it is
    neither played nor stored. O(number of piles shown, at most 12)."""
    shown = heaps_text(start.heaps)
    return (
        f"the start position {shown} is already an end position, so the game would be over "
        "before anyone moves: choose a start position from which a move can be made "
        "(not an extra end position, e.g. 3 4 5)"
    )


def check_start(ruleset: Ruleset, start: Board) -> None:
    """Refuse, with a :class:`PositionError`, a start position no game can be played from: one
    with no pile, or one that is already an end position (see :func:`start_over_message`).
    Every game checks its start here (:class:`GameSetup` and
    :class:`~nimlab.core.game.Game`, hence every interface). O(piles)."""
    if start.pile_count == 0:
        raise PositionError("a game needs at least one pile")
    if ruleset.is_over(start):
        raise PositionError(start_over_message(start))


@dataclass(frozen=True, slots=True)
class GameSetup:
    """A game before it starts, checked: ``start`` is a board of the ruleset's kind (piles, or
    rows of stones for games that split heaps), 2 to 64 ``players`` with distinct names, and
    ``first`` a choice of :data:`FIRST_CHOICES` or a seat number. ``max_stones`` bounds the
    stones on rows (an interface that draws every stone sets it). A start position that is
    already an end position (``0``, or one of the extra end positions) is refused with a
    :class:`PositionError` (see :func:`start_over_message`): the rules would end such a game
    before its first move, so no interface plays, stores or counts it."""

    ruleset: Ruleset
    start: Board
    players: tuple[Player, ...]
    first: First | int = "first"
    seed: int | None = None
    max_stones: int | None = None

    def __post_init__(self) -> None:
        from nimlab.core.players import unique_players
        from nimlab.core.record import MAX_ROW

        object.__setattr__(self, "start", self.ruleset.rules.as_board(self.start))
        check_start(self.ruleset, self.start)
        if isinstance(self.start, Rows):
            stones = sum(self.start.heaps)
            if self.max_stones is not None and stones > self.max_stones:
                raise PositionError(
                    "rows of stones are drawn stone by stone: "
                    f"at most {self.max_stones:,} stones in all"
                )
            if stones > MAX_ROW:
                raise PositionError(
                    "a game on rows of stones keeps every stone in its record: "
                    f"at most {MAX_ROW:,} stones in all"
                )
        if len(self.players) < 2:
            raise PlayerError("a game needs at least two players")
        if len(self.players) > MAX_PLAYERS:
            raise PlayerError(f"at most {MAX_PLAYERS} players")
        most = self.ruleset.rules.max_players
        if most is not None and len(self.players) > most:
            raise PlayerError(f"{self.ruleset.game.title} is played by at most {most} players")
        object.__setattr__(self, "players", unique_players(self.players))
        first = self.first
        if isinstance(first, bool) or (
            isinstance(first, int) and not 0 <= first < len(self.players)
        ):
            raise PlayerError(
                f"first player {shown(int(first) + 1)} does not exist: "
                f"players are 1-{len(self.players)}"
            )
        if not isinstance(first, int) and first not in FIRST_CHOICES:
            raise PlayerError(f"first player {shown(first)}: choose {', '.join(FIRST_CHOICES)}")

    @classmethod
    def from_options(
        cls,
        *,
        game: str = "nim",
        misere: bool = False,
        end_positions: Iterable[str | Iterable[int]] = (),
        defaults: bool = False,
        piles: Iterable[int | str] | Position | Rows | Piles = (3, 4, 5),
        players: Sequence[Player | str] = ("human:You", "bot:perfect:Hal"),
        first: First | int = "first",
        seed: int | None = None,
        max_stones: int | None = None,
    ) -> GameSetup:
        """A setup from the options every interface offers (see :func:`ruleset_from`):
        ``piles`` are heap sizes (row lengths in games that split heaps), ``players`` specs
        like ``human:Ann`` and ``bot:perfect:Hal`` or :class:`Player` values. Raises the
        core's typed errors."""
        ruleset = ruleset_from(game, misere, end_positions, defaults=defaults)
        start: Board
        if isinstance(piles, Position | Rows | Piles):
            start = piles
        else:
            heaps = parse_heaps(piles)
            if max_stones is not None and ruleset.rules.splits and sum(heaps) > max_stones:
                raise PositionError(
                    f"rows of stones are drawn stone by stone: at most {max_stones:,} stones in all"
                )
            start = ruleset.rules.start(heaps)
        from nimlab.core.players import Player

        seats = tuple(p if isinstance(p, Player) else Player.parse(p) for p in players)
        return cls(ruleset, start, seats, first, seed, max_stones)

    def build(self) -> Game:
        """The game, ready to play (seeded: the same setup and seed play the same bots)."""
        from nimlab.core.game import Game

        seed = self.seed if self.seed is not None else random.randrange(1 << 31)
        return Game(self.ruleset, self.start, self.players, first=self.first, seed=seed)
