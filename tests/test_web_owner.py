"""One owner of a game's changes (docs/architecture.md): in the web app, only
:class:`nimlab.web.owner.GameOwner` plays or takes back a game's moves and writes what a copy of a
game says about the database (its stored version, its stored moves, its end). The other modules
read a game and ask the owner. A static check of the source: it fails when a change is made
elsewhere."""

from __future__ import annotations

import ast
from pathlib import Path

import nimlab.web

WEB = Path(nimlab.web.__file__).parent

OWNED = {"stored", "saved", "saved_as", "ended", "ended_winner", "finishing", "takebacks"}
"""The fields of a LiveGame that only the owner sets (the constructor aside)."""

CHANGES = {"push", "pop", "play_recorded", "undo_for"}
"""A Game's methods that change its moves."""

COPIES = {"analysis_views.py"}
"""Modules that change games of their own (copies, for an analysis), never a game in play."""


def _changes(tree: ast.AST) -> list[str]:
    """Each change of a game's moves or of an owned field in ``tree``, in the order of lines."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Attribute) and t.attr in OWNED and not _is_self(t.value):
                found.append((t.lineno, f"line {t.lineno}: sets .{t.attr}"))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in CHANGES
            and _names_a_game(node.func.value)
        ):
            found.append((node.lineno, f"line {node.lineno}: calls .{node.func.attr}()"))
    return [text for _, text in sorted(found)]


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _names_a_game(node: ast.expr) -> bool:
    """``game`` or ``something.game``."""
    return (isinstance(node, ast.Name) and node.id == "game") or (
        isinstance(node, ast.Attribute) and node.attr == "game"
    )


def test_only_the_owner_changes_a_game() -> None:
    modules = sorted(p for p in WEB.glob("*.py") if p.name not in {"owner.py", *COPIES})
    assert {"live.py", "moves.py", "lifecycle.py", "bots_driver.py"} <= {p.name for p in modules}
    changes = {p.name: _changes(ast.parse(p.read_text())) for p in modules}
    assert {name: found for name, found in changes.items() if found} == {}


def test_the_check_sees_a_change() -> None:
    """The check itself: it finds each kind of change it looks for."""
    source = "lg.stored += 1\nlg.game.push(m)\ngame.pop()\nlg.ended = 'x'\nself.saved = 0\n"
    assert _changes(ast.parse(source)) == [
        "line 1: sets .stored",
        "line 2: calls .push()",
        "line 3: calls .pop()",
        "line 4: sets .ended",
    ]
