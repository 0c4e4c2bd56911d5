"""Run the Numba kernels as plain Python (``NUMBA_DISABLE_JIT=1``) against their exact twins.

Started as a child process by ``test_kernels_without_jit.py`` (Numba reads the variable when it is
first imported). Covers every kernel of ``_grundy_kernels`` (plain and sparse extension, on
words too, guessing and checking, parity table, rare heaps, period scan, with the array-growing
paths) and both kernels of ``_retrograde_kernels`` (explicit takes, and "take any larger
amount"), on inputs small enough for the interpreter: this checks the kernels' Python semantics
(integer widths, bounds, the growth paths) that the compiled code must share, and lets a
debugger or coverage step through them.
"""

from __future__ import annotations

import collections
import functools
import itertools
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numba

from nimlab.theory import _grundy_kernels, _retrograde_kernels
from nimlab.theory import grundy as grundy_module
from nimlab.theory import retrograde as retrograde_module
from nimlab.theory.grundy import grundy_sequence, naive_grundy
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.positions import canonical
from nimlab.theory.retrograde import DenseSolver
from nimlab.theory.solver import ExactSolver

GRUNDY_RULES = ("0.77", "0.07", "0.137", "0.354", "0.6", "0.7777", "0.123")
"""Kayles, Dawson's Kayles, 0.137, a splitting game with rare values, 0.6, a long code, and a
game that never splits."""

DENSE_RULES = (
    TakeAndBreak.nim(),
    TakeAndBreak((), 2),
    TakeAndBreak.subtraction({1, 3, 4}),
    TakeAndBreak.octal("0.123"),
    TakeAndBreak((1, 2, 0, 3), 3),
)


def check_grundy_kernels() -> int:
    """Every method equals :func:`naive_grundy`, also with tiny arrays that must grow."""
    checked = 0
    grundy_module._INITIAL_SIZE = 4
    grundy_module._RARE_SLACK = 1
    grundy_module._SPARSE_FROM = 5
    grundy_module._FAR_BLOCK = 2  # the second thread's blocks from a few values on
    grundy_module._FAR_RARE = 1
    for code in GRUNDY_RULES:
        rule = TakeAndBreak.octal(code)
        expected = naive_grundy(rule, 90)
        for method in ("auto", "sparse", "quadratic"):
            got = [int(v) for v in grundy_sequence(rule, 90, method=method).values]
            assert got == expected, (code, method)
            checked += 1
    kayles = grundy_sequence(TakeAndBreak.octal("0.77"), 200, prove=True)
    assert (kayles.period, kayles.preperiod, kayles.proven) == (12, 71, True), kayles
    tail = TakeAndBreak((), 7)
    assert [int(v) for v in grundy_sequence(tail, 40).values] == naive_grundy(tail, 40)
    # the kernel on words guessing on one thread and checking on the other (0.106's rare heaps
    # 26, 68, 84, 96, 101 are wrong guesses), with arrays of the usual size
    grundy_module._INITIAL_SIZE = 1024
    grundy_module._FAR_RARE = 1 << 20  # (no far pairing)
    grundy_module._GUESS_FROM = 8
    grundy_module._GUESS_BLOCK = 4
    grundy_module._THREADS = 2
    rule = TakeAndBreak.octal("0.106")
    run = grundy_module.GrundyRun(rule, 300, method="sparse", threads=2)
    assert [int(v) for v in run.run().values] == naive_grundy(rule, 300)
    return checked + 3


def check_retrograde_kernels() -> int:
    """Whole tables equal :class:`ExactSolver`, normal and misère, with extra end positions."""
    checked = 0
    ends = frozenset({(2, 2, 2), (1, 2, 3), (1, 1, 2, 2), (3,)})
    for rule, misere in itertools.product(DENSE_RULES, (False, True)):
        dense = DenseSolver(rule, misere=misere, end_positions=ends, max_heap=5, max_piles=4)
        exact = ExactSolver(rule, misere=misere, end_positions=ends)
        for heaps in itertools.combinations_with_replacement(range(6), 4):
            position = canonical(heaps)
            assert dense.value(position) == exact.value(position), (rule.code, misere, heaps)
            checked += 1
    return checked


CALLS: collections.Counter[str] = collections.Counter()


def count_calls(kernels: ModuleType, users: list[ModuleType]) -> list[str]:
    """Wrap every function of ``kernels`` where ``users`` find it, counting calls in CALLS."""
    names = [
        name
        for name, f in vars(kernels).items()
        if callable(f) and getattr(f, "__module__", None) == kernels.__name__
    ]
    for name in names:
        original: Callable[..., Any] = getattr(kernels, name)
        assert not isinstance(original, numba.core.dispatcher.Dispatcher), name

        @functools.wraps(original)
        def counted(*args: Any, _f: Callable[..., Any] = original, _n: str = name) -> Any:
            CALLS[_n] += 1
            return _f(*args)

        for module in [kernels, *users]:
            if getattr(module, name, None) is original:
                setattr(module, name, counted)
    return names


def main() -> None:
    assert numba.config.DISABLE_JIT, "run with NUMBA_DISABLE_JIT=1"
    kernels = count_calls(_grundy_kernels, [grundy_module])
    kernels += count_calls(_retrograde_kernels, [retrograde_module])
    print(f"grundy {check_grundy_kernels()} retrograde {check_retrograde_kernels()}")
    never = [name for name in kernels if CALLS[name] == 0]
    assert not never, f"kernels never run: {never}"
    print(dict(CALLS))


if __name__ == "__main__":
    main()
