"""The game registry: every kind of game nimlab plays, one entry each.

A game is loaded by name and parameter, as in OpenSpiel's ``load_game(name, params)``; its text
form (``nim``, ``kayles``, ``octal:0.137``, ``subtraction:1-3``) round-trips and is the same on
the command line, in the web API, in rulesets and in game records:

>>> load_game("octal", "0.137").rule
TakeAndBreak(digits=(1, 3, 7), tail=0, d0=0, unequal=False)
>>> parse_game("octal:0.77").name            # a registered game is named by its entry
'kayles'
>>> parse_game("subtraction:3,1,2").title
'subtraction game S = {1-3}'
>>> parse_game("dawson").board, parse_game("nim").board
('rows', 'piles')
>>> [e.name for e in GAMES.values()]  # doctest: +NORMALIZE_WHITESPACE
['nim', 'kayles', 'dawson', 'octal', 'subtraction', 'lasker', 'grundys-game', 'wythoff',
 'moore', 'staircase', 'fibonacci']
>>> parse_game("wythoff").rules.heap_sum, parse_game("lasker").rules.heap_sum
(False, True)

Each :class:`GameEntry` says how its parameter is read and written into the game's rules (a
:class:`~nimlab.core.rules.Rules`: a :class:`~nimlab.theory.octal.TakeAndBreak` is wrapped as
:class:`~nimlab.core.rules.HeapRules`), and which of the engine's strategy families may answer
questions about it (:data:`STRATEGIES`; the engine still checks each strategy's own conditions,
e.g. no extra end positions). What a game supports (Grundy values, misère quotients, extra end
positions, more than two players) is asked of its :class:`GameKind`. The CLI's ``--game`` help,
the web API's ``/api/options`` and the web page's game menu are all built from :data:`GAMES`.

Adding a game is one :func:`register` call here with its rules (a
:class:`~nimlab.theory.octal.TakeAndBreak`, or a class of :mod:`nimlab.core.rules` that
implements the :class:`~nimlab.core.rules.Rules` protocol on its theory).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from nimlab.core.errors import RulesetError
from nimlab.core.rules import (
    BoardKind,
    FibonacciRules,
    MooreRules,
    Rules,
    StaircaseRules,
    WythoffRules,
    rules_of,
)
from nimlab.theory.octal import OctalCodeError, TakeAndBreak

__all__ = [
    "ALIASES",
    "GAMES",
    "GAME_CHOICES",
    "NIM",
    "NOT_OFFERED",
    "STRATEGIES",
    "BoardKind",
    "GameEntry",
    "GameKind",
    "game_choices",
    "load_game",
    "parse_game",
    "register",
]

STRATEGIES: dict[str, str] = {
    "nim-formula": "Bouton's nim-sum rule and its misère endgame (Nim only), O(n)",
    "grundy": "Sprague–Grundy: XOR of heap Grundy values (normal play, no extra end positions)",
    "misere-quotient": "misère quotients of take-and-break games that take at most a bounded "
    "number (misère play, no extra end positions; partial quotients only for the heaps they "
    "cover)",
    "dense-table": "a dense retrograde table (games that never split a heap)",
    "split-search": "exact search over sums of rows (games that split heaps)",
    "misere-tame": "Bouton's misère rule with Grundy values, for the games proven tame "
    "(Lasker's Nim; misère play, no extra end positions)",
    "search": "memoised exact search within a budget (every game)",
    "theory": "the game's own theorem (Wythoff's pairs, Moore's digits, Staircase Nim's odd "
    "steps, Fibonacci Nim's Zeckendorf terms) where it holds, else exact search",
}
"""The engine's strategy families, by the names entries use, with what each one needs."""


