"""nimlab in the games-AI ecosystem: one action encoding, adapters for OpenSpiel, PettingZoo
and Gymnasium, and an exact measure of how far any policy is from perfect play.

- :mod:`nimlab.ai.encoding`: a game with its start position and player count as a
  :class:`~nimlab.ai.encoding.Table`, its fixed-size action space
  (:class:`~nimlab.ai.encoding.ActionSpace`) and observation vector. Every adapter uses it, so an
  action means the same move everywhere.
- :mod:`nimlab.ai.measure`: :func:`~nimlab.ai.measure.evaluate`, the share of won positions
  in which a policy throws the win away (``nimlab.evaluate``).
- :mod:`nimlab.ai.spiel`: the OpenSpiel game ``nimlab`` and nimlab's bots as OpenSpiel bots.
- :mod:`nimlab.ai.zoo`: a PettingZoo AEC environment.
- :mod:`nimlab.ai.gymenv`: a Gymnasium environment, one seat against nimlab's bots.

The adapters need the ``rl`` extra (``pip install 'nimlab[rl]'``); importing this package, the
encoding or :func:`evaluate` loads none of those libraries. This layer sits on top of
:mod:`nimlab.core`: nothing below imports it.
"""
