"""Players and bot specs: who sits at the table, as values with a text form that round-trips.

This module is light on purpose (no bots, no analysis, no NumPy): storage and the interfaces read
player names and bot specs without pulling in the engine.

>>> p = Player.parse("bot:perfect:Hal:error=20")
>>> p.name, str(p.bot), str(p)
('Hal', 'perfect:error=20', 'bot:perfect:Hal:error=20')
>>> Player.parse(str(p)) == p
True
>>> check_name("  Ａnn   Lee ")          # full-width letters and runs of spaces are normalised
'Ann Lee'
>>> [p.name for p in unique_players(["bot:perfect", "bot:perfect", "human:Ann"])]
['Perfect bot 1', 'Perfect bot 2', 'Ann']

Name rules: after Unicode NFKC normalisation and collapsing runs of white space, a name has 1 to
:data:`MAX_NAME` printable characters (spaces allowed), no colon (it separates the parts of a
spec) and does not start with ``@`` (that marks a registered player on the command line).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache

from nimlab.core.errors import PlayerError

__all__ = [
    "BOT_CHOICES",
    "BOT_KINDS",
    "BOT_TITLES",
    "DEFAULT_HUMAN",
    "MAX_LOOKAHEAD",
    "MAX_NAME",
    "BotSpec",
    "Player",
    "check_name",
    "name_key",
    "normalize_text",
    "parse_bot",
    "player_from",
    "unique_players",
]

BOT_KINDS = ("random", "classic", "lookahead", "perfect")
"""The bot kinds, as written in specs."""

BOT_TITLES: dict[str, str] = {
    "perfect": "perfect",
    "classic": "classic (textbook)",
    "lookahead": "look-ahead",
    "random": "random",
}
"""Each bot kind for people, strongest first (the order menus show them in)."""

MAX_LOOKAHEAD = 12
"""The deepest look-ahead a ``lookahead:D`` bot may search."""

BOT_CHOICES = "random, classic, lookahead:D or perfect"
"""The bot kinds as help texts list them."""

MAX_NAME = 40
"""The longest player name, in characters (after normalisation)."""

DEFAULT_HUMAN = "You"
"""The name of a human player given without one."""

_NAME_RULE = (
    f"use 1 to {MAX_NAME} printable characters (spaces allowed), no colon, not starting with @"
)


def normalize_text(text: str) -> str:
    """``text`` in Unicode NFKC form with surrounding white space removed and inner runs of white
    space collapsed to one space: ``"Ａnn  Lee"`` and ``"Ann Lee"`` read the same. O(len)."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def name_key(name: str) -> str:
    """The form under which two names count as the same person: normalised and case-folded
    (``"ＡNN"``, ``"ann"`` and ``"Ann"`` share one key)."""
    return normalize_text(name).casefold()


ZWJ = "\u200d"
"""The zero-width joiner: it joins emoji into one (👩‍👩‍👧), printed though Unicode files it as a
format character."""


def printable_text(text: str) -> bool:
    """Whether ``text`` is printable, zero-width joiners between two characters included (emoji
    sequences like ``👩‍👩‍👧``); any other control or format character is not. O(len)."""
    if text.startswith(ZWJ) or text.endswith(ZWJ) or ZWJ * 2 in text:
        return False
    return text.replace(ZWJ, "").isprintable()


def quoted(text: str) -> str:
    """``text`` in double quotes for a message, as a person reads it: printable characters (and
    joiners) as they are, any other escaped (``"tab\\x07bell"``). O(len)."""
    return '"' + "".join(c if c.isprintable() or c == ZWJ else repr(c)[1:-1] for c in text) + '"'


