"""A census of octal games: every code up to a number of digits, each game's Grundy sequence
computed until its period is proven or its size or time runs out.

Which codes: ``0.d1 d2 .. dL`` for ``1 <= L <= digits`` with a non-zero last digit (a trailing 0
adds no move: 0.160 is 0.16), so ``8**digits - 1`` codes in all. No two of them have the same
moves: from a heap of ``n`` the digit ``d_k`` alone decides whether taking ``k`` may leave no
heap (``n = k``), one heap of ``n - k``, or two heaps adding up to ``n - k``.

Identity: two games are the same for play in any sum when their Grundy sequences are equal
(Sprague–Grundy). A proven row has the least preperiod ``n0`` and period ``p`` of its sequence,
and its first ``n0 + p`` values decide all the others, so proven rows with the same ``n0``,
``p`` and first ``n0 + p`` values are the same game: :func:`mark_identical` keeps the first
code and marks the others ``same_as`` it. Rows that are not proven are never merged (equal
values so far are no proof of equal games).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from typing import Any

from nimlab.theory.grundy import GrundyRun
from nimlab.theory.octal import TakeAndBreak

__all__ = ["CENSUS_FIELDS", "CensusRow", "census_codes", "census_row", "mark_identical"]

CENSUS_FIELDS = (
    "code",
    "period",
    "preperiod",
    "proven",
    "largest",
    "rare",
    "values",
    "seconds",
    "stopped",
    "same_as",
)
"""The columns of a census table, in order."""


@dataclass(frozen=True)
class CensusRow:
    """One game of a census.

    ``values`` is how far the computation went (``G(0) .. G(values - 1)``); ``period`` and
    ``preperiod`` are proven when ``proven`` is true, a guess otherwise (``None`` when none is
    seen). ``largest`` is the largest value computed, ``rare`` the number of rare heaps of the
    rare/common method (heap 0 included; ``None`` when the method was not used). ``stopped`` is
    ``"time"`` when the time per game ran out first. ``key`` identifies a proven sequence (see
    the module docstring); ``same_as`` names the first code with the same proven sequence.
    """

    code: str
    period: int | None
    preperiod: int | None
    proven: bool
    largest: int
    rare: int | None
    values: int
    seconds: float
    stopped: str | None = None
    same_as: str | None = None
    key: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The row's columns (:data:`CENSUS_FIELDS`) and its key, for JSON."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CensusRow:
        """The row :meth:`as_dict` gave. Raises ``KeyError``/``TypeError`` on a foreign dict."""
        return cls(**{name: data[name] for name in (*CENSUS_FIELDS, "key")})


def census_codes(digits: int) -> list[TakeAndBreak]:
    """Every octal game ``0.d1 .. dL`` with ``1 <= L <= digits`` and ``dL != 0``, shortest first.

    ``8**digits - 1`` games; O(that). Raises ``ValueError`` unless ``1 <= digits <= 6``.
    """
    if isinstance(digits, bool) or not isinstance(digits, int) or not 1 <= digits <= 6:
        raise ValueError(f"a census covers 1 to 6 code digits, got {digits!r}")
    return list(_codes(digits))


def _codes(digits: int) -> Iterator[TakeAndBreak]:
    for length in range(1, digits + 1):
        for head in itertools.product(range(8), repeat=length - 1):
            for last in range(1, 8):
                yield TakeAndBreak((*head, last))


def census_row(rule: TakeAndBreak, max_values: int, seconds: float | None) -> CensusRow:
    """Compute ``rule``'s sequence until its period is proven, ``max_values`` values are done
    or ``seconds`` of computing have passed. Cost: that of
    :func:`~nimlab.theory.grundy.grundy_sequence` with ``prove=True``."""
    run = GrundyRun(rule, max_values, prove=True, threads=1)  # the census fills the cores
    seq = run.run(seconds=seconds)
    key = None
    if seq.proven and seq.period is not None and seq.preperiod is not None:
        head = seq.values[: seq.preperiod + seq.period].astype("<u4").tobytes()
        digest = hashlib.sha256(head).hexdigest()[:32]
        key = f"{seq.preperiod}:{seq.period}:{digest}"
    return CensusRow(
        code=rule.code,
        period=seq.period,
        preperiod=seq.preperiod,
        proven=seq.proven,
        largest=int(seq.values.max()) if len(seq) else 0,
        rare=seq.rare_count,
        values=len(seq),
        seconds=round(run.seconds, 3),
        stopped=None if seq.proven else seq.stopped,
        key=key,
    )


def mark_identical(rows: Iterable[CensusRow]) -> list[CensusRow]:
    """The rows (in the order given) with ``same_as`` set on every proven row whose sequence
    equals that of an earlier proven row. O(rows)."""
    first: dict[str, str] = {}
    out = []
    for row in rows:
        same = None
        if row.key is not None:
            same = first.setdefault(row.key, row.code)
            if same == row.code:
                same = None
        out.append(replace(row, same_as=same))
    return out
