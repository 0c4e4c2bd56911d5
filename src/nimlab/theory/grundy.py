"""Grundy sequences of take-and-break games: fast computation and proven periods.

``G(n)``, the Grundy value of one heap of ``n`` under a :class:`~nimlab.theory.octal.TakeAndBreak`
rule, is the mex (least non-negative integer not present) of the values of the heap's options,
where an option leaving two heaps ``a`` and ``b`` has value ``G(a) XOR G(b)``.

Three methods compute the sequence ``G(0), G(1), ..., G(N - 1)``:

- :func:`naive_grundy`: the textbook quadratic method in pure Python, the reference twin every
  fast path is tested against.
- ``"quadratic"``: the same method compiled with Numba -- O(N^2 t / 2) for a finite code with
  t digits, O(N^2) for an infinite tail.
- ``"sparse"``: the rare/common ("sparse space") method of Berlekamp, Conway and Guy
  (*Winning Ways*, ch. 4, "Sparse space spells speed") as used by Flammenkamp for octal games.
  A mask ``m`` splits the values into *rare* (even ``popcount(v & m)``) and *common* ones (odd);
  common XOR common is rare, so a common option value needs a rare part, and those are found
  by pairing each rare heap with its partner. With ``positional`` the parity of the heap size
  takes part too (``popcount(G(n) & m) + n - k0`` even is rare), for games such as 0.127. Only
  the few rare values below the mex candidate need a search among all pairs, which stops as soon
  as they are all found. When rare values die out this is O(R N) for R rare heaps instead of
  O(N^2). The mask is chosen from the values computed so far with a Walsh–Hadamard transform of
  their histogram (the mask with the fewest rare heaps) and revised as the sequence grows. The
  values never depend on the mask, only the speed does.

Every method handles the digit before the point (``4.07``: a heap may also be split in two
without removing anything): the plain kernel marks those splits directly, the sparse one counts
``k = 0`` among its splitting removals.

Periods: for the least ``p`` and ``n0`` with ``G(n + p) = G(n)`` for every computed ``n >= n0``,
the period is *proven* by one of two arguments (:attr:`GrundySequence.proof` says which):

- ``"guy-smith"``, for games that split heaps (finite code, t = its largest removal, 0 for
  ``4.0``; a split that removes nothing needs less than t): the Guy–Smith condition
  ``G(n + p) = G(n)`` for all ``n1 <= n < 2 n1 + p + t`` with ``n1 = max(n0, 1)``, which needs
  ``2 n1 + 2 p + t`` values. (With ``n0 = 0`` a split of ``n + p`` into ``(p, p)`` would map
  to a heap 0, which is no split: 0.4, whose values start 0, 0, 0, 1, would be "proven" to have
  period 1 from three values, so the theorem is applied from ``n1 >= 1``.)
- ``"window"``, for games that never split heaps: ``G(n + p) = G(n)`` for
  ``n1 <= n < n1 + t`` (then G(n) is a function of the t values before it for every ``n > t``,
  so the repetition carries on forever) -- a weaker, still sufficient condition.

The least proven ``p`` is the true least period (a proven ``p`` is a multiple of it, and the
true period is then proven too). Unproven periods are reported only as a guess: the least ``p``
whose repetition covers two whole periods and t more values, and a quarter of all values.
Games with an infinite tail other than Nim are computed by the plain method; no theorem
applies, so no period is reported for them.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt

from nimlab.theory import _grundy_kernels as _k
from nimlab.theory import kernels
from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.octal import TakeAndBreak

__all__ = [
    "GRUNDYS_GAME",
    "ArithmeticPeriod",
    "GrundyRun",
    "GrundySequence",
    "GrundyStateError",
    "GrundyStatus",
    "Method",
    "Proof",
    "arithmetic_period",
    "cached_grundy_period",
    "cached_grundy_value",
    "grundy_period",
    "grundy_sequence",
    "grundy_value",
    "grundys_game_sequence",
    "naive_grundy",
    "naive_grundys_game",
    "warm_up",
]

Method = Literal["auto", "sparse", "quadratic"]
"""How :func:`grundy_sequence` computes: ``"auto"`` picks the fastest exact method."""

Progress = Callable[[int, int], None]
Proof = Literal["guy-smith", "window"]
"""Which argument proved a period: the Guy–Smith condition (games that split heaps) or the
window of t repeating values (games that never split heaps)."""


@dataclass(frozen=True)
class GrundyStatus:
    """How far a :func:`grundy_sequence` computation is, for progress displays.

    ``computed`` values are done out of at most ``limit`` (the ``n`` asked for; with
    ``prove=True`` the computation may stop earlier, once the period is proven). ``rare`` is the
    number of rare heaps found so far by the sparse method (heap 0 included), ``None`` while it
    is not in use.
    """

    computed: int
    limit: int
    rare: int | None


Status = Callable[[GrundyStatus], None]
Stopped = Literal["time", "stop"]
"""Why a :class:`GrundyRun` stopped before its goal: its time ran out, or it was asked to stop."""


class GrundyStateError(ValueError):
    """A saved run that cannot be resumed: damaged, not a saved run, or of another game."""


_SPARSE_FROM: Final = 2048
"""``"auto"`` computes the first values by the quadratic method, then switches to sparse."""
_PROVE_START: Final = 4096
_PROVE_GROWTH: Final = 1.5
_TAIL_PROVE_CAP: Final = 4096
"""With ``prove=True`` a game with an infinite tail (never provable) computes at most this many."""
_VALUE_START: Final = 4096
""":func:`grundy_value` computes (and tries to prove with) at least this many values."""
_VALUE_PROVE_LIMIT: Final = 1 << 20
""":func:`grundy_value` looks this far for a proof when asked beyond its direct limit."""
_VALUE_DIRECT_LIMIT: Final = 1 << 26
"""Without a proven period :func:`grundy_value` computes G(n) directly up to this heap size."""
_TAIL_DIRECT_LIMIT: Final = 1 << 14
"""Infinite tails cost O(n^2): :func:`grundy_value` computes them up to this heap size."""
_CACHE_RULES: Final = 64
""":func:`grundy_value` keeps the sequences of at most this many rules ..."""
_CACHE_BYTES: Final = 256 << 20
"""... holding at most this many bytes of values together; the least recently used go first."""
_INITIAL_SIZE = 1024
"""Initial length of the option-stamp arrays (doubled whenever values outgrow half of it)."""
_RARE_SLACK = 64
"""Spare room in the rare-heap arrays when they are (re)built."""
_DENSE_SHARE = 0.5
"""``"auto"`` uses the plain kernel while even the best mask leaves more than this share of the
heaps rare (no sparse space, yet): pairing every rare heap would cost more than the plain scan."""
_EXCEPTIONS_CAP: Final = 1 << 22
"""At most this many exceptions of a candidate period are kept to prune the period scan."""
_BLOCK = 256
_THREADS = min(2, os.cpu_count() or 1)
"""Threads of the sparse method (two share the pairing with rare heaps when it pays)."""
_FAR_BLOCK = 512
"""Heaps per block when two threads share the work: the other thread pairs the rare heaps of
at least twice this size for the next block."""
_FAR_RARE = 64
"""... when at least this many rare heaps are that large."""
_FAR_MIDDLE = 512
"""... and the splits of each heap nearest its middle, at first this many of them (the search
for the pending rare values starts below them), then as many as keep both threads busy."""
_NO_FAR = np.zeros((0, 0), dtype=np.uint8)
_NO_GUESSES = np.zeros(0, dtype=np.uint64)
_GUESS_BLOCK = 1 << 16
"""Heaps per block when one thread guesses values and the other checks them ..."""
_GUESS_FROM = 1 << 14
"""... from this heap on (most rare heaps of games with few lie below it)."""
_NARROW = 64
"""While every value is below this (a power of two, at most 64), the sparse method keeps a
heap's options as the bits of one word (:func:`_grundy_kernels.sparse_extend_narrow`)."""
"""The sparse method compares its last pending values with this many pairs at a time."""
_CHUNK_SECONDS: Final = 0.25
_MASK_SWITCH: Final = 0.9
"""Switch to a new mask when it has fewer than this fraction of the current rare heaps."""