@dataclass(frozen=True, slots=True)
class GameEntry:
    """One kind of game in the registry.

    ``parse`` reads the parameter text (``""`` for games without a parameter) into the rules
    (a :class:`TakeAndBreak` or :class:`~nimlab.core.rules.Rules`), raising
    :class:`~nimlab.theory.octal.OctalCodeError` or :class:`RulesetError`;
    ``format`` writes a rule's parameter back in canonical form. ``board`` is ``None`` when it
    depends on the parameter (octal codes split heaps when a digit is 4-7). ``strategies`` lists
    the strategy families (keys of :data:`STRATEGIES`) that may apply to this kind.
    """

    name: str
    title: str
    summary: str
    parse: Callable[[str], TakeAndBreak | Rules]
    strategies: tuple[str, ...]
    parameter: str = ""
    example: str = ""
    format: Callable[[Any], str] | None = None
    aliases: tuple[str, ...] = ()
    board: BoardKind | None = "piles"
    kind_title: Callable[[Any], str] | None = None
    start: tuple[int, ...] = (3, 4, 5)
    """A start position to offer (a menu's default)."""
    notation: str = ""
    """The field's notation the rule is also known by: ``"octal"`` for octal games (their code,
    e.g. ``0.77``, is then their name in Grundy tables), ``""`` for none."""

    @property
    def text_form(self) -> str:
        """How the game is written: ``nim`` or ``octal:CODE``."""
        return f"{self.name}:{self.parameter}" if self.parameter else self.name

    @property
    def hint(self) -> str:
        """The text form with an example, for help texts: ``octal:CODE (e.g. octal:0.137)``."""
        if not self.parameter:
            return self.name
        return f"{self.text_form} (e.g. {self.name}:{self.example})"

    def load(self, parameter: str = "") -> GameKind:
        """This game with ``parameter`` (ignored text for games without one must be empty).
        Raises :class:`RulesetError` saying what is allowed."""
        if not self.parameter and parameter:
            raise RulesetError(f"{self.name} takes no parameter (got {parameter!r})")
        if self.parameter and not parameter.strip():
            raise RulesetError(f"{self.name} needs its {self.parameter}: {self.hint}")
        try:
            rules = rules_of(self.parse(parameter))
        except OctalCodeError as e:
            raise RulesetError(str(e)) from None
        for entry in GAMES.values():  # a rule with an entry of its own goes by that name
            if not entry.parameter and entry is not self and rules_of(entry.parse("")) == rules:
                return GameKind(entry.name, rules)
        if not self.parameter:
            return GameKind(self.name, rules)
        assert self.format is not None
        return GameKind(f"{self.name}:{self.format(_shape(rules))}", rules)


def _shape(rules: Rules) -> Any:
    """What an entry's ``format`` and ``kind_title`` are given: the take-and-break rule of a
    heap game, else the rules themselves."""
    return rules.heap_rule if rules.heap_rule is not None else rules


@dataclass(frozen=True)
class GameKind:
    """A loaded game: its text form (``nim``, ``kayles``, ``octal:CODE``, ``subtraction:SET``,
    ``moore:2``) and its rules. Equal rules give equal kinds (``octal:0.77`` is ``kayles``)."""

    name: str
    rules: Rules

    def __str__(self) -> str:
        return self.name

    @property
    def rule(self) -> TakeAndBreak:
        """The take-and-break rule of a heap game; raises :class:`RulesetError` for the
        others (their rules are :attr:`rules`)."""
        rule = self.rules.heap_rule
        if rule is None:
            raise RulesetError(
                f"{self.name} is not a take-and-break game on heaps: {self.rules.why_not_heaps()}"
            )
        return rule

    @property
    def is_heap_game(self) -> bool:
        """Whether the game is a take-and-break game on heaps (the engine's strategies,
        multi-player models and boards of piles or rows serve it)."""
        return self.rules.heap_rule is not None

    @property
    def grundy_support(self) -> str:
        """Why Grundy values and misère quotients do not apply to this game (``""`` when they
        do: its positions are sums of independent heaps of a take-and-break rule)."""
        if not self.rules.heap_sum:
            return f"{self.title}: {self.rules.why_not_heaps()}"
        if self.rules.heap_rule is None:
            return f"{self.title}: its heaps are not take-and-break heaps"
        return ""

    @property
    def quotient_support(self) -> str:
        """Why a misère quotient cannot be computed for this game (``""`` when it may be: for
        every take-and-break game but Nim, whose quotient is infinite and not needed; for
        rules no period can prove, such as Lasker's Nim and Grundy's game, the quotient of the
        heaps up to a bound)."""
        why = self.grundy_support
        if why:
            return why
        if self.rules.heap_rule is not None and self.rules.heap_rule.is_nim:
            return (
                "Nim: its misère quotient is infinite (no two heap sizes of 2 or more are "
                "equivalent in misère play); misère Nim is decided by Bouton's misère rule, which "
                "analyze --misere uses"
            )
        return ""

    @property
    def label(self) -> str:
        """The game in one word, as ``grundy`` and ``quotient`` print it (the ``game`` of their
        JSON) and take it back: the octal code of a game written in octal (``0.77`` for Kayles),
        else its name (``lasker``, ``grundys-game``, whose code ``4.0`` does not say that its
        splits leave unequal heaps)."""
        rule = self.rules.heap_rule
        if rule is not None and not rule.unequal and self.entry.notation == "octal":
            return rule.code
        return self.name

    @property
    def entry(self) -> GameEntry:
        """The registry entry this game belongs to."""
        return GAMES[self.name.partition(":")[0]]

    @property
    def parameter(self) -> str:
        """The parameter text (``"0.137"`` of ``octal:0.137``), ``""`` for none."""
        return self.name.partition(":")[2]

    @property
    def splits(self) -> bool:
        """Whether moves can split a heap (such games are shown as rows of stones)."""
        return self.rules.splits

    @property
    def board(self) -> BoardKind:
        """How the game is shown: ``"rows"`` of stones when moves split heaps, else ``"piles"``."""
        return self.rules.board

    @property
    def title(self) -> str:
        """A name for people, e.g. "Kayles (octal 0.77)"."""
        entry = self.entry
        return entry.kind_title(_shape(self.rules)) if entry.kind_title else entry.title

    @property
    def strategies(self) -> tuple[str, ...]:
        """The engine strategy families that may apply, given how the game is shown
        (``dense-table`` for games that never split a heap, ``split-search`` for the others)."""
        drop = "dense-table" if self.rules.splits else "split-search"
        return tuple(s for s in self.entry.strategies if s != drop)


