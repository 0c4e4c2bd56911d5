"""A Gymnasium environment: one seat of a nimlab game against nimlab's bots (needs the ``rl``
extra: ``gymnasium``).

>>> env = NimlabGym("nim", [3, 4, 5], opponent="perfect")
>>> observation, info = env.reset(seed=0)
>>> observation.tolist(), int(info["action_mask"].sum())
([3, 4, 5, 1, 0, 1, 1], 12)
>>> observation, reward, terminated, truncated, info = env.step(env.action_space.sample(
...     mask=info["action_mask"]))

The agent holds seat 0 and moves first; the other seats are bots (``opponent``: a spec of
:func:`~nimlab.core.bots.make_bot`, e.g. ``"random"``, ``"classic"``, ``"lookahead:2"``,
``"perfect"``, ``"perfect:error=30"``), which answer within the step. The observation is
:meth:`Table.observation <nimlab.ai.encoding.Table.observation>`; ``info["action_mask"]`` (and
:meth:`NimlabGym.action_masks`) marks the legal actions. The reward is 1 when the agent wins
and -1 when it loses (eliminated, or another seat wins), at the end of the episode. An illegal
action ends the episode with reward -1 and ``info["illegal"] = True``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from nimlab.ai.encoding import Table
from nimlab.core.bots import Bot, make_bot
from nimlab.core.errors import NimlabError
from nimlab.core.position import Board
from nimlab.core.ruleset import Ruleset
from nimlab.core.state import GameState

__all__ = ["NimlabGym"]

Observation = npt.NDArray[np.int64]


class NimlabGym(gym.Env[Observation, np.int64]):
    """Seat 0 of a :class:`~nimlab.ai.encoding.Table` against ``players - 1`` bots."""

    metadata: dict[str, Any] = {"render_modes": ["ansi"]}  # noqa: RUF012 (Env declares it)

    def __init__(
        self,
        game: Ruleset | str = "nim",
        start: Iterable[int] | Board | str = (3, 4, 5),
        *,
        opponent: str = "random",
        players: int = 2,
        misere: bool | None = None,
        end: Any = (),
        render_mode: str | None = None,
    ) -> None:
        self.table = Table.of(game, start, misere=misere, end=end, players=players)
        self.opponent = opponent
        make_bot(opponent, random.Random(0))  # a wrong spec is refused here, not at a step
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(self.table.actions.size)
        self.observation_space = spaces.Box(
            0, self.table.observation_high, (self.table.observation_size,), np.int64
        )
        self.state: GameState = self.table.initial_state()
        self._bots: list[Bot] = []

    def action_masks(self) -> npt.NDArray[np.int8]:
        """1 for each legal action of the agent now (all 0 once the episode is over)."""
        if self.state.winner is not None or self.state.to_move != 0:
            return np.zeros(self.table.actions.size, dtype=np.int8)
        return self.table.actions.mask(self.state.board)

    def _info(self, **more: Any) -> dict[str, Any]:
        return {"action_mask": self.action_masks(), **more}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        base = int(self.np_random.integers(1 << 31))
        self._bots = [
            make_bot(self.opponent, random.Random(base + seat))
            for seat in range(self.table.players)
        ]
        self.state = self.table.initial_state()
        return self.table.observation(self.state), self._info()

    def _agent_out(self) -> bool:
        return self.state.winner is not None or 0 not in self.state.active

    def step(self, action: np.int64 | int) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        try:
            self.state = self.table.play(self.state, int(action))
        except NimlabError as e:
            return self.table.observation(self.state), -1.0, True, False, self._info(illegal=str(e))
        while not self._agent_out() and self.state.to_move != 0:
            choice = self._bots[self.state.to_move].choose(self.state)
            self.state = self.state.play(choice.move)
        if not self._agent_out():
            return self.table.observation(self.state), 0.0, False, False, self._info()
        reward = 1.0 if self.state.winner == 0 else -1.0
        return self.table.observation(self.state), reward, True, False, self._info()

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return str(self.state.board)
        return None