@dataclass(frozen=True, eq=False)
class GrundySequence:
    """The Grundy values ``G(0) .. G(len(values) - 1)`` of one heap under ``rule``, with its period.

    ``period`` is the least ``p`` found and ``preperiod`` the least ``n0`` with
    ``G(n + p) = G(n)`` for all computed ``n >= n0``. A period is *proven* when the Guy–Smith
    condition (or, for games that never split heaps, the weaker condition in the module
    docstring) holds within the computed values; ``proof_length`` is how many values that
    condition needs for the reported period. An unproven period is the least ``p`` whose
    repetition covers two whole periods and ``t`` more values, if that repeating part is at
    least a quarter of the computed values (a guess, not a claim).

    ``rare_mask`` / ``rare_positional`` / ``rare_count`` / ``last_rare`` describe the sparse
    method when it was used: the mask, whether the heap's parity takes part, how many computed
    heaps are rare (heap 0 included, as in the published tables), and the largest of them.

    ``stopped`` says why a :class:`GrundyRun` ended before its goal (``"time"`` or ``"stop"``);
    ``None`` when it computed all it was asked (or proved the period).
    """

    rule: TakeAndBreak
    values: npt.NDArray[np.unsignedinteger[Any]]
    period: int | None
    preperiod: int | None
    proven: bool
    proof_length: int | None = None
    rare_mask: int | None = None
    rare_positional: bool = False
    rare_count: int | None = None
    last_rare: int | None = None
    stopped: Stopped | None = None

    def __len__(self) -> int:
        return len(self.values)

    @property
    def proof(self) -> Proof | None:
        """The argument that proved the period: ``"guy-smith"`` (the game splits heaps),
        ``"window"`` (it never does), or ``None`` when no period is proven."""
        if not self.proven:
            return None
        return "guy-smith" if self.rule.splits else "window"

    def value(self, n: int) -> int:
        """``G(n)`` for any ``n >= 0``: a computed value, Nim's ``n``, or via the proven period.

        O(1). Raises :class:`ValueError` for a negative ``n`` and for ``n`` beyond the computed
        values when no period is proven.
        """
        n = _check_heap(n)
        if n < len(self.values):
            return int(self.values[n])
        if self.rule.is_nim:
            return n
        if self.proven and self.period is not None and self.preperiod is not None:
            n0, p = self.preperiod, self.period
            return int(self.values[n0 + (n - n0) % p])
        raise ValueError(
            f"G({n}) of {self.rule.code} is beyond the {len(self.values):,} computed values "
            "and no period is proven: compute more values (prove=True)"
        )

    def certificate(self) -> str:
        """One sentence saying what was checked, for people."""
        if self.period is None or self.preperiod is None:
            return f"no period found among {len(self.values):,} values"
        p, n0 = self.period, self.preperiod
        head = f"G(n + {p:,}) = G(n) for {n0:,} <= n < {len(self.values) - p:,}"
        if not self.proven:
            return head + " (not proven)"
        t = self.rule.max_take or 0
        if self.rule.splits:
            n1 = max(n0, 1)
            return head + (
                f", which covers the Guy–Smith range n < 2*n0 + p + t = {2 * n1 + p + t:,}"
                f" (t = {t}" + (", n0 counted as 1" if n0 < 1 else "") + "): periodic forever"
            )
        start = max(n0, 1)
        return head + (
            f"; the game never splits heaps and the {t} values from n = {start:,} repeat:"
            " periodic forever"
        )


# -- arithmetic periodicity ----------------------------------------------------------------------

MAX_ARITHMETIC_PERIOD: Final = 64
"""The longest arithmetic period :func:`arithmetic_period` looks for."""


@dataclass(frozen=True, slots=True)
class ArithmeticPeriod:
    """``G(n + period) = G(n) + saltus`` (``saltus > 0``) for every computed ``n >=
    preperiod``, seen in the values of heaps ``0 .. checked - 1``. ``proof`` names the theorem
    that proves it for every heap (``None``: observed up to ``checked``, not proven)."""

    period: int
    saltus: int
    preperiod: int
    checked: int
    proof: str | None

    @property
    def proven(self) -> bool:
        return self.proof is not None

    def value(self, n: int, values: Sequence[int] | npt.NDArray[Any]) -> int:
        """``G(n)`` from the computed ``values`` and this arithmetic period. O(1)."""
        if n < len(values):
            return int(values[n])
        n0, p = self.preperiod, self.period
        base = n0 + (n - n0) % p
        return int(values[base]) + (n - base) // p * self.saltus


def _arithmetic_proof(rule: TakeAndBreak, period: int, saltus: int, preperiod: int) -> str | None:
    """The theorem that proves an arithmetic period, where one is known."""
    if rule.is_nim and (period, saltus, preperiod) == (1, 1, 0):
        return "Nim: the options of a heap of n are the heaps 0 .. n - 1, so G(n) = n"
    if rule == TakeAndBreak((), tail=3, d0=4) and (period, saltus, preperiod) == (4, 4, 1):
        return (
            "Lasker's theorem: G(4k+1) = 4k+1, G(4k+2) = 4k+2, G(4k+3) = 4k+4, G(4k+4) = 4k+3 "
            "for every k >= 0. By induction on n: taking leaves heaps of values 0 .. n - 1 "
            "(for n = 4k+4: all but n - 1, and n); by the formula, a split's value G(a) XOR "
            "G(b) is, mod 4, 2 when n = 4k+1, 0 or 1 when n = 4k+2 or 4k+4, and 3 when n = "
            "4k+3, where the split 1 + (n - 1) gives n: so the mex is the formula's value"
        )
    return None