GAMES: dict[str, GameEntry] = {}
"""The registry: entries by name, in the order menus show them."""

_NAMES: dict[str, str] = {}
"""Every name and alias (lower case) -> the entry's name."""


def register(entry: GameEntry) -> GameEntry:
    """Add a game kind to the registry. Raises :class:`ValueError` when its name or an alias is
    taken or it names an unknown strategy."""
    unknown = [s for s in entry.strategies if s not in STRATEGIES]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}: choose from {sorted(STRATEGIES)}")
    for name in (entry.name, *entry.aliases):
        if name.lower() in _NAMES or ":" in name:
            raise ValueError(f"game name {name!r} is taken or contains a colon")
    GAMES[entry.name] = entry
    for name in (entry.name, *entry.aliases):
        _NAMES[name.lower()] = entry.name
    return entry


def _format_set(takes: Iterable[int]) -> str:
    """``1,2,3,5`` -> ``1-3,5``."""
    parts: list[str] = []
    ks = sorted(takes)
    i = 0
    while i < len(ks):
        j = i
        while j + 1 < len(ks) and ks[j + 1] == ks[j] + 1:
            j += 1
        parts.append(str(ks[i]) if i == j else f"{ks[i]}-{ks[j]}")
        i = j + 1
    return ",".join(parts)


def _shown_set(rule: TakeAndBreak) -> str:
    """The set as people read it: ranges only for three or more numbers (``1,3,4``, ``1-3,5``)."""
    takes = rule.subtraction_set
    assert takes is not None
    return ",".join(
        part
        if "-" not in part or int(part.split("-")[1]) - int(part.split("-")[0]) >= 2
        else part.replace("-", ",")
        for part in _format_set(takes).split(",")
    )


def _subtraction_set(rule: TakeAndBreak) -> str:
    takes = rule.subtraction_set
    assert takes is not None
    return _format_set(takes)


def _fixed(rule: TakeAndBreak | Rules) -> Callable[[str], TakeAndBreak | Rules]:
    return lambda _: rule


_HEAP_STRATEGIES = tuple(s for s in STRATEGIES if s != "theory")

register(
    GameEntry(
        name="nim",
        title="Nim",
        summary="take any number of objects from one pile",
        parse=_fixed(TakeAndBreak.nim()),
        strategies=("nim-formula", "grundy", "dense-table", "search"),
    )
)
register(
    GameEntry(
        name="kayles",
        title="Kayles (octal 0.77)",
        summary="remove 1 or 2 adjacent stones from a row",
        parse=_fixed(TakeAndBreak.octal("0.77")),
        strategies=("grundy", "misere-quotient", "split-search", "search"),
        board="rows",
        notation="octal",
    )
)
register(
    GameEntry(
        name="dawson",
        title="Dawson's Kayles (octal 0.07)",
        summary="remove 2 adjacent stones from a row",
        parse=_fixed(TakeAndBreak.octal("0.07")),
        strategies=("grundy", "misere-quotient", "split-search", "search"),
        board="rows",
        notation="octal",
    )
)
register(
    GameEntry(
        name="octal",
        title="Another octal game",
        summary="take-and-break games in octal notation",
        parse=TakeAndBreak.octal,
        strategies=_HEAP_STRATEGIES[1:],
        parameter="CODE",
        example="0.137",
        format=lambda rule: rule.code,
        board=None,
        kind_title=lambda rule: f"octal game {rule.code}",
        notation="octal",
    )
)
register(
    GameEntry(
        name="subtraction",
        title="A subtraction game",
        summary="take k objects from one pile, k from a set S",
        parse=TakeAndBreak.parse_subtraction_set,
        strategies=("grundy", "misere-quotient", "dense-table", "search"),
        parameter="SET",
        example="1-3",
        format=_subtraction_set,
        kind_title=lambda rule: f"subtraction game S = {{{_shown_set(rule)}}}",
    )
)

