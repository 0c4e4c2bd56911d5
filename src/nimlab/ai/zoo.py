"""nimlab's games as a PettingZoo AEC environment (needs the ``rl`` extra: ``pettingzoo``).

>>> env = NimlabEnv("kayles misere", [5, 7], players=2)
>>> env.reset(seed=0)
>>> observation, reward, termination, truncation, info = env.last()
>>> sorted(observation)
['action_mask', 'observation']
>>> env.agent_selection
'player_0'

Agents are ``player_0`` .. ``player_{n-1}``, ``player_0`` moving first. Each observes
``{"observation": Table.observation(...), "action_mask": ...}`` (the mask is all zeros except
for the agent to move); actions are the table's :class:`~nimlab.ai.encoding.ActionSpace`. The
winner is rewarded 1 and every other agent ``-1 / (players - 1)``, at the move that decides it:
in misère play with three or more players an agent that moves into an end position is
eliminated at once (terminated, then stepped with ``None`` as PettingZoo's dead agents are) and
the others play a new round from the start position. An illegal action raises
:class:`~nimlab.core.errors.IllegalMoveError` (or :class:`~nimlab.core.errors.InvalidMoveError`
outside the action space) and changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from nimlab.ai.encoding import Table, returns
from nimlab.core.position import Board
from nimlab.core.ruleset import Ruleset
from nimlab.core.state import GameState

__all__ = ["NimlabEnv", "env"]


class NimlabEnv(AECEnv):  # type: ignore[misc]
    """The AEC environment of a :class:`~nimlab.ai.encoding.Table` (arguments as
    :meth:`Table.of <nimlab.ai.encoding.Table.of>`)."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi"],
        "name": "nimlab_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        game: Ruleset | str = "nim",
        start: Iterable[int] | Board | str = (3, 4, 5),
        *,
        players: int = 2,
        misere: bool | None = None,
        end: Any = (),
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.table = Table.of(game, start, misere=misere, end=end, players=players)
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(players)]
        size = self.table.actions.size
        observation = spaces.Dict(
            {
                "observation": spaces.Box(
                    0, self.table.observation_high, (self.table.observation_size,), np.int64
                ),
                "action_mask": spaces.Box(0, 1, (size,), np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation)
        self.action_spaces = {a: spaces.Discrete(size) for a in self.possible_agents}
        self.state: GameState = self.table.initial_state()

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.state = self.table.initial_state()
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        self.agent_selection = self.possible_agents[self.state.to_move]

    def observe(self, agent: str) -> dict[str, Any]:
        seat = self.possible_agents.index(agent)
        mask = np.zeros(self.table.actions.size, dtype=np.int8)
        if self.state.winner is None and seat == self.state.to_move:
            mask = self.table.actions.mask(self.state.board)
        return {"observation": self.table.observation(self.state), "action_mask": mask}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        before = self.state
        self.state = self.table.play(before, action)
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        n = len(self.possible_agents)
        for seat in set(self.state.eliminated) - set(before.eliminated):
            out = self.possible_agents[seat]
            self.terminations[out] = True
            self.rewards[out] = -1.0 / (n - 1)
        if self.state.winner is not None:
            final = returns(self.state)
            for a in self.agents:
                seat = self.possible_agents.index(a)
                if not self.terminations[a]:
                    self.terminations[a] = True
                    self.rewards[a] = final[seat]
        self._accumulate_rewards()
        if self.state.winner is None:
            self.agent_selection = self.possible_agents[self.state.to_move]
        self._deads_step_first()

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return f"{self.state.board} | to move: {self.agent_selection}"
        return None

    def close(self) -> None:
        pass


def env(
    game: Ruleset | str = "nim", start: Iterable[int] | Board | str = (3, 4, 5), **kwargs: Any
) -> NimlabEnv:
    """A :class:`NimlabEnv` (PettingZoo's usual constructor name)."""
    return NimlabEnv(game, start, **kwargs)
