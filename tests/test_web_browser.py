"""The web app in a real browser (Debian's Chromium through Playwright) against a real server:
setting up and finishing games, bots, Kayles, analysis, two browsers with a spectator, a server
restart in the middle of a game, a phone-sized screen with a huge pile.

Screenshots of the main screens go to ``test-output/screenshots/``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from webtools import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS, ServerProcess

if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        pytest.fail(
            f"{CHROMIUM} is missing: scripts/test installs Debian's chromium", pytrace=False
        )
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Browser, Page, expect, sync_playwright

ANIMATION_MS = 60
TIMEOUT_MS = 60_000
"""How long an expectation may take to come true: reached only when a test fails (a busy machine
can be slow to start the browser or the server)."""
expect.set_options(timeout=TIMEOUT_MS)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(Path(tmp_path_factory.mktemp("browser")) / "web.db").start()
    yield proc
    proc.stop()


def new_page(browser: Browser, width: int = 1280, height: int = 900, **kw: Any) -> Page:
    context = browser.new_context(viewport={"width": width, "height": height}, **kw)
    context.set_default_timeout(TIMEOUT_MS)
    context.add_init_script(f"localStorage.setItem('nimlab.anim', '{ANIMATION_MS}')")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.js_errors = errors  # type: ignore[attr-defined]
    return page


def shot(page: Page, name: str, *, full: bool = True) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full)


def no_js_errors(page: Page) -> None:
    assert page.js_errors == []  # type: ignore[attr-defined]


# -- the setup screen, as a person uses it --------------------------------------------------------


def set_up(
    page: Page,
    base: str,
    *,
    players: list[tuple[str, str]],
    piles: list[int],
    misere: bool = False,
    game: str = "nim",
    error: int = 0,
    elsewhere: tuple[str, ...] = (),
    screenshot: str | None = None,
) -> None:
    """Fill in the setup screen and press Play. ``players`` are (name, kind) in turn order."""
    page.goto(base + "/")
    remove = page.locator(".players button[aria-label^='Remove']")
    while remove.count():
        remove.first.click()
    expect(page.locator("#play")).to_be_disabled()
    expect(page.locator("#setup-reason")).to_contain_text("a game needs at least two players")
    for name, kind in players:
        if kind == "human":
            page.fill("#human-name", name)
            page.click("#add-human")
        else:
            page.fill("#bot-name", name)
            page.select_option("#bot-kind", kind)
            if error:
                page.locator("#bot-error").evaluate(
                    f"(el) => {{ el.value = '{error}'; el.dispatchEvent(new Event('input')); }}"
                )
            page.click("#add-bot")
    for name in elsewhere:
        row = page.locator(".players li", has_text=name)
        row.locator("input[type=checkbox]").uncheck()
    page.select_option("#game-kind", game)
    pile_remove = page.locator(
        ".chips button[aria-label^='Remove pile'], .chips button[aria-label^='Remove row']"
    )
    while pile_remove.count():
        pile_remove.first.click()
    expect(page.locator("#setup-reason")).to_contain_text("a game needs at least one pile")
    for n in piles:
        page.fill("#pile-size", str(n))
        page.click("#add-pile")
    page.check("input[value=misere]" if misere else "input[value=normal]")
    expect(page.locator("#play")).to_be_enabled()
    if screenshot:
        shot(page, screenshot)
    page.click("#play")
    page.wait_for_url(re.compile(r"/game/[\w-]+$"))
    expect(page.locator("#status")).not_to_have_text("Loading…")


def wait_ready(page: Page) -> None:
    """Until it is this page's turn, a dialog is open, or the game is over."""
    page.wait_for_function(
        """() => document.querySelector('#board.live') || document.querySelector('#dialog[open]')
                 || /wins!$/.test(document.querySelector('#status').textContent)"""
    )


def close_dialog(page: Page) -> str:
    """Close the open dialog (keeping the page on the game); returns its text."""
    dialog = page.locator("#dialog[open]")
    text = dialog.inner_text()
    title = dialog.locator("h2").inner_text()
    look = dialog.get_by_role("button", name="Look at the board")
    if look.count():
        look.click()
    else:
        dialog.get_by_role("button", name="Ok").click()
    page.wait_for_function(  # closed, or the next dialog (a victory after an elimination)
        "(title) => !document.querySelector('#dialog[open]')"
        " || document.querySelector('#dialog[open] h2').textContent !== title",
        arg=title,
    )
    return text