def check_name(name: str) -> str:
    """A player name as it is kept: normalised (see :func:`normalize_text`) and checked.
    Raises :class:`PlayerError` saying what is allowed."""
    text = normalize_text(name)
    if not text or len(text) > MAX_NAME or not printable_text(text) or ":" in text:
        raise PlayerError(f"player name {quoted(name)}: {_NAME_RULE}")
    if text.startswith("@"):
        raise PlayerError(
            f"player name {quoted(name)}: @ at the start marks a registered player (@username); "
            f"{_NAME_RULE}"
        )
    return text


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A bot kind with its settings; ``str`` gives the spec text back."""

    kind: str
    depth: int = 0
    error: float = 0.0

    def __str__(self) -> str:
        text = f"lookahead:{self.depth}" if self.kind == "lookahead" else self.kind
        if self.error:
            text += f":error={self.error:g}"
        return text

    @property
    def label(self) -> str:
        """For people: ``"perfect bot, 20% errors"``."""
        base = f"lookahead {self.depth}" if self.kind == "lookahead" else self.kind
        return f"{base} bot" + (f", {self.error:g}% errors" if self.error else "")


def parse_bot(text: str) -> BotSpec:
    """Read ``KIND[:D][:error=R]``: KIND is random, classic, lookahead (with depth D, default 2)
    or perfect; R is a percentage 0-100. Raises :class:`PlayerError`.

    >>> parse_bot("lookahead:3:error=5")
    BotSpec(kind='lookahead', depth=3, error=5.0)
    """
    if not isinstance(text, str):
        raise PlayerError(
            f"a bot is text like 'perfect' or 'lookahead:3', not {type(text).__name__}"
        )
    parts = [p for p in text.strip().lower().split(":") if p]
    if not parts or parts[0] not in BOT_KINDS:
        raise PlayerError(
            f"unknown bot {text!r}: choose random, classic, "
            f"lookahead:D (D = 1-{MAX_LOOKAHEAD}) or perfect"
        )
    kind, depth, error = parts[0], 0, 0.0
    rest = parts[1:]
    if kind == "lookahead":
        depth = 2
        if rest and rest[0].isdigit():
            depth = int(rest.pop(0))
        if not 1 <= depth <= MAX_LOOKAHEAD:
            raise PlayerError(f"lookahead depth {depth}: choose 1 to {MAX_LOOKAHEAD}")
    for part in rest:
        m = re.fullmatch(r"error=(\d+(?:\.\d+)?)%?", part)
        if not m:
            raise PlayerError(f"unknown bot setting {part!r}: the only setting is error=R (0-100)")
        error = float(m.group(1))
        if not 0 <= error <= 100:
            raise PlayerError(f"error rate {error:g}: choose 0 to 100 (percent)")
    return BotSpec(kind, depth, error)


@dataclass(frozen=True, slots=True)
class Player:
    """A seat at the table: a human, or a bot with its spec. ``str`` gives the spec text."""

    name: str
    bot: BotSpec | None = None

    @property
    def is_bot(self) -> bool:
        return self.bot is not None

    def __repr__(self) -> str:
        """``Player.parse('bot:perfect:Hal')``: the spec, which reads back."""
        return f"Player.parse({str(self)!r})"

    def __str__(self) -> str:
        if self.bot is None:
            return f"human:{self.name}"
        spec = str(self.bot).split(":error=")
        text = f"bot:{spec[0]}:{self.name}"
        return text + (f":error={spec[1]}" if len(spec) > 1 else "")

    @classmethod
    def human(cls, name: str) -> Player:
        """A human with a checked name (:func:`check_name`)."""
        return cls(check_name(name))

    @classmethod
    def parse(cls, text: str) -> Player:
        """Read ``human:NAME`` or ``bot:KIND[:D][:NAME][:error=R]`` (e.g.
        ``bot:perfect:Hal:error=20``, ``bot:lookahead:3``). Raises :class:`PlayerError`. The
        players read last are remembered (1,024 texts; a player is immutable)."""
        if not isinstance(text, str):
            raise PlayerError(
                f"a player is text like 'human:Ann' or 'bot:perfect:Hal', not {type(text).__name__}"
            )
        return _parsed_player(text)

    @classmethod
    def _read(cls, text: str) -> Player:
        raw = text.strip()
        kind, _, rest = raw.partition(":")
        kind = kind.lower()
        if kind == "human":
            return cls(check_name(rest) if rest.strip() else DEFAULT_HUMAN)
        if kind != "bot":
            raise PlayerError(
                f"player {text!r}: write human:NAME or bot:KIND[:NAME] "
                "(KIND random, classic, lookahead:D, perfect; e.g. bot:perfect:Hal:error=20)"
            )
        parts = [p for p in rest.split(":") if p.strip()]
        if not parts:
            raise PlayerError("bot player needs a kind: random, classic, lookahead:D or perfect")
        spec_parts = [parts[0]]
        names = []
        i = 1
        if parts[0].lower() == "lookahead" and len(parts) > 1 and parts[1].isdigit():
            spec_parts.append(parts[1])
            i = 2
        for p in parts[i:]:
            if re.fullmatch(r"(?i)error=.*", p.strip()):
                spec_parts.append(p.strip())
            else:
                names.append(p)
        if len(names) > 1:
            raise PlayerError(f"player {text!r} has more than one name: {', '.join(names)}")
        spec = parse_bot(":".join(spec_parts))
        name = names[0] if names else f"{spec.kind.capitalize()} bot"
        return cls(check_name(name), spec)


@lru_cache(maxsize=1024)
def _parsed_player(text: str) -> Player:
    return Player._read(text)


def player_from(
    kind: str, name: str = "", *, depth: int | None = None, error: float = 0.0
) -> Player:
    """A player from a form's fields: ``kind`` is ``human`` or a bot kind (:data:`BOT_KINDS`),
    ``depth`` the look-ahead depth, ``error`` the bot's error rate in percent; an empty name
    gives a bot its default name ("Perfect bot") and a human :data:`DEFAULT_HUMAN`. Raises
    :class:`PlayerError`.

    >>> str(player_from("lookahead", "Deep", depth=4, error=10))
    'bot:lookahead:4:Deep:error=10'
    """
    kind = kind.strip().lower()
    if kind == "human":
        return Player(check_name(name) if name.strip() else DEFAULT_HUMAN)
    spec = kind
    if kind == "lookahead" and depth is not None:
        spec += f":{depth}"
    if error:
        spec += f":error={error:g}"
    bot = parse_bot(spec)
    if not name.strip():
        return Player(f"{bot.kind.capitalize()} bot", bot)
    return Player(check_name(name), bot)


def unique_players(players: Iterable[Player | str]) -> tuple[Player, ...]:
    """Players from specs, with repeated names numbered ("Perfect bot 1", "Perfect bot 2").
    Names that differ only in case or Unicode form count as repeated. O(n)."""
    if isinstance(players, str) or not isinstance(players, Iterable):
        raise PlayerError(
            "players are a list like ['human:Ann', 'bot:perfect:Hal'], not "
            + (f"the text {players[:40]!r}" if isinstance(players, str) else type(players).__name__)
        )
    parsed = [p if isinstance(p, Player) else Player.parse(p) for p in players]
    counts: dict[str, int] = {}
    for p in parsed:
        counts[name_key(p.name)] = counts.get(name_key(p.name), 0) + 1
    seen: dict[str, int] = {}
    out = []
    for p in parsed:
        key = name_key(p.name)
        if counts[key] > 1:
            seen[key] = seen.get(key, 0) + 1
            p = replace(p, name=f"{p.name} {seen[key]}")
        out.append(p)
    return tuple(out)
