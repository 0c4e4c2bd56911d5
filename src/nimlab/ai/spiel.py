"""nimlab's games in OpenSpiel: the Python game ``nimlab`` and nimlab's bots as OpenSpiel bots.

Importing this module registers the game (it needs the ``rl`` extra: ``open_spiel``)::

    import pyspiel
    import nimlab.ai.spiel

    game = pyspiel.load_game("nimlab", {"game": "kayles", "piles": "5 7", "misere": True})
    state = game.new_initial_state()
    bot = nimlab.ai.spiel.NimlabBot(game, "perfect")
    state.apply_action(bot.step(state))

Parameters: ``game`` (a game or ruleset text: ``nim``, ``kayles``, ``octal:4.07``,
``moore:3``, ``nim misere`` ...; ``;`` may stand for a comma, which OpenSpiel's game strings
cannot hold: ``subtraction:1;3-4``), ``piles`` (the start position: heap sizes separated by
spaces or ``;``), ``misere`` (bool), ``end`` (extra end positions separated by spaces or ``;``,
e.g. ``"2.2.2 1.2.3"``, or ``"defaults"``, where the game takes them) and ``players`` (2, or
more where nimlab solves the game for them; misère play with three or more goes in elimination
rounds). The game's text form (``str(game)``, which ``pyspiel.load_game`` reads back) holds the
game in ``game`` and the end positions in ``end``, and writes piles and end positions apart
with ``;`` as OpenSpiel's ``nim`` does (``5;7``; a single one as ``6;`` or ``1.2;``, so that it
stays text). Actions are the :class:`~nimlab.ai.encoding.ActionSpace` of the table; the winner
gets 1 and each other player ``-1 / (players - 1)``.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.observation import IIGObserverForPublicInfoGame

from nimlab.ai.encoding import Table, returns
from nimlab.core.bots import Bot, make_bot
from nimlab.core.record import MAX_PLAYERS
from nimlab.core.state import GameState

__all__ = ["DEFAULTS", "NimlabBot", "NimlabGame", "NimlabState", "table_of"]

DEFAULTS: dict[str, Any] = {
    "game": "nim",
    "piles": "3 4 5",
    "misere": False,
    "end": "",
    "players": 2,
}
"""The game's parameters and their defaults."""

_GAME_TYPE = pyspiel.GameType(
    short_name="nimlab",
    long_name="nimlab: Nim and its relatives",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=MAX_PLAYERS,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULTS,
)


def table_of(params: dict[str, Any]) -> Table:
    """The :class:`~nimlab.ai.encoding.Table` of the game's parameters (defaults filled in).
    Raises a :class:`~nimlab.core.errors.NimlabError` saying what is allowed."""
    p = {**DEFAULTS, **params}
    return Table.of(
        str(p["game"]).replace(";", ","),
        str(p["piles"]).replace(";", " "),
        misere=bool(p["misere"]) or None,
        end=str(p["end"]).replace(";", " "),
        players=int(p["players"]),
    )


class NimlabGame(pyspiel.Game):  # type: ignore[misc]
    """The OpenSpiel game of a :class:`~nimlab.ai.encoding.Table`."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.table = table_of(params or {})
        heaps = self.table.start.heaps
        # The game's text form must read back: no commas (a subtraction set is written 1;3-4),
        # no "=" (end positions go in "end"), and one pile or end position with a ";" after it
        # ("6;", "1.2;") so that it stays text.
        ruleset = self.table.ruleset
        ends = sorted(ruleset.end_positions, key=lambda e: (len(e), e))
        params = {
            **(params or {}),
            "game": ruleset.game.name.replace(",", ";"),
            "misere": ruleset.misere,
            "end": ";".join(".".join(map(str, e)) for e in ends) + ";" * (len(ends) == 1),
            "piles": ";".join(map(str, heaps)) + ";" * (len(heaps) == 1),
        }
        n = self.table.players
        info = pyspiel.GameInfo(
            num_distinct_actions=self.table.actions.size,
            max_chance_outcomes=0,
            num_players=n,
            min_utility=-1.0 / (n - 1),
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=self.table.max_game_length,
        )
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> NimlabState:
        return NimlabState(self)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> Any:
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return _Observer(self.table, params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class NimlabState(pyspiel.State):  # type: ignore[misc]
    """A moment of a nimlab game (a :class:`~nimlab.core.state.GameState`) in OpenSpiel."""

    def __init__(self, game: NimlabGame, state: GameState | None = None) -> None:
        super().__init__(game)
        self.state = game.table.initial_state() if state is None else state

    @property
    def table(self) -> Table:
        """The game's table (not stored in the state: a serialised state holds only
        :attr:`state`)."""
        table: Table = self.get_game().table
        return table

    def current_player(self) -> int:
        if self.state.winner is not None:
            return int(pyspiel.PlayerId.TERMINAL)
        return self.state.to_move

    def _legal_actions(self, player: int) -> list[int]:
        if self.state.winner is not None or player != self.state.to_move:
            return []
        return self.table.actions.legal_actions(self.state.board)

    def _apply_action(self, action: int) -> None:
        self.state = self.table.play(self.state, action)

    def _action_to_string(self, player: int, action: int) -> str:
        return str(self.table.actions.move(action))

    def is_terminal(self) -> bool:
        return self.state.winner is not None

    def returns(self) -> list[float]:
        return returns(self.state)

    def __str__(self) -> str:
        s = self.state
        text = f"{s.board} | to move: {s.to_move}"
        if len(s.players) > 2:
            text += f" | round {s.round} | in: {' '.join(map(str, s.active))}"
        return text if s.winner is None else f"{s.board} | winner: {s.winner}"

    def __deepcopy__(self, memo: dict[int, Any]) -> NimlabState:
        """A copy sharing the table (the state is immutable): cloning is O(1)."""
        return NimlabState(self.get_game(), self.state)


class _Observer:
    """OpenSpiel's observer: :meth:`Table.observation` as the tensor ``observation``."""

    def __init__(self, table: Table, params: dict[str, Any] | None) -> None:
        if params:
            raise ValueError(f"observation parameters not supported; passed {params}")
        self.table = table
        self.tensor = np.zeros(table.observation_size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: NimlabState, player: int) -> None:
        self.tensor[:] = self.table.observation(state.state)

    def string_from(self, state: NimlabState, player: int) -> str:
        return str(state)


class NimlabBot(pyspiel.Bot):  # type: ignore[misc]
    """A nimlab bot as an OpenSpiel bot: ``perfect`` (nimlab's perfect player, proven moves
    within its budget), ``random``, ``classic``, ``lookahead:D``, with ``:error=R`` (a random
    move R% of the time); see :func:`~nimlab.core.bots.make_bot`. For games of the ``nimlab``
    OpenSpiel game."""

    def __init__(self, game: NimlabGame, spec: str = "perfect", seed: int | None = None) -> None:
        pyspiel.Bot.__init__(self)
        self.game = game
        self.bot: Bot = make_bot(spec, random.Random(seed))

    def restart_at(self, state: NimlabState) -> None:
        pass

    def step(self, state: NimlabState) -> int:
        return state.table.actions.action(self.bot.choose(state.state).move)


pyspiel.register_game(_GAME_TYPE, NimlabGame)