def arithmetic_period(
    rule: TakeAndBreak, values: Sequence[int] | npt.NDArray[Any]
) -> ArithmeticPeriod | None:
    """The shortest arithmetic period of ``values`` (``G(n + p) = G(n) + s``, ``s > 0``,
    ``p <= 64``), or ``None``. Looked for only in games with infinitely many digits (Nim,
    Lasker's Nim: finite octal codes are periodic or open, and their runs are not slowed down).
    Like an ordinary period it is reported only when its repetition covers three periods and
    at least a quarter of the values; it is *proven* only where a theorem says so
    (:func:`_arithmetic_proof`), else observed. O(p · n) with NumPy for the ``n`` values.
    """
    if not rule.tail:
        return None
    v = np.asarray(values, dtype=np.int64)
    n = len(v)
    for p in range(1, min(MAX_ARITHMETIC_PERIOD, n // 3) + 1):
        d = v[p:] - v[:-p]
        s = int(d[-1])
        if s <= 0:
            continue
        off = np.nonzero(d != s)[0]
        n0 = int(off[-1]) + 1 if len(off) else 0
        if n - n0 < max(3 * p, n // 4):
            continue
        return ArithmeticPeriod(p, s, n0, n, _arithmetic_proof(rule, p, s, n0))
    return None


# -- public functions ----------------------------------------------------------------------------


def grundy_sequence(
    rule: TakeAndBreak,
    n: int,
    *,
    prove: bool = False,
    progress: Progress | None = None,
    method: Method = "auto",
    status: Status | None = None,
) -> GrundySequence:
    """The values ``G(0) .. G(n - 1)`` of one heap under ``rule``, with period and proof status.

    With ``prove=True``, ``n`` is the most values to compute: the computation grows
    geometrically (and jumps straight to the length a period candidate needs) and stops as soon
    as the period is proven. Games with an infinite tail can never be proven, so ``prove=True``
    computes at most 4096 values for them.

    ``progress(done, total)`` is called between chunks of work (roughly 4 times a second);
    with ``prove=True`` ``total`` is the current goal, which may grow up to ``n``. ``status``
    is called at the same moments with a :class:`GrundyStatus` (values computed, the fixed
    limit ``n``, rare heaps found): use it for displays, its limit never moves.

    ``method``: ``"auto"`` (quadratic for Nim-like tails, non-splitting games and the first
    2048 values, sparse after that), ``"sparse"`` (sparse from the start, for splitting finite
    codes; others fall back to quadratic) or ``"quadratic"``. All give identical values.

    Complexity: O(n t) for games that never split heaps; about O(R n) for splitting finite
    codes whose rare values die out (R rare heaps), O(n^2 t) at worst; O(n^2) for infinite
    tails. Memory: 2 bytes per value (``uint16``), untouched capacity is not resident.
    """
    return GrundyRun(rule, n, prove=prove, method=method).run(progress=progress, status=status)


class GrundyRun:
    """One computation of a rule's Grundy sequence that can stop and go on later.

    ``GrundyRun(rule, n, prove=...).run()`` is :func:`grundy_sequence`; :meth:`run` may also
    stop early, after ``seconds`` of work or when ``stop()`` answers true (checked between
    chunks of about a quarter of a second), and be called again to go on. :meth:`to_bytes`
    keeps the state (the values computed, how far the proof search has grown, the limit) with a
    SHA-256 checksum; :meth:`from_bytes` reads it back, in another process too, and refuses a
    damaged or foreign state with :class:`GrundyStateError`. Everything else the fast method
    keeps (mask, rare heaps, histograms) follows from the values and is rebuilt, so a resumed
    run computes exactly the values of an uninterrupted one.

    ``threads``: at most this many threads (by default two, where the machine has them): from
    2,048 values on, a second thread pairs the large rare heaps of the rare/common method for
    the next block of heaps. Pass 1 where processes already fill the cores (a census).
    """

    def __init__(
        self,
        rule: TakeAndBreak,
        n: int,
        *,
        prove: bool = False,
        method: Method = "auto",
        unequal: bool = False,
        threads: int | None = None,
    ) -> None:
        n = _check_count(n)
        if method not in ("auto", "sparse", "quadratic"):
            raise ValueError(f"unknown method {method!r}: use 'auto', 'sparse' or 'quadratic'")
        if (rule.is_nim or rule.max_take is None) and prove:
            n = min(n, _TAIL_PROVE_CAP)
        self.rule = rule
        self.prove = prove
        self.method: Method = method
        self.limit = n
        self.seconds = 0.0
        """Seconds of work so far, over every call of :meth:`run` (also before a resume)."""
        unequal = unequal or rule.unequal
        if unequal and (rule.is_nim or rule.tail):
            raise ValueError("only finite codes can forbid splits into equal heaps")
        self.unequal = unequal
        """No split may leave two equal heaps: ``GrundyRun(TakeAndBreak((), d0=4), n,
        unequal=True)`` is Grundy's game. No periodicity theorem is known for such games, so
        no period is ever proven (``prove`` only computes ``n`` values)."""
        self._provable = prove and rule.max_take is not None and not rule.is_nim and not unequal
        self._goal = min(n, _PROVE_START) if self._provable else n
        self._engine = None if rule.is_nim else _Engine(rule, n, method, unequal=unequal)
        if self._engine is not None and threads is not None:
            self._engine.threads = max(1, threads)
        self._nim_count = 0
        self._scan_at = _PROVE_START

    @property
    def computed(self) -> int:
        """How many values are computed so far."""
        return self._nim_count if self._engine is None else self._engine.count

    @property
    def rare(self) -> int | None:
        """Rare heaps found so far (heap 0 included), ``None`` without the sparse method."""
        return None if self._engine is None else self._engine.rare_so_far()

    def run(
        self,
        *,
        seconds: float | None = None,
        stop: Callable[[], bool] | None = None,
        progress: Progress | None = None,
        status: Status | None = None,
    ) -> GrundySequence:
        """Compute on until the goal (``n`` values, or the proven period with ``prove``), or
        until ``seconds`` of work have passed or ``stop()`` is true: then the result says so in
        :attr:`GrundySequence.stopped` and holds the values so far (its period is that of those
        values). ``progress`` and ``status`` are called between chunks as in
        :func:`grundy_sequence`. Complexity: that of :func:`grundy_sequence` for the values added.
        """
        began = time.monotonic()
        deadline = None if seconds is None else began + seconds

        def halted() -> Stopped | None:
            if stop is not None and stop():
                return "stop"
            if deadline is not None and time.monotonic() >= deadline:
                return "time"
            return None

        try:
            return self._run(halted, progress, status)
        finally:
            self.seconds += time.monotonic() - began

    def _run(
        self,
        halted: Callable[[], Stopped | None],
        progress: Progress | None,
        status: Status | None,
    ) -> GrundySequence:
        engine = self._engine
        if engine is None:  # Nim: G(n) = n
            self._nim_count = self.limit
            values = np.arange(self.limit, dtype=_dtype_for(self.limit))
            return GrundySequence(self.rule, values, None, None, False)
        engine.status = status
        if not self._provable and (
            self.method != "auto" or self.rule.max_take is None or self.unequal
        ):
            return engine.result(stopped=engine.extend(self.limit, progress, self.limit, halted))
        if not self._provable:
            # every value is asked for: look for a proof now and then (geometrically, so the
            # scans cost O(n) in all); once the period is proven the rest follows from it
            while True:
                goal = min(self.limit, max(self._scan_at, engine.count))
                stopped = engine.extend(goal, progress, self.limit, halted)
                if stopped is not None or engine.count >= self.limit:
                    return engine.result(stopped=stopped)
                scan = engine.scan()
                if scan.proven_p > 0:
                    before = engine.count
                    engine.fill_periodic(scan, self.limit)
                    if progress is not None:
                        progress(engine.count, self.limit)
                    # the copies extend the repeating tail: no second scan of all the values
                    added = engine.count - before
                    return engine.result(replace(scan, proven_z=scan.proven_z + added))
                self._scan_at = 2 * goal
        while True:
            goal = self._goal
            stopped = engine.extend(goal, progress, goal, halted)
            scan = engine.scan()
            if stopped is not None or scan.proven_p > 0 or goal >= self.limit:
                return engine.result(scan, stopped=None if scan.proven_p > 0 else stopped)
            nxt = max(int(goal * _PROVE_GROWTH), goal + 1)
            for p, z in ((scan.found_p, scan.found_z), (scan.best_p, scan.best_z)):
                need = engine.needed_length(p, z)
                if need is not None and goal < need <= nxt:
                    nxt = max(need, goal + goal // 16)
                    break
            self._goal = min(self.limit, nxt)

    # -- keeping the state -------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The state of the run: a header line (JSON), the values (little-endian), a checksum.

        O(values computed). Values are stored in their own width (2 bytes each while they fit).
        """
        count = self.computed
        if self._engine is None:
            values = np.arange(count, dtype=_dtype_for(count))
        else:
            values = self._engine.g[:count]
        payload = values.astype(values.dtype.newbyteorder("<"), copy=False).tobytes()
        header = {
            "rule": {"digits": list(self.rule.digits), "tail": self.rule.tail, "d0": self.rule.d0},
            "unequal": self.unequal,
            "code": self.rule.code,
            "limit": self.limit,
            "prove": self.prove,
            "method": self.method,
            "goal": self._goal,
            "count": count,
            "dtype": str(values.dtype),
            "seconds": round(self.seconds, 3),
        }
        head = _STATE_MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n"
        digest = hashlib.sha256(head + payload).hexdigest().encode()
        return head + payload + digest + b"\n"

    @classmethod
    def from_bytes(
        cls,
        data: bytes,
        rule: TakeAndBreak | None = None,
        *,
        limit: int | None = None,
        want_unequal: bool = False,
    ) -> GrundyRun:
        """The run kept by :meth:`to_bytes`, ready to go on (with a new ``limit`` if given: at
        least the values already computed). Raises :class:`GrundyStateError` when ``data`` is
        damaged (checksum), not a saved run, or of another game than ``rule``. O(values)."""
        header, payload = _read_state(data)
        try:
            spec = header["rule"]
            saved = TakeAndBreak(tuple(spec["digits"]), spec["tail"], spec["d0"])
            count, goal, old_limit = int(header["count"]), int(header["goal"]), int(header["limit"])
            prove, method = bool(header["prove"]), header["method"]
            dtype = np.dtype(header["dtype"]).newbyteorder("<")
            seconds = float(header["seconds"])
            unequal = bool(header.get("unequal", False))
        except (KeyError, TypeError, ValueError) as exc:
            raise GrundyStateError(
                f"not a saved Grundy run: its header is incomplete ({exc})"
            ) from None
        if rule is not None and (saved, unequal) != (
            replace(rule, unequal=False),
            bool(want_unequal or rule.unequal),
        ):
            theirs = "Grundy's game" if unequal else saved.code
            mine = "Grundy's game" if want_unequal else rule.code
            raise GrundyStateError(f"the saved run is of {theirs}, not of {mine}")
        if dtype.kind != "u" or len(payload) != count * dtype.itemsize or count > old_limit:
            raise GrundyStateError("the saved run's values do not match its header")
        new_limit = old_limit if limit is None else _check_count(limit)
        if new_limit < count:
            raise GrundyStateError(
                f"the saved run has {count:,} values already: a limit of {new_limit:,} is too small"
            )
        run = cls(replace(saved, unequal=unequal), new_limit, prove=prove, method=method)
        run.seconds = seconds
        run._goal = min(max(goal, count), new_limit) if run._provable else new_limit
        values = np.frombuffer(payload, dtype=dtype)
        if run._engine is None:
            run._nim_count = count
        else:
            run._engine.restore(values)
        return run


_STATE_MAGIC: Final = b"nimlab-grundy-run/1\n"


def _read_state(data: bytes) -> tuple[dict[str, Any], bytes]:
    """The header and the values of a saved run, checked against its checksum."""
    if not data.startswith(_STATE_MAGIC):
        raise GrundyStateError("not a saved Grundy run (it does not start as one)")
    if len(data) < len(_STATE_MAGIC) + 66 or not data.endswith(b"\n"):
        raise GrundyStateError("the saved run is damaged: it is cut short")
    body, digest = data[:-65], data[-65:-1]
    if hashlib.sha256(body).hexdigest().encode() != digest:
        raise GrundyStateError("the saved run is damaged: its checksum does not match")
    end = body.find(b"\n", len(_STATE_MAGIC))
    if end < 0:
        raise GrundyStateError("not a saved Grundy run: it has no header")
    try:
        header = json.loads(body[len(_STATE_MAGIC) : end])
    except ValueError as exc:
        raise GrundyStateError(f"not a saved Grundy run: its header is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise GrundyStateError("not a saved Grundy run: its header is not an object")
    return header, body[end + 1 :]


def grundy_value(rule: TakeAndBreak, n: int, budget: Budget | None = None) -> int:
    """``G(n)`` for one heap of any size ``n >= 0``.

    Nim: ``n`` itself. Other rules keep one :class:`GrundySequence` each in a cache (thread
    safe), computed with ``prove=True`` (finite codes) and grown when a larger heap is asked:
    first 4096 values, then up to ``n + 1`` (at most 2**26 values; 2**14 for infinite tails,
    which cost O(n^2)); for a larger ``n`` up to 2**20 values are computed to look for a proof.
    With a proven period any ``n`` (even 10**100) costs O(1 + log n) (one modulo): the cached
    sequence answers without computing anything. The cache holds at most 64 rules and 256 MiB
    of values, evicting the least recently used; a proven sequence keeps only the values up to
    the end of its first period (all that :meth:`GrundySequence.value` needs), a sequence larger
    than the whole budget is not kept. Raises :class:`ValueError` when ``n`` is negative, or too
    large to compute and no period is proven.

    With a ``budget`` the values that are not cached yet are computed within it (each value
    computed is one unit of work, and the time is checked between chunks of about a quarter of
    a second): when it runs out, :class:`BudgetExceeded` is raised and the run is kept, so the
    next question goes on from where this one stopped.
    """
    known = cached_grundy_value(rule, n)
    if known is not None:
        return known
    seq = _cache_get(rule)
    finite = rule.max_take is not None
    cap = _VALUE_DIRECT_LIMIT if finite else _TAIL_DIRECT_LIMIT
    have = len(seq.values) if seq is not None else 0

    def too_large(have: int) -> ValueError:
        return ValueError(
            f"G({n}) of {rule.code}: no period is proven within {have:,} values and a heap "
            f"of {cap:,} or more is too large to compute directly"
        )

    if n < cap:
        size = min(cap, max(n + 1, 2 * have, _VALUE_START))
    elif finite and have < _VALUE_PROVE_LIMIT:
        size = _VALUE_PROVE_LIMIT
    else:
        raise too_large(have)
    seq = grundy_sequence(rule, size, prove=finite) if budget is None else _grow(rule, size, budget)
    _cache_put(rule, seq)
    if n >= len(seq.values) and not seq.proven:
        raise too_large(len(seq.values))
    return seq.value(n)


def cached_grundy_value(rule: TakeAndBreak, n: int) -> int | None:
    """``G(n)`` when :func:`grundy_value` has it already (computed, or from a proven period),
    else ``None``: nothing is computed. O(1 + log n)."""
    n = _check_heap(n)
    if rule.is_nim:
        return n
    seq = _cache_get(rule)
    if seq is not None and (n < len(seq.values) or seq.proven):
        return seq.value(n)
    return None


def cached_grundy_period(rule: TakeAndBreak) -> tuple[int, int] | None:
    """``(preperiod, period)`` when :func:`grundy_value` has proven it already, else ``None``:
    nothing is computed (unlike :func:`grundy_period`). O(1)."""
    if rule.is_nim:
        return None
    seq = _cache_get(rule)
    if seq is None or not seq.proven or seq.period is None or seq.preperiod is None:
        return None
    return seq.preperiod, seq.period


def grundy_period(rule: TakeAndBreak) -> tuple[int, int] | None:
    """``(preperiod, period)`` of ``rule``'s Grundy sequence when a period is proven (computing
    values as :func:`grundy_value` does for a huge heap), else ``None``. Nim has none."""
    if rule.is_nim:
        return None
    try:
        grundy_value(rule, 1 << 80)
    except ValueError:
        return None
    seq = _cache_get(rule)
    if seq is None or not seq.proven or seq.period is None or seq.preperiod is None:
        return None
    return seq.preperiod, seq.period


GRUNDYS_GAME: Final = TakeAndBreak((), d0=4, unequal=True)
"""Grundy's game: split one heap into two unequal heaps, nothing removed."""


def grundys_game_sequence(
    n: int, *, method: Method = "auto", status: Status | None = None
) -> GrundySequence:
    """``G(0) .. G(n - 1)`` of Grundy's game: a move splits one heap into two unequal heaps.

    The same kernels as the octal games (the rare/common method from 2048 values on, with the
    mask chosen from the values). No period is known or claimed (``period`` is ``None``; its
    values are conjectured to be periodic, which nobody has proven). About O(R n) for R rare
    heaps when the rare values die out, O(n^2) at worst.
    """
    return GrundyRun(GRUNDYS_GAME, n, method=method, unequal=True).run(status=status)


def naive_grundys_game(n: int) -> list[int]:
    """Grundy's game by the plain mex in pure Python: the twin of :func:`grundys_game_sequence`.
    O(n^2)."""
    n = _check_count(n)
    g: list[int] = []
    for m in range(n):
        options = {g[a] ^ g[m - a] for a in range(1, (m + 1) // 2) if a != m - a}
        v = 0
        while v in options:
            v += 1
        g.append(v)
    return g


def warm_up() -> None:
    """Load (or compile) every kernel :func:`grundy_sequence` uses, so that a time budget given
    afterwards counts computing only. About 0.1 s once compiled and cached on disk."""
    grundy_sequence(TakeAndBreak.octal("0.16"), _SPARSE_FROM + 256, prove=True)


def naive_grundy(rule: TakeAndBreak, n: int) -> list[int]:
    """``[G(0), .., G(n - 1)]`` by the plain mex over every option, in pure Python.

    The reference twin of every fast path: it uses :meth:`TakeAndBreak.options` and nothing
    else. O(n^2 t) for a finite code with t digits, O(n^3) for an infinite tail.
    """
    return rule.plain_grundy_values(_check_count(n))


# -- internals -----------------------------------------------------------------------------------

_RUNS: OrderedDict[TakeAndBreak, tuple[GrundyRun, threading.Lock]] = OrderedDict()
"""Runs of :func:`grundy_value` that a budget stopped, to go on with (at most ``_RUNS_KEPT``)."""
_RUNS_LOCK = threading.Lock()
_RUNS_KEPT = 4


def _grow(rule: TakeAndBreak, size: int, budget: Budget) -> GrundySequence:
    """:func:`grundy_sequence` of ``size`` values (``prove`` for finite codes) within
    ``budget``: the run is kept between questions until it reaches its goal; raises
    :class:`BudgetExceeded` (the run kept) when the budget runs out first."""
    budget.check()
    with _RUNS_LOCK:
        entry = _RUNS.get(rule)
        if entry is None or entry[0].limit < size:
            finite = rule.max_take is not None
            entry = _RUNS[rule] = (GrundyRun(rule, size, prove=finite), threading.Lock())
        _RUNS.move_to_end(rule)
        while len(_RUNS) > _RUNS_KEPT:
            _RUNS.popitem(last=False)
    run, lock = entry
    wait = budget.remaining_seconds()
    if not lock.acquire(timeout=-1 if wait is None else wait):  # another question computes it
        raise BudgetExceeded(budget.seconds, "time")
    ran_out: list[BudgetExceeded] = []
    counted = run.computed

    def stop() -> bool:
        nonlocal counted
        done = run.computed
        try:
            budget.charge(max(0, done - counted))
            counted = done
            budget.check()
        except BudgetExceeded as e:
            ran_out.append(e)
            return True
        return False

    try:
        seq = run.run(stop=stop)
    finally:
        lock.release()
    if seq.stopped is not None:
        raise ran_out[0] if ran_out else BudgetExceeded(budget.seconds, "time")
    with _RUNS_LOCK:
        if _RUNS.get(rule) is entry:
            del _RUNS[rule]
    return seq


_CACHE: OrderedDict[TakeAndBreak, GrundySequence] = OrderedDict()
"""The sequences :func:`grundy_value` computed, least recently used first (bounded: at most
``_CACHE_RULES`` rules and ``_CACHE_BYTES`` bytes of values)."""
_CACHE_LOCK = threading.Lock()


def _cache_get(rule: TakeAndBreak) -> GrundySequence | None:
    with _CACHE_LOCK:
        seq = _CACHE.get(rule)
        if seq is not None:
            _CACHE.move_to_end(rule)
        return seq


def _cache_put(rule: TakeAndBreak, seq: GrundySequence) -> None:
    """Keep ``seq`` (shortened to its first period when proven), evicting the least recently
    used sequences beyond the bounds. O(rules cached)."""
    if seq.proven and seq.period is not None and seq.preperiod is not None:
        keep = seq.preperiod + seq.period
        if keep < len(seq.values):
            values = seq.values[:keep].copy()
            values.flags.writeable = False
            seq = replace(seq, values=values)
    if seq.values.nbytes > _CACHE_BYTES:
        return
    with _CACHE_LOCK:
        _CACHE[rule] = seq
        _CACHE.move_to_end(rule)
        total = sum(s.values.nbytes for s in _CACHE.values())
        while len(_CACHE) > _CACHE_RULES or total > _CACHE_BYTES:
            _, old = _CACHE.popitem(last=False)
            total -= old.values.nbytes


def _check_count(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise TypeError(f"the number of values must be an int, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"the number of values must be >= 0, got {n}")
    return int(n)


def _check_heap(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise TypeError(f"a heap size must be an int, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"a heap size must be >= 0, got {n}")
    return int(n)


def _dtype_for(count: int) -> type[np.unsignedinteger[Any]]:
    if count <= 1 << 16:
        return np.uint16
    if count <= 1 << 32:
        return np.uint32
    return np.uint64


@dataclass(frozen=True)
class _Scan:
    proven_p: int
    proven_z: int
    found_p: int
    found_z: int
    best_p: int
    best_z: int


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _far_pool() -> ThreadPoolExecutor:
    """The one extra thread of the sparse method (shared by every computation)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nimlab-grundy")
        return _POOL


def _far_reach(together: bool) -> int:
    """The least rare heap paired a block of heaps at a time: its partners for every heap of
    the block lie below the block (``together``: below the block before it, which the other
    thread's pairing runs beside)."""
    return 2 * _FAR_BLOCK if together else _FAR_BLOCK


def _wht(h: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Walsh–Hadamard transform: ``out[m] = sum_v h[v] (-1)^popcount(v & m)``; len a power of 2."""
    size = len(h)
    out = h.astype(np.int64, copy=True)
    step = 1
    while step < size:
        blocks = out.reshape(-1, 2, step)
        u = blocks[:, 0, :].copy()
        blocks[:, 0, :] += blocks[:, 1, :]
        blocks[:, 1, :] = u - blocks[:, 1, :]
        step *= 2
    return out


class _Engine:
    """The state of one computation: values, the option-stamp array, the sparse bookkeeping."""

    def __init__(
        self,
        rule: TakeAndBreak,
        capacity: int,
        method: Method,
        *,
        mask: int | None = None,
        positional: bool = False,
        unequal: bool = False,
    ) -> None:
        kernels.ensure("grundy")
        self.rule = rule
        self.unequal = int(unequal)
        """1 when no split may leave two equal heaps (Grundy's game)."""
        self.capacity = capacity
        self.t = rule.max_take if rule.max_take is not None else 0
        digits = rule.digits
        self.digits = np.array(digits, dtype=np.int64).reshape(-1)
        self.tail = rule.tail
        self.g: npt.NDArray[Any] = np.zeros(max(capacity, 1), dtype=np.uint16)
        self.count = min(capacity, 1)
        self.size = _INITIAL_SIZE
        while mask is not None and self.size // 2 <= mask:
            self.size *= 2
        self.seen = np.full(self.size, -1, dtype=np.int64)
        self.cum = np.zeros(self.size, dtype=np.uint8)
        self.cum_upto = 0
        split = [0] if rule.d0 & 4 else []
        split += [k for k, d in enumerate(digits, 1) if d & 4]
        self.split_k = np.array(split, dtype=np.int64)
        self.leave_k = np.array([k for k, d in enumerate(digits, 1) if d & 2], dtype=np.int64)
        self.whole_k = np.array([k for k, d in enumerate(digits, 1) if d & 1], dtype=np.int64)
        self.k0 = split[0] if split else 0
        self.same_parity = len({k & 1 for k in split}) <= 1
        can_sparse = rule.max_take is not None and bool(split)
        self.sparse_from: int | None = None
        self.sparse_active = False
        self.dense = False
        """True while no mask makes the rare heaps few: the plain kernel is cheaper then."""
        self.method = method
        if can_sparse and method == "sparse":
            self.sparse_from = 1
        elif can_sparse and method == "auto":
            self.sparse_from = _SPARSE_FROM
        self.auto_mask = mask is None
        if mask is not None:
            if not 1 <= mask < 1 << 15:
                raise ValueError(f"a rare/common mask must be 1 .. 2**15 - 1, got {mask}")
            if positional and not self.same_parity:
                raise ValueError("a positional mask needs splitting digits of one parity")
        self.mask = mask if mask is not None else self.size // 2 - 1
        self.positional = positional
        self.partab = _k.parity_table(self.mask, self.size)
        self.rare_pos = np.zeros(0, dtype=np.int64)
        self.rare_val = np.zeros(0, dtype=np.int64)
        self.nrare = 0
        self.threads = 2
        """At most this many threads (a second one only where it pays, see ``_run_far``)."""
        self.far_middle = _FAR_MIDDLE
        """How many splits nearest the middle the other thread takes (adapted as it runs)."""
        self.hist = np.zeros((2, 1 << 16), dtype=np.int64)
        self.hist_upto = 1
        self.narrow = True
        """Whether every value counted in the histograms so far is below the width of the sparse
        kernel on words (see :meth:`_update_hist`)."""
        self.chunk = 1 << 12
        self.status: Status | None = None

    # -- computing ---------------------------------------------------------------------------

    def extend(
        self,
        stop: int,
        progress: Progress | None,
        total: int,
        halted: Callable[[], Stopped | None] | None = None,
    ) -> Stopped | None:
        """Compute values up to ``g[stop - 1]``, or until ``halted()`` gives a reason to stop
        (asked between chunks); return that reason, ``None`` when done."""
        stop = min(stop, self.capacity)
        while self.count < stop:
            if halted is not None and (reason := halted()) is not None:
                return reason
            end = min(stop, self.count + self.chunk)
            began = time.perf_counter()
            if self.sparse_from is not None and end > self.sparse_from:
                if not self.sparse_active:
                    self._run_plain(self.sparse_from)
                    self._start_sparse()
                    continue
                self._run_sparse(end)
            else:
                self._run_plain(end)
            elapsed = time.perf_counter() - began
            if elapsed < _CHUNK_SECONDS / 2 and self.chunk < 1 << 24:
                self.chunk *= 2
            elif elapsed > _CHUNK_SECONDS * 2 and self.chunk > 1 << 8:
                self.chunk //= 2
            if progress is not None:
                progress(self.count, total)
            if self.status is not None:
                self.status(GrundyStatus(self.count, self.capacity, self.rare_so_far()))
        return None

    def restore(self, values: npt.NDArray[np.unsignedinteger[Any]]) -> None:
        """Start from ``values`` (G(0) .. G(len - 1), computed before): the arrays are sized for
        them; the sparse bookkeeping is rebuilt from them when the next chunk starts."""
        count = len(values)
        if count > self.capacity:
            raise ValueError("more values than the capacity")
        if count == 0:
            return
        self.g = np.zeros(max(self.capacity, 1), dtype=values.dtype)
        self.g[:count] = values
        self.count = count
        if int(values.max()) >= self.size // 2:
            self._grow()

    def _grow(self) -> None:
        """Make the stamp arrays hold twice the largest value (and widen ``g`` if needed)."""
        top = int(self.g[: self.count].max())
        size = self.size
        while size // 2 <= top:
            size *= 2
        if size > 1 << 16 and self.g.dtype == np.uint16:
            wide = np.zeros(len(self.g), dtype=np.uint32)  # untouched capacity stays unmapped
            wide[: self.count] = self.g[: self.count]
            self.g = wide
        if size > 1 << 17:
            # the sparse bookkeeping is sized for 16-bit values; larger ones use the plain method
            self.sparse_from = None
            self.sparse_active = False
        seen = np.full(size, -1, dtype=np.int64)
        seen[: self.size] = self.seen
        cum = np.zeros(size, dtype=np.uint8)
        cum[: self.size] = self.cum
        self.seen, self.cum, self.size = seen, cum, size
        self.partab = _k.parity_table(self.mask, self.size)

    def _run_plain(self, stop: int) -> None:
        while self.count < stop:
            nxt, self.cum_upto, status = _k.plain_extend(
                self.g,
                self.count,
                stop,
                self.digits,
                self.tail,
                self.rule.d0,
                self.seen,
                self.cum,
                self.cum_upto,
                self.unequal,
            )
            self.count = int(nxt)
            if status == _k.GROW:
                self._grow()

    def _start_sparse(self) -> None:
        kernels.ensure("grundy-sparse")  # only games that split heaps, past the first values
        self.sparse_active = True
        if self.auto_mask:
            self._update_hist()
            self._choose_mask(force=True)
        else:
            self._rebuild_rare()

    def _run_sparse(self, stop: int) -> None:
        if self.dense:
            self._run_plain(stop)
            self._update_hist()
            self._choose_mask(force=False)
            return
        while self.count < stop:
            together = min(self.threads, _THREADS) > 1
            if self._far_worthwhile(together):
                if not self._run_far(stop, together):
                    return
                continue
            if self._still_narrow():
                if together and self._guessing_worthwhile(stop):
                    status = self._run_narrow_together(stop)
                elif together and self.count < _GUESS_FROM:
                    status = self._narrow_call(min(stop, _GUESS_FROM))
                else:
                    status = self._narrow_call(stop)
                if status == _k.WIDE:
                    self.narrow = False  # (values only grow: for good)
                    continue
            else:
                status = self._sparse_call(stop, _NO_FAR, 0, 0, 0, 0, 0)
            if status == _k.GROW:
                self._grow()
                if self.sparse_from is None:
                    self._run_plain(stop)
                    return
            elif status == _k.RARE_FULL:
                self._resize_rare(max(2 * len(self.rare_pos) + _RARE_SLACK, len(self.rare_pos) + 1))
        if self.auto_mask:
            self._update_hist()
            self._choose_mask(force=False)

    def _sparse_call(
        self,
        stop: int,
        far: npt.NDArray[np.uint8],
        far_base: int,
        far_lo: int,
        far_lag: int,
        far_hi: int,
        far_middle: int,
    ) -> int:
        """One call of the sparse kernel from ``count`` towards ``stop``; returns its status."""
        args = (
            *self._sparse_args(self.count, stop),
            self.seen,
            self.unequal,
            _BLOCK,
            far,
            far_base,
            far_lo,
            far_lag,
            far_hi,
            far_middle,
        )
        nxt, nrare, status = _k.sparse_extend(*args)
        self.count, self.nrare = int(nxt), int(nrare)
        return int(status)

    def _still_narrow(self) -> bool:
        """Whether every value so far is below :meth:`_narrow_width` (the values the other
        kernels computed since are counted first; once a value is not, never again).
        O(values computed since)."""
        self._update_hist()
        return self.narrow

    def _narrow_width(self) -> int:
        """Values below this fit the words of the sparse kernel on words (and the stamp arrays,
        which take over when a value does not)."""
        return min(_NARROW, self.size // 2)

    def _sparse_args(self, start: int, stop: int) -> tuple[Any, ...]:
        """The arguments both sparse kernels begin with: the values, heaps ``start .. stop - 1``,
        the game's removals, the rare/common split and the rare heaps so far."""
        return (
            self.g,
            start,
            stop,
            self.whole_k,
            self.leave_k,
            self.split_k,
            self.partab,
            int(self.positional),
            self.k0,
            self.rare_pos,
            self.rare_val,
            self.nrare,
        )

    def _narrow_args(
        self, start: int, stop: int, mode: int, guesses: npt.NDArray[np.uint64]
    ) -> tuple[Any, ...]:
        """The arguments of :func:`_grundy_kernels.sparse_extend_narrow` for heaps ``start ..
        stop - 1`` in ``mode``."""
        return (
            *self._sparse_args(start, stop),
            self.unequal,
            _BLOCK,
            self._narrow_width(),
            self.hist,
            mode,
            guesses,
        )

    def _narrow_call(self, stop: int) -> int:
        """One call of the sparse kernel on words (every value below ``_NARROW``) from
        ``count`` towards ``stop``; it counts the values it computes in the histograms (brought
        up to date first). Returns its status."""
        self._update_hist()
        args = self._narrow_args(self.count, stop, _k.COMPUTE, _NO_GUESSES)
        nxt, nrare, status = _k.sparse_extend_narrow(*args)
        self.count, self.nrare = int(nxt), int(nrare)
        self.hist_upto = self.count
        return int(status)

    def _guessing_worthwhile(self, stop: int) -> bool:
        """Whether the heaps up to ``stop`` are enough, and the first rare heaps far enough
        behind, for guessing on one thread and checking on the other."""
        return self.count >= _GUESS_FROM and stop - self.count >= 2 * _GUESS_BLOCK

    def _run_narrow_together(self, stop: int) -> int:
        """Compute towards ``stop`` on two threads: this one guesses each heap's value to be
        its bound ``c`` (:func:`_grundy_kernels.sparse_extend_narrow` guessing), a block of
        ``_GUESS_BLOCK`` heaps at a time, while the other one checks the block before (the
        same kernel checking: the search for the pending values, a large part of the work for
        games with few rare heaps). A block is taken only once checked; at the first wrong
        guess, a rare heap, the checking sets its value and the heaps guessed after it are
        dropped (this returns, and the next call guesses again from there). Returns the status
        of the kernel on words."""
        self._update_hist()
        if self.nrare == len(self.rare_pos):  # (room for the rare heap a check may find)
            self._resize_rare(2 * len(self.rare_pos) + _RARE_SLACK)
        pool = _far_pool()
        buffers = [np.empty(_GUESS_BLOCK, dtype=np.uint64) for _ in range(2)]

        def guess(start: int, out: npt.NDArray[np.uint64]) -> tuple[int, int]:
            end = min(stop, start + _GUESS_BLOCK)
            nxt, _, status = _k.sparse_extend_narrow(*self._narrow_args(start, end, _k.GUESS, out))
            return int(nxt), int(status)

        begin = self.count
        end, status = guess(begin, buffers[0])
        which = 0
        while True:
            checking = self._narrow_args(begin, end, _k.CHECK, buffers[which])
            job = pool.submit(_k.sparse_extend_narrow, *checking)
            try:
                after, after_status = end, status
                if status == _k.DONE and end < stop:
                    after, after_status = guess(end, buffers[1 - which])
            finally:
                checked, nrare, checked_status = job.result()
            self.count, self.nrare = int(checked), int(nrare)
            self.hist_upto = self.count
            if checked_status == _k.WRONG:  # heap count - 1 was rare: guess again after it
                return _k.DONE
            if status != _k.DONE or end >= stop:
                return status
            begin, end, status, which = end, after, after_status, 1 - which

    def _far_worthwhile(self, together: bool) -> bool:
        """Whether enough rare heaps lie far below the next heaps to pair them a block of heaps
        at a time (``together``: on the other thread, for the block after this one)."""
        reach = _far_reach(together)
        return (
            self.count >= 2 * reach
            and self.nrare - int(np.searchsorted(self.rare_pos[: self.nrare], reach)) >= _FAR_RARE
        )

    def _run_far(self, stop: int, together: bool) -> bool:
        """Compute up to ``stop`` in blocks of ``_FAR_BLOCK`` heaps, the rare heaps whose
        partners are known paired for a whole block at once (:func:`sparse_far`, four heaps
        per pass over the rare heaps: cheaper per pair than heap by heap; it reads only finished
        values): heap n of a block from s takes those of at least n - s + 1, the smaller ones
        are paired heap by heap. ``together``: on two threads, the other one pairs them for
        the next block (those of at least n - s + 513, and the splits nearest the middle)
        while this one runs the sparse kernel on a block; else this thread does it before each
        block.
        Returns False when the values outgrew the sparse method (the rest was computed by the
        plain one)."""
        half = self.size // 2
        buffers = [np.empty((_FAR_BLOCK, half), dtype=np.uint8) for _ in range(2)]
        pool = _far_pool() if together else None

        def far_job(
            start: int, end: int, hi: int, known: int, out: npt.NDArray[np.uint8]
        ) -> tuple[int, int, int, int]:
            pos, val = self.rare_pos, self.rare_val
            # heap n pairs the rare heaps of at least n - known + 1: every partner is known
            lag = start - known + 1
            lo = int(np.searchsorted(pos[:hi], lag))
            # the middle splits of heap end - 1 reach up to (end - 1) / 2 + middle
            fits = (end - 1) // 2 + self.far_middle < known
            middle = self.far_middle if together and fits else 0
            _k.sparse_far(
                self.g, start, end, self.split_k, pos, val, lo, lag, hi, self.unequal, middle, out
            )
            return lo, lag, hi, middle

        base = self.count
        end = min(stop, base + _FAR_BLOCK)
        lo, lag, hi, middle = far_job(base, end, self.nrare, base, buffers[0])
        which = 0
        while self.count < stop:
            nxt = min(stop, base + _FAR_BLOCK)
            job = None
            if nxt < stop and pool is not None:
                end = min(stop, nxt + _FAR_BLOCK)
                job = pool.submit(far_job, nxt, end, self.nrare, base, buffers[1 - which])
            try:
                while self.count < nxt:
                    status = self._sparse_call(nxt, buffers[which], base, lo, lag, hi, middle)
                    if status == _k.GROW:
                        if job is not None:
                            job.result()
                            job = None
                        self._grow()
                        if self.sparse_from is None:
                            self._run_plain(stop)
                            return False
                        return True  # the arrays changed size: start the blocks again
                    if status == _k.RARE_FULL:
                        self._resize_rare(
                            max(2 * len(self.rare_pos) + _RARE_SLACK, len(self.rare_pos) + 1)
                        )
            finally:
                if job is not None and self.count < nxt:
                    job.result()  # (an error above) never leave the other thread writing
            if nxt >= stop:
                break
            if job is None:  # this thread pairs them for the next block, now that it is done
                end = min(stop, nxt + _FAR_BLOCK)
                lo, lag, hi, middle = far_job(nxt, end, self.nrare, nxt, buffers[1 - which])
            else:
                # share the work evenly: more middle splits for the other thread while it is
                # done first, fewer while this one waits for it
                step = max(1, self.far_middle // 8)
                self.far_middle += step if job.done() else -step
                self.far_middle = max(0, self.far_middle)
                lo, lag, hi, middle = job.result()
            base, which = nxt, 1 - which
        return True

    def fill_periodic(self, scan: _Scan, stop: int) -> None:
        """Values up to ``g[stop - 1]`` from the proven period of ``scan`` (exact: the theorem
        says the sequence repeats forever). O(stop - count) copying, in O(log) NumPy copies."""
        p = scan.proven_p
        n0 = self.count - p - scan.proven_z
        stop = min(stop, self.capacity)
        while self.count < stop:
            span = (self.count - n0) // p * p  # g[i] = g[i - span] for every i >= n0 + span
            start = self.count
            end = min(stop, start + span)
            self.g[start:end] = self.g[start - span : end - span]
            self.count = end
        if self.sparse_active and not self.dense:
            self._rebuild_rare()

    def _resize_rare(self, capacity: int) -> None:
        pos = np.zeros(capacity, dtype=np.int64)
        val = np.zeros(capacity, dtype=np.int64)
        pos[: self.nrare] = self.rare_pos[: self.nrare]
        val[: self.nrare] = self.rare_val[: self.nrare]
        self.rare_pos, self.rare_val = pos, val

    def _rebuild_rare(self) -> None:
        self.partab = _k.parity_table(self.mask, self.size)
        pos = int(self.positional)
        none = np.zeros(0, dtype=np.int64)
        total = int(_k.collect_rare(self.g, self.count, self.partab, pos, self.k0, none, none))
        self.rare_pos = np.zeros(2 * total + _RARE_SLACK, dtype=np.int64)
        self.rare_val = np.zeros(2 * total + _RARE_SLACK, dtype=np.int64)
        self.nrare = int(
            _k.collect_rare(
                self.g, self.count, self.partab, pos, self.k0, self.rare_pos, self.rare_val
            )
        )

    def _update_hist(self) -> None:
        """Add heaps ``hist_upto .. count - 1`` to the histograms by heap parity (and clear
        ``narrow`` when one of their values is not below :meth:`_narrow_width`)."""
        lo, hi = self.hist_upto, self.count
        if hi <= lo:
            return
        for parity in (0, 1):
            first = lo + ((parity - lo) & 1)
            if first < hi:
                counts = np.bincount(self.g[first:hi:2])
                if len(counts) > self._narrow_width():
                    self.narrow = False
                counts = counts[: 1 << 16]
                self.hist[parity, : len(counts)] += counts
        self.hist_upto = hi

    def _choose_mask(self, *, force: bool) -> None:
        """Pick the mask (and positional flag) with the fewest rare heaps so far."""
        top = int(np.flatnonzero(self.hist.any(axis=0)).max(initial=1))
        bits = max(1, top.bit_length())
        size = 1 << bits
        h_even, h_odd = self.hist[0, :size], self.hist[1, :size]
        total = int(h_even.sum() + h_odd.sum())
        big = np.iinfo(np.int64).max
        counts0 = (total + _wht(h_even + h_odd)) // 2
        counts0[0] = big
        options = [(counts0, False)]
        if self.same_parity:
            h_e, h_o = (h_even, h_odd) if self.k0 % 2 == 0 else (h_odd, h_even)
            counts1 = (total + _wht(h_e) - _wht(h_o)) // 2
            counts1[0] = big
            options.append((counts1, True))
        best = min(
            ((int(c.min()), positional, int(c.argmin())) for c, positional in options),
            key=lambda item: (item[0], item[1]),
        )
        count, positional, mask = best
        heaps = self.count - 1
        if self.method == "auto" and count > _DENSE_SHARE * heaps:
            self.dense = True  # no sparse space (yet)
            return
        if not force and not self.dense and count >= _MASK_SWITCH * self.nrare:
            return
        self.dense = False
        self.mask, self.positional = mask, positional
        self._rebuild_rare()

    # -- periods -----------------------------------------------------------------------------

    def scan(self) -> _Scan:
        count = self.count
        provable = self.rule.max_take is not None and not self.unequal
        splitting = self.rule.splits
        # Guy–Smith needs p <= (count - t) / 2; the window condition only p <= count - t - 1
        pmax = (count - self.t) // 2 if splitting or not provable else count - self.t - 1
        if pmax < 1 or not provable:  # no theorem for infinite tails: no period claimed
            return _Scan(-1, -1, -1, -1, -1, -1)
        res = _k.period_scan(self.g, count, self.t, splitting, provable, pmax, _EXCEPTIONS_CAP)
        return _Scan(*(int(x) for x in res))

    def needed_length(self, p: int, z: int) -> int | None:
        """How many values the proof for period ``p`` with a repeating tail ``z`` needs."""
        if p <= 0 or self.rule.max_take is None or self.unequal:
            return None
        n0 = self.count - p - z
        if self.rule.splits:
            return 2 * max(n0, 1) + 2 * p + self.t
        return max(n0, 1) + self.t + p

    def rare_so_far(self) -> int | None:
        """Rare heaps found so far (heap 0 included), or ``None`` without the sparse method."""
        if not self.sparse_active or self.dense:
            return None
        return self.nrare + self._heap0_rare()

    def _heap0_rare(self) -> int:
        """1 when heap 0 (G = 0) is rare: the kernels skip it, published counts include it."""
        return int(not self.positional or self.k0 % 2 == 0)

    def result(
        self, scan: _Scan | None = None, *, stopped: Stopped | None = None
    ) -> GrundySequence:
        if scan is None:
            scan = self.scan()
        values = self.g[: self.count]
        if values.dtype != np.uint16 and self.count and int(values.max()) < 1 << 16:
            values = values.astype(np.uint16)
        values.flags.writeable = False
        if scan.proven_p > 0:
            p, z, proven = scan.proven_p, scan.proven_z, True
        elif scan.found_p > 0 and 4 * (scan.found_p + scan.found_z) >= self.count:
            p, z, proven = scan.found_p, scan.found_z, False
        else:
            p, z, proven = -1, -1, False
        period = p if p > 0 else None
        preperiod = self.count - p - z if p > 0 else None
        proof_length = self.needed_length(p, z) if p > 0 else None
        sparse = self.sparse_active and not self.dense
        last_rare = int(self.rare_pos[self.nrare - 1]) if sparse and self.nrare else None
        return GrundySequence(
            rule=self.rule,
            values=values,
            period=period,
            preperiod=preperiod,
            proven=proven,
            proof_length=proof_length,
            rare_mask=self.mask if sparse else None,
            rare_positional=self.positional if sparse else False,
            rare_count=self.nrare + self._heap0_rare() if sparse else None,
            last_rare=last_rare,
            stopped=stopped,
        )


def _sequence_with_mask(
    rule: TakeAndBreak, n: int, mask: int, *, positional: bool = False
) -> GrundySequence:
    """The sparse method from heap 1 with a fixed mask (for tests: any mask gives exact values)."""
    engine = _Engine(rule, _check_count(n), "sparse", mask=mask, positional=positional)
    engine.extend(engine.capacity, None, engine.capacity)
    return engine.result()