register(
    GameEntry(
        name="lasker",
        title="Lasker's Nim",
        summary="take any number from one pile, or split a pile into two",
        parse=_fixed(TakeAndBreak((), tail=3, d0=4)),
        strategies=("grundy", "misere-tame", "split-search", "search"),
        aliases=("laskers-nim",),
        board="rows",
    )
)
register(
    GameEntry(
        name="grundys-game",
        title="Grundy's game",
        summary="split a pile into two unequal piles",
        parse=_fixed(TakeAndBreak((), d0=4, unequal=True)),
        strategies=("grundy", "misere-quotient", "split-search", "search"),
        aliases=("grundy's-game", "grundys"),
        board="rows",
    )
)
register(
    GameEntry(
        name="wythoff",
        title="Wythoff's game",
        summary="two piles: take from one, or the same from both",
        parse=_fixed(WythoffRules()),
        strategies=("theory", "search"),
        start=(3, 5),
    )
)


def _moore(text: str) -> MooreRules:
    if not text.strip().isdigit() or not 1 <= int(text) <= 16:
        raise RulesetError(
            f"moore:K takes K, the most piles one move may take from: 1 to 16 (got {text!r})"
        )
    return MooreRules(int(text))


register(
    GameEntry(
        name="moore",
        title="Moore's Nim",
        summary="take from at least one and at most K piles at once",
        parse=_moore,
        strategies=("theory", "search"),
        parameter="K",
        example="2",
        format=lambda rules: str(rules.k),
        kind_title=lambda rules: f"Moore's Nim (k = {rules.k})",
    )
)
register(
    GameEntry(
        name="staircase",
        title="Staircase Nim",
        summary="move coins from one step to the step below (steps listed from the ground up)",
        parse=_fixed(StaircaseRules()),
        strategies=("theory", "search"),
        start=(3, 1, 2),
    )
)
register(
    GameEntry(
        name="fibonacci",
        title="Fibonacci Nim",
        summary="one pile; take at most twice what the previous move took (not all at first)",
        parse=_fixed(FibonacciRules()),
        strategies=("theory", "search"),
        start=(10,),
    )
)

NIM = GAMES["nim"].load()

ALIASES: dict[str, str] = {"kayles": "0.77", "dawson": "0.07"}
"""Games with an octal code of their own (kept for older callers; the registry is the source)."""

NOT_OFFERED: dict[str, str] = {
    name: "Northcott's game is not offered to play: it is partisan (each player moves only "
    "their own checkers) and loopy (a checker may move back, so a game need not end), and the "
    "engine plays impartial games that end; its theory (Nim on the gaps) is in "
    "nimlab.theory.northcott"
    for name in ("northcott", "northcotts", "northcotts-game", "northcotts game")
}
"""Games people ask for that are not in the registry, with why (``load_game`` says so)."""

_BARE_OCTAL = re.compile(r"^\d*\.")  # 0.77, .07, and 0. (refused with the octal code hint)


def game_choices() -> str:
    """Every game as help texts list them: ``nim, kayles, ..., octal:CODE (e.g. octal:0.137)``."""
    return ", ".join(entry.hint for entry in GAMES.values())


GAME_CHOICES = game_choices()
""":func:`game_choices` as it is at import time (the built-in games)."""


def load_game(name: str, parameter: str | None = None) -> GameKind:
    """The game ``name`` (an entry's name or alias, case-insensitive) with ``parameter``, or,
    when ``parameter`` is ``None``, the parameter written after a colon in ``name``
    (``octal:0.137``). A bare octal code (``0.137``) is read as ``octal:0.137``. Raises
    :class:`RulesetError` saying what is allowed."""
    if not isinstance(name, str) or not isinstance(parameter, str | None):
        raise RulesetError(
            f"a game is named by text like 'kayles' or 'octal:0.137', not {type(name).__name__}"
        )
    text = name.strip().lower()
    if parameter is None:
        text, _, parameter = text.partition(":")
        if _BARE_OCTAL.match(text) and not parameter:
            text, parameter = "octal", text
    key = _NAMES.get(text.strip())
    if key is None:
        why = NOT_OFFERED.get(text.strip().replace("'", ""))
        if why:
            raise RulesetError(f"{why}; choose {game_choices()}")
        raise RulesetError(f"unknown game {name!r}: choose {game_choices()}")
    return GAMES[key].load(parameter.strip())


def parse_game(text: str) -> GameKind:
    """Read a game's text form: ``nim``, ``kayles``, ``dawson``, ``octal:0.137`` (or just
    ``0.137``), ``subtraction:1-3`` / ``subtraction:1,3,4``. Names are case-insensitive.

    Raises :class:`RulesetError` saying what is allowed.
    """
    return load_game(text)