def take(page: Page, pile: int, count: int) -> None:
    """Click the matches of a pile (the count-th from the end takes that many) and Finish."""
    matches = page.locator(f"#board .pile[data-pile='{pile}'] .match")
    total = matches.count()
    played = page.locator("#log li").count()
    matches.nth(total - count).click()
    expect(page.locator("#selection")).to_contain_text(f"taking {count} from pile {pile}")
    page.click("#finish")
    wait_for_moves(page, played + 1)


def wait_for_moves(page: Page, count: int) -> None:
    page.wait_for_function("(n) => document.querySelectorAll('#log li').length >= n", arg=count)


def first_nonempty(page: Page) -> int:
    piles = page.locator("#board .pile")
    for i in range(piles.count()):
        if piles.nth(i).locator(".match").count():
            return i + 1
    raise AssertionError("no pile has matches")


def is_over(page: Page) -> bool:
    return bool(re.search(r"wins!$", page.inner_text("#status")))


# -- the tests ------------------------------------------------------------------------------------


def test_three_player_misere_game_with_elimination(browser: Browser, server: Any) -> None:
    page = new_page(browser)
    page.goto(server.url + "/")
    page.click("#add-defaults")
    expect(page.locator(".chips .chip", has_text="[1,1,2,2]")).to_have_count(1)
    page.locator("button[aria-label='Remove end position [1,1,2,2]']").click()
    page.fill("#end-text", "two, two")
    page.click("#add-end")
    expect(page.locator("#setup-reason")).to_contain_text("has no numbers")
    expect(page.locator("#play")).to_be_disabled()
    page.locator("button[aria-label='Remove end position two, two']").click()
    for label in ("[2,2,2]", "[1,2,3]"):
        page.locator(f"button[aria-label='Remove end position {label}']").click()
    set_up(
        page,
        server.url,
        players=[("Ann", "human"), ("Bob", "human"), ("Cy", "random")],
        piles=[1, 1, 1],
        misere=True,
        error=20,
        screenshot="setup",
    )
    expect(page.locator("#rules")).to_contain_text("misère")
    expect(page.locator("#seats li")).to_have_text(
        [re.compile("^Ann"), re.compile("^Bob"), re.compile(r"^Cy \(random bot, 20% errors\)")]
    )
    shot(page, "game-three-players")
    take(page, 1, 1)  # Ann
    wait_ready(page)
    expect(page.locator("#status")).to_have_text("Bob's turn!")
    take(page, 2, 1)  # Bob; Cy has to take the last match
    expect(page.locator("#dialog[open]")).to_contain_text("Cy was eliminated!")
    expect(page.locator("#dialog[open]")).to_contain_text(
        "Round 2: Ann and Bob play on from the start position."
    )
    shot(page, "elimination", full=False)
    close_dialog(page)
    expect(page.locator("#status")).to_have_text("Ann's turn!")
    expect(page.locator("#board .match")).to_have_count(3)
    take(page, 1, 1)  # Ann
    take(page, 2, 1)  # Bob
    take(page, 3, 1)  # Ann takes the last: eliminated, Bob wins
    expect(page.locator("#dialog[open]")).to_contain_text("Ann was eliminated!")
    close_dialog(page)
    expect(page.locator("#dialog[open] h2")).to_have_text("Bob wins!")
    shot(page, "victory", full=False)
    close_dialog(page)
    expect(page.locator("#seats li.out")).to_have_count(2)
    expect(page.locator("#log li")).to_have_count(6)
    page.get_by_role("link", name=re.compile(r"Replay game #\d+")).click()
    expect(page.locator("#frame-text")).to_contain_text("Ann was eliminated! Bob wins!")
    page.keyboard.press("Home")
    expect(page.locator("#frame-text")).to_have_text("Start")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#frame-text")).to_contain_text("Move 1: Ann took 1 from pile 1")
    no_js_errors(page)


