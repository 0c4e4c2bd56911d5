"""Games in play shared by several processes: the version fence on every change, and the change
feed (announced in the change's own transaction: a change that is not committed is never
announced; a reader that missed announcements is told to read everything again)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from nimlab.core.game import Game
from nimlab.storage import Change, ChangeFeed, Changes, StaleGameError, Store
from nimlab.storage import inplay as inplay_module
from processes import PATIENCE


def _game() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A record with no moves and the moves of a short game of Nim (heaps 3 and 3)."""
    game = Game("nim", [3, 3], ["human:Ann", "human:Bob"])
    begun = game.to_record()
    for text in ("1 1", "1 1", "2 1", "2 2", "1 1"):
        game.push(text)
    return begun, game.to_record()["moves"]


def _until(feed: ChangeFeed, last: Change) -> list[Change]:
    """The changes the feed tells up to ``last`` (a change known to be committed), so that
    what was never announced before it is known not to come: no waiting for a time."""
    seen: list[Change] = []
    deadline = time.monotonic() + PATIENCE
    while last not in seen:
        assert time.monotonic() < deadline, seen
        found = feed.wait(1.0)
        assert not found.resync
        seen += found.changes
    return seen


def test_every_change_is_fenced_by_the_version_it_was_made_from(database: str) -> None:
    begun, moves = _game()
    with Store.open(database) as store:
        store.add_live_game("g", begun, {})
        assert store.live_version("g") == 0 and store.live_version("nope") is None
        store.add_live_moves([("g", 1, moves[:1])], expect={"g": 0})
        # another process made its move from version 0 too: refused, nothing written
        with pytest.raises(StaleGameError, match=r"changed meanwhile \(version 1, not 0\)"):
            store.add_live_moves([("g", 2, moves[1:2])], expect={"g": 0})
        found = store.live_game_with_version("g")
        assert found is not None and found[1] == 1 and len(found[0][1]["moves"]) == 1
        store.add_live_moves([("g", 2, moves[1:3])], expect={"g": 1})  # two moves, one change
        assert store.live_version("g") == 2
        # a take-back is a change: a move made before it cannot land after it
        store.take_back_live_moves("g", 1, expect=2)
        with pytest.raises(StaleGameError):
            store.add_live_moves([("g", 2, moves[1:2])], expect={"g": 2})
        with pytest.raises(StaleGameError):
            store.take_back_live_moves("g", 0, expect=2)
        finished = Game.from_record({**begun, "moves": moves}).to_record()
        with pytest.raises(StaleGameError):
            store.finish_live_game("g", finished, expect=2)
        with pytest.raises(StaleGameError, match="no game in progress"):
            store.add_live_moves([("nope", 1, moves[:1])], expect={"nope": 0})
        # unfenced changes (a single process, the terminal's games) still count
        store.add_live_moves([("g", 2, moves[1:2])])
        assert store.live_version("g") == 4
        with pytest.raises(StaleGameError):
            store.finish_live_game("g", finished, expect=3)
        assert store.live_game("g") is not None
        store.finish_live_game("g", finished, expect=4)
        assert store.live_game("g") is None
        # another process that read the game at version 4 and finishes it, or adds a move, is
        # told the game changed (it reads the finished game and judges a retry as a retry)
        with pytest.raises(StaleGameError, match="no game in progress"):
            store.finish_live_game("g", finished, expect=4)
        with pytest.raises(StaleGameError, match="no game in progress"):
            store.add_live_moves([("g", 5, moves[4:5])], expect={"g": 4})


def test_the_feed_tells_committed_changes_in_order_and_never_a_rolled_back_one(
    database: str,
) -> None:
    begun, moves = _game()
    with Store.open(database) as store:
        store.add_live_game("a", begun, {})
        store.add_live_game("b", begun, {})
        store.add_live_game("marks", begun, {})
        store.add_live_moves([("a", 1, moves[:1])], expect={"a": 0})  # before the feed opens
        feed = ChangeFeed.open(database)
        mark = 0

        def marked() -> Change:
            """A change committed now, to read the feed up to."""
            nonlocal mark
            store.take_back_live_moves("marks", 0, expect=mark)
            mark += 1
            return Change("marks", mark)

        try:
            assert _until(feed, marked()) == [Change("marks", 1)]  # only changes after opening
            store.add_live_moves([("b", 1, moves[:2])], expect={"b": 0})
            store.add_live_moves([("a", 2, moves[1:2])], expect={"a": 1})
            want = [Change("b", 1), Change("a", 2), Change("marks", 2)]
            assert _until(feed, marked()) == want
            # a change whose transaction fails after writing is never announced
            with pytest.raises(RuntimeError), store.db.group():
                store.add_live_moves([("a", 3, moves[2:3])], expect={"a": 2})
                raise RuntimeError("the transaction fails after the move was written")
            assert store.live_version("a") == 2
            with pytest.raises(StaleGameError):  # refused by the fence: nothing announced
                store.add_live_moves([("b", 2, moves[2:3])], expect={"b": 0})
            # a group whose commit never happens announces nothing either
            store.db.begin_group()
            store.add_live_moves([("b", 3, moves[2:3])], expect={"b": 1})
            store.db.end_group(commit=False)
            # nor a savepoint undone inside a group that commits
            with store.db.group():
                with pytest.raises(RuntimeError), store.db.write():
                    store.add_live_moves([("a", 3, moves[2:3])], expect={"a": 2})
                    raise RuntimeError("undone")
                store.add_live_moves([("b", 3, moves[2:3])], expect={"b": 1})
            assert _until(feed, marked()) == [Change("b", 2), Change("marks", 3)]
            # finishing is a change too (the game leaves the games in play)
            finished = Game.from_record({**begun, "moves": moves}).to_record()
            store.finish_live_game("a", finished, expect=2)
            assert _until(feed, marked()) == [Change("a", 3), Change("marks", 4)]
        finally:
            feed.close()


def test_a_reader_that_missed_pruned_announcements_is_told_to_resync(tmp_path: Path) -> None:
    begun, moves = _game()
    db = tmp_path / "db"
    with Store.open(db) as store:
        store.add_live_game("a", begun, {})
        feed = ChangeFeed.open(db)
        try:
            store.add_live_moves([("a", 1, moves[:1])], expect={"a": 0})
            assert feed.wait(0).changes == (Change("a", 1),)
            store.add_live_moves([("a", 2, moves[1:2])], expect={"a": 1})
            store.add_live_moves([("a", 3, moves[2:3])], expect={"a": 2})
            # the oldest announcement this reader has not seen is pruned
            store.db.conn.execute("DELETE FROM live_changes WHERE version = 2")
            found = feed.wait(0)
            assert found.resync and found.changes == (Change("a", 3),)
            assert not feed.wait(0).resync
        finally:
            feed.close()
    assert inplay_module.CHANGES_KEPT >= 1024


def test_an_interrupted_wait_ends_without_changes_long_before_its_timeout(database: str) -> None:
    """A server that stops interrupts its feed's wait instead of waiting for its timeout."""
    Store.open(database).close()
    feed = ChangeFeed.open(database)
    found: list[Any] = []
    waiter = threading.Thread(target=lambda: found.append(feed.wait(10 * PATIENCE)))
    try:
        waiter.start()
        feed.interrupt()
        waiter.join(PATIENCE)  # the wait's own timeout is ten times longer
        assert not waiter.is_alive() and found == [Changes()]
        assert feed.wait(10 * PATIENCE) == Changes()  # and so does every later one
    finally:
        feed.interrupt()
        waiter.join(PATIENCE)
        feed.close()
