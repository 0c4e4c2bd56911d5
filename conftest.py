"""Collection of the whole tree: the doctests of nimlab.ai's adapters need the ``rl`` extra
(OpenSpiel, PettingZoo, Gymnasium); where one is not installed its module is not collected
(``tests/test_ai.py`` skips itself then)."""

from __future__ import annotations

import importlib.util

_ADAPTERS = {
    "src/nimlab/ai/spiel.py": "pyspiel",
    "src/nimlab/ai/zoo.py": "pettingzoo",
    "src/nimlab/ai/gymenv.py": "gymnasium",
}

collect_ignore = [path for path, lib in _ADAPTERS.items() if importlib.util.find_spec(lib) is None]