def test_a_game_against_the_perfect_bot(browser: Browser, server: Any) -> None:
    page = new_page(browser)
    set_up(page, server.url, players=[("Ann", "human"), ("Hal", "perfect")], piles=[3, 4, 5])
    shot(page, "game-start")
    keyboard = True
    while not is_over(page):
        wait_ready(page)
        if page.locator("#dialog[open]").count():
            close_dialog(page)
            continue
        if is_over(page):
            break
        pile = first_nonempty(page)
        played = page.locator("#log li").count()
        if keyboard:  # Tab to a pile, an arrow key chooses how many, Enter finishes
            page.focus(f"#board .pile[data-pile='{pile}']")
            page.keyboard.press("ArrowRight")
            expect(page.locator("#selection")).to_contain_text(f"taking 1 from pile {pile}")
            page.keyboard.press("Enter")
        else:
            take(page, pile, 1)
        keyboard = not keyboard
        wait_for_moves(page, played + 1)
        if played == 0:
            shot(page, "game-bot-replied")
    expect(page.locator("#status")).to_have_text("Hal wins!")
    texts = page.locator("#log li").all_inner_texts()
    assert any(re.match(r"Hal took \d+ from pile \d", t) for t in texts)
    assert texts[-1].endswith("Hal wins!")
    no_js_errors(page)


def test_a_kayles_game(browser: Browser, server: Any) -> None:
    page = new_page(browser)
    set_up(
        page,
        server.url,
        players=[("Ann", "human"), ("Kay", "perfect")],
        piles=[4, 3],
        game="kayles",
    )
    expect(page.locator("#rules")).to_contain_text("Kayles (octal 0.77)")
    expect(page.locator("#board .stone")).to_have_count(7)
    # two adjacent stones: click the link between them
    page.locator("#board .stones[data-pile='1'] .link.can").nth(1).click()
    expect(page.locator("#selection")).to_contain_text("taking stones 2-3 of row 1")
    shot(page, "kayles")
    page.click("#finish")
    expect(page.locator("#log li").first).to_have_text("Ann took stones 2-3 from row 1")
    while not is_over(page):
        wait_ready(page)
        if page.locator("#dialog[open]").count():
            close_dialog(page)
            continue
        if is_over(page):
            break
        played = page.locator("#log li").count()
        page.locator("#board .stone").first.click()  # one stone
        expect(page.locator("#selection")).to_contain_text("taking stone")
        page.click("#finish")
        wait_for_moves(page, played + 1)
    assert page.inner_text("#status") in ("Ann wins!", "Kay wins!")
    assert any("Kay took stone" in t for t in page.locator("#log li").all_inner_texts())
    no_js_errors(page)


def test_the_analysis_toggle_hint_and_value_history(browser: Browser, server: Any) -> None:
    page = new_page(browser, height=1000)
    set_up(page, server.url, players=[("Ann", "human"), ("Hal", "perfect")], piles=[3, 4, 5])
    page.click("#learn summary")
    page.check("#show-values")
    # 12 legal moves; only taking 2 from pile 1 wins (it leaves nim-sum 0)
    expect(page.locator("#board .vmark")).to_have_count(12)
    expect(page.locator("#board .vmark.win")).to_have_count(1)
    win = page.locator("#board .pile[data-pile='1'] .match").nth(1)
    expect(win.locator(".vmark.win")).to_have_count(1)
    expect(page.locator("#verdict")).to_contain_text("N-position: Ann (to move) wins")
    expect(page.locator("pre.nimsum")).to_contain_text("nim-sum")
    expect(page.locator("pre.nimsum")).to_contain_text("3 = 011")
    page.click("#hint")
    expect(page.locator("#hint-out")).to_contain_text("Take 2 from pile 1")
    expect(page.locator("#selection")).to_contain_text("taking 2 from pile 1 — a winning move")
    shot(page, "analysis")
    page.click("#reset")
    take(page, 3, 5)  # a mistake: Hal can now win
    expect(page.locator("#value-history li").nth(1)).to_contain_text("a mistake")
    expect(page.locator("#value-history li").nth(2)).to_contain_text("Hal is winning")
    expect(page.locator("#verdict")).to_contain_text("P-position")
    expect(page.locator("#board .vmark.win")).to_have_count(0)
    page.uncheck("#show-values")
    expect(page.locator("#board .vmark")).to_have_count(0)
    no_js_errors(page)


def test_two_browsers_and_a_spectator(browser: Browser, server: Any) -> None:
    ann = new_page(browser)
    set_up(
        ann,
        server.url,
        players=[("Ann", "human"), ("Bob", "human")],
        piles=[3, 4],
        elsewhere=("Bob",),
    )
    ann.click("#share summary")
    bob_link = ann.locator("input.seat-link[data-seat='1']").input_value()
    watch_link = ann.locator("#watch-link").input_value()
    assert "token=" in bob_link and "token=" not in watch_link
    bob = new_page(browser, width=390, height=844, is_mobile=True, has_touch=True)
    bob.goto(bob_link)
    expect(bob.locator("#status")).to_have_text("Ann's turn!")
    assert "token" not in bob.url  # the token is kept, not shown
    expect(bob.locator("#selection")).to_have_text("Waiting for Ann…")
    watcher = new_page(browser)
    watcher.goto(watch_link)
    expect(watcher.locator("#selection")).to_have_text("You are watching this game.")
    expect(ann.locator("#board.live")).to_have_count(1)

    take(ann, 1, 2)
    for page in (ann, bob, watcher):
        expect(page.locator("#log li")).to_have_text(["Ann took 2 from pile 1"])
    expect(bob.locator("#status")).to_have_text("Bob's turn!")
    expect(bob.locator("#board.live")).to_have_count(1)
    expect(ann.locator("#board.live")).to_have_count(0)
    expect(ann.locator("#selection")).to_have_text("Waiting for Bob…")
    expect(watcher.locator("#board.live")).to_have_count(0)
    expect(watcher.locator("#finish")).to_be_hidden()
    shot(bob, "phone-second-player")

    take(bob, 2, 4)
    for page in (ann, bob, watcher):
        expect(page.locator("#log li")).to_have_text(
            ["Ann took 2 from pile 1", "Bob took 4 from pile 2"]
        )
    shot(watcher, "spectator")
    take(ann, 1, 1)
    for page in (ann, bob, watcher):
        expect(page.locator("#status")).to_have_text("Ann wins!")
    for page in (ann, bob):
        close_dialog(page)
        no_js_errors(page)


def test_a_server_restart_in_the_middle_of_a_game(browser: Browser, tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "restart.db").start()
    try:
        page = new_page(browser)
        set_up(page, server.url, players=[("Ann", "human"), ("Hal", "perfect")], piles=[3, 4, 5])
        take(page, 3, 1)
        expect(page.locator("#log li")).to_have_count(2)  # Ann's move and Hal's reply
        board = page.locator("#board").inner_text()
        game_url = page.url
        server.kill()  # no clean shutdown
        server.start()
        page.goto(game_url)
        expect(page.locator("#log li")).to_have_count(2)
        assert page.locator("#board").inner_text() == board
        expect(page.locator("#status")).to_have_text("Ann's turn!")
        take(page, first_nonempty(page), 1)
        expect(page.locator("#log li")).to_have_count(4)
        no_js_errors(page)
    finally:
        server.stop()


def test_a_phone_screen_and_a_huge_pile(browser: Browser, server: Any) -> None:
    page = new_page(browser, width=390, height=844, is_mobile=True, has_touch=True)
    set_up(page, server.url, players=[("Ann", "human"), ("Hal", "perfect")], piles=[1_000_000, 5])
    expect(page.locator("#board .big-number")).to_have_text("1,000,000")
    assert page.locator("#board *").count() < 100  # a number and a small drawing
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, "the page must not scroll sideways on a phone"
    shot(page, "phone-huge-pile")
    page.fill("#board .pile[data-pile='1'] input", "999,999")
    page.press("#board .pile[data-pile='1'] input", "Enter")
    expect(page.locator("#log li").first).to_have_text("Ann took 999,999 from pile 1")
    expect(page.locator("#log li")).to_have_count(2)
    no_js_errors(page)


def test_the_registry_pages(browser: Browser, server: Any) -> None:
    page = new_page(browser)
    page.goto(server.url + "/players")
    page.fill("#reg-username", "lee")
    page.fill("#reg-given", "Bruce")
    page.fill("#reg-family", "Lee")
    page.click("button:has-text('Register')")
    expect(page.locator("#players-table")).to_contain_text("@lee")
    page.fill("#reg-username", "lee")
    page.fill("#reg-given", "B")
    page.fill("#reg-family", "L")
    page.click("button:has-text('Register')")
    expect(page.locator("#players-error")).to_have_text("player 'lee' already exists")
    page.click("nav >> text=Rankings")
    expect(page.locator("#rankings-table")).to_contain_text("Bruce Lee")
    page.click("nav >> text=History")
    expect(page.locator("#history-table")).to_be_visible()
    shot(page, "history")
    no_js_errors(page)
