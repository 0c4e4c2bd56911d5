"""The web app in a real browser (Debian's Chromium through Playwright) against a real server:
setting up and finishing games, bots, Kayles, analysis, two browsers with a spectator, a server
restart in the middle of a game (the connection state, catching up, finished links), the seat
highlight and the keyboard focus around a bot's reply, seat colours apart from value colours, a
random first player, a watcher of bots who never falls behind, a phone-sized screen with a huge
pile, the selection rules
(only legal moves, on piles, subtraction sets and rows), the game's lifecycle (take back,
resign, abandon, delete, replay with values), the phone layout (tap targets, no sideways
scrolling) and accessibility (axe-core on every screen, desk and phone).

Screenshots of the screens the README and docs/web.md show go to ``test-output/screenshots/``.

Cheap by design: one browser and a few pages for the whole module (a new page costs a renderer
process), kept open from test to test; a page already on the app moves to another of its screens
the way its own links do (no reload), and no test sleeps: every wait is on a condition.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from webtools import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS, ServerProcess

if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        pytest.fail(
            f"{CHROMIUM} is missing: scripts/test installs Debian's chromium", pytrace=False
        )
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Browser, Page, expect, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

ANIMATION_MS = 20
TIMEOUT_MS = 60_000
"""How long an expectation may take to come true: reached only when a test fails (a busy machine
can be slow to start the browser or the server)."""
expect.set_options(timeout=TIMEOUT_MS)


@pytest.fixture(scope="module")
def spawned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The module's server, starting (it starts while the browser does). It lets one client
    start as many games as the module does (a person's limit is tested in test_abuse.py)."""
    db = Path(tmp_path_factory.mktemp("browser")) / "web.db"
    proc = ServerProcess(db, args=["--create-rate", "0"]).spawn()
    yield proc
    proc.kill()  # a throwaway database: no clean shutdown to wait for


@pytest.fixture(scope="module")
def browser(spawned: ServerProcess) -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def server(spawned: ServerProcess) -> ServerProcess:
    return spawned.wait()


def new_page(browser: Browser, width: int = 1280, height: int = 900, **kw: Any) -> Page:
    context = browser.new_context(viewport={"width": width, "height": height}, **kw)
    context.set_default_timeout(TIMEOUT_MS)
    context.add_init_script(f"localStorage.setItem('nimlab.anim', '{ANIMATION_MS}')")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.js_errors = errors  # type: ignore[attr-defined]
    page.size = (width, height)  # type: ignore[attr-defined]
    return page


KINDS: dict[str, dict[str, Any]] = {
    "desk": {},  # a desktop browser
    "other": {},  # another desktop browser (its own storage: no seat of the desk's games)
    "phone": {"width": 390, "height": 844, "is_mobile": True, "has_touch": True},
}


class Tabs:
    """The module's pages, one per kind of browser, each handed to one test at a time."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.pages: dict[str, Page] = {}

    def get(self, kind: str) -> Page:
        page = self.pages.get(kind)
        if page is None or page.is_closed():
            page = self.pages[kind] = new_page(self.browser, **KINDS[kind])
        page.js_errors.clear()  # type: ignore[attr-defined]
        width, height = page.size  # type: ignore[attr-defined]
        if page.viewport_size != {"width": width, "height": height}:
            page.set_viewport_size({"width": width, "height": height})
        if page.url.startswith("http"):  # a new setup starts from the defaults
            page.evaluate("localStorage.removeItem('nimlab.setup')")
        return page

    def close(self) -> None:
        for page in self.pages.values():
            page.context.close()


@pytest.fixture(scope="module")
def tabs(browser: Browser) -> Iterator[Tabs]:
    t = Tabs(browser)
    yield t
    t.close()


@pytest.fixture
def page(tabs: Tabs) -> Page:
    return tabs.get("desk")


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def visit(page: Page, url: str) -> None:
    """Open ``url`` on ``page``: through the app's router when the page is already on the app
    (as its links do, no reload), else by loading it."""
    if page.url.startswith("http") and origin(page.url) == origin(url):
        page.evaluate(
            "(u) => { history.pushState(null, '', u);"
            " dispatchEvent(new PopStateEvent('popstate')); }",
            url,
        )
    else:
        page.goto(url)


def shot(page: Page, name: str, *, full: bool = False) -> None:
    """A screenshot for the README and docs/web.md (only the screens they show are taken)."""
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
    first: str = "first",
    game: str = "nim",
    error: int = 0,
    elsewhere: tuple[str, ...] = (),
    screenshot: str | None = None,
) -> None:
    """Fill in the setup screen and press Play. ``players`` are (name, kind) in turn order."""
    visit(page, base + "/")
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
    page.check(f"input[name=first][value={first}]")
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
    """Click the matches of a pile (the count-th from the end takes that many) and Finish; on a
    touch screen, tap the pile and step to the amount with + (a match is too narrow a target)."""
    matches = page.locator(f"#board .pile[data-pile='{pile}'] .match")
    total = matches.count()
    played = page.locator("#log li").count()
    if page.evaluate("matchMedia('(pointer: coarse)').matches"):
        page.locator(f"#board .pile[data-pile='{pile}'] .pile-count").tap()
        for _ in range(count - 1):  # in Nim one may take 1 to the whole pile
            page.locator("#take-more").tap()
    else:
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

SEAT_AT_EACH_MOVE = """() => {
  window.seatAtMove = [];
  new MutationObserver((changes) => {
    for (const change of changes) for (const li of change.addedNodes) {
      const seat = document.querySelector('#seats li.to-move');
      window.seatAtMove.push([li.textContent, seat ? Number(seat.dataset.seat) : null]);
    }
  }).observe(document.querySelector('#log'), { childList: true });
}"""
"""Records, as each move enters the move list, which seat is highlighted at that moment."""

HUE = """(colour) => {
  const [r, g, b] = colour.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map((x) => Number(x) / 255);
  const max = Math.max(r, g, b), min = Math.min(r, g, b), d = max - min;
  if (d === 0) return null;
  const hue = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return (hue * 60 + 360) % 360;
}"""


def hue_distance(a: float, b: float) -> float:
    d = abs(a - b) % 360
    return min(d, 360 - d)


def test_add_defaults_waits_for_the_server_to_name_them(page: Page, server: Any) -> None:
    """The classic end positions come from the server: until they have come, "Add defaults" is
    disabled (a click on a busy server's fresh page added nothing, and said nothing)."""
    held: list[Any] = []

    def hold(route: Any) -> None:
        held.append(route)

    page.route("**/api/options", hold)
    visit(page, server.url + "/")
    while not held:
        page.wait_for_timeout(10)
    expect(page.locator("#add-defaults")).to_be_disabled()
    held[0].continue_()
    page.unroute("**/api/options")
    page.click("#add-defaults")
    expect(page.locator(".chips .chip", has_text="[1,1,2,2]")).to_have_count(1)
    no_js_errors(page)


def test_three_player_misere_game_with_elimination(page: Page, server: Any) -> None:
    visit(page, server.url + "/")
    page.click("#add-defaults")
    expect(page.locator(".chips .chip", has_text="[1,1,2,2]")).to_have_count(1)
    page.locator("button[aria-label='Remove end position [1,1,2,2]']").click()
    for bad in ("two, two", "abc", "0,0"):
        page.fill("#end-text", bad)
        page.click("#add-end")
        expect(page.locator("#end-error")).to_contain_text(f'"{bad}"')
    expect(page.locator("#end-text")).to_have_value("0,0")  # kept to correct, not added
    expect(page.locator("[aria-label='End positions'] .chip")).to_have_count(3)  # [ ], 2 defaults
    page.fill("#end-text", "")
    page.fill("#pile-size", "0")
    page.click("#add-pile")
    expect(page.locator("#piles-title ~ .error")).to_have_text("A pile needs at least one match.")
    page.fill("#pile-size", "")
    page.select_option("#game-kind", "kayles")  # Kayles is played on rows of stones
    expect(page.locator("#piles-title")).to_have_text("Rows of stones")
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
    # seat colours are never the colours of winning and losing moves
    seat_hues = page.locator("#seats .seat-dot").evaluate_all(
        f"(els) => els.map((e) => ({HUE})(getComputedStyle(e).backgroundColor))"
    )
    value_hues = page.evaluate(
        f"""() => ['l-win', 'l-lose'].map((c) => ({HUE})(getComputedStyle(
              document.querySelector('.legend .' + c), '::before').backgroundColor))"""
    )
    assert len(seat_hues) == 3 and None not in value_hues
    for seat in seat_hues:
        assert seat is not None  # a colour, not a grey
        assert min(hue_distance(seat, value) for value in value_hues) >= 30, (seat, value_hues)
    take(page, 1, 1)  # Ann
    wait_ready(page)
    expect(page.locator("#status")).to_have_text("Bob's turn!")
    take(page, 2, 1)  # Bob; Cy has to take the last match
    expect(page.locator("#dialog[open]")).to_contain_text("Cy was eliminated!")
    expect(page.locator("#dialog[open]")).to_contain_text(
        "Round 2: Ann and Bob play on from the start position."
    )
    close_dialog(page)
    expect(page.locator("#status")).to_have_text("Ann's turn!")
    expect(page.locator("#board .match")).to_have_count(3)
    take(page, 1, 1)  # Ann
    take(page, 2, 1)  # Bob
    take(page, 3, 1)  # Ann takes the last: eliminated, Bob wins
    expect(page.locator("#dialog[open]")).to_contain_text("Ann was eliminated!")
    close_dialog(page)
    expect(page.locator("#dialog[open] h2")).to_have_text("Bob wins!")
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


def test_a_random_first_player_is_announced(page: Page, server: Any) -> None:
    visit(page, server.url + "/")  # the default setup: You against Hal, a perfect bot
    page.check("input[name=first][value=random]")
    expect(page.locator("#play")).to_be_enabled()
    page.click("#play")
    expect(page.locator("#first-note")).to_have_text(
        re.compile(r"^(You|Hal) (was|were) drawn at random to move first\.$")
    )
    if page.inner_text("#first-note").startswith("You"):
        expect(page.locator("#status")).to_have_text("Your turn!")
    else:  # Hal moved first
        expect(page.locator("#log li").first).to_contain_text("Hal took")
    no_js_errors(page)


FOCUS_IN_BOARD = "() => document.querySelector('#board').contains(document.activeElement)"


def test_a_game_against_the_perfect_bot(page: Page, server: Any) -> None:
    open_game(
        page,
        server.url,
        players=[{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
        piles=[3, 4, 5],
    )
    page.evaluate(SEAT_AT_EACH_MOVE)
    keyboard = True
    while not is_over(page):
        wait_ready(page)
        if page.locator("#dialog[open]").count():
            close_dialog(page)
            continue
        if is_over(page):
            break
        if page.locator("#log li").count():
            # after the bot's reply the keyboard focus is back on the board (after a key press
            # on a pile, and after a click on Finish)
            page.wait_for_function(FOCUS_IN_BOARD)
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
    expect(page.locator("#status")).to_have_text("Hal wins!")
    texts = page.locator("#log li").all_inner_texts()
    assert any(re.match(r"Hal took \d+ from pile \d", t) for t in texts)
    assert texts[-1].endswith("Hal wins!")
    # after the victory screen the focus is on the page's next step (replay or a new game)
    if page.locator("#dialog[open]").count():  # the victory screen (unless closed above)
        close_dialog(page)
    assert page.evaluate(
        "() => document.activeElement.matches('main a, main button')"
        " && document.activeElement.getClientRects().length > 0"
    ), page.evaluate("() => document.activeElement.outerHTML")
    # the highlighted seat follows the moves: as soon as a move is shown, the next player's
    # seat is highlighted (Hal's after Ann's move, Ann's as soon as Hal's reply is shown)
    seen = page.evaluate("window.seatAtMove")
    assert len(seen) == len(texts)
    for k, (text, seat) in enumerate(seen):
        mover = 0 if text.startswith("Ann") else 1
        assert seat == (None if k == len(seen) - 1 else 1 - mover), (k, text, seat)
    no_js_errors(page)


def test_a_kayles_game(page: Page, server: Any) -> None:
    open_game(
        page,
        server.url,
        players=[{"name": "Ann"}, {"name": "Kay", "kind": "perfect"}],
        piles=[4, 3],
        game="kayles",
    )
    expect(page.locator("#rules")).to_contain_text("Kayles (octal 0.77)")
    expect(page.locator("#board .stone")).to_have_count(7)
    # two adjacent stones: click the link between them
    page.locator("#board .stones[data-pile='1'] .link.can").nth(1).click()
    expect(page.locator("#selection")).to_contain_text("taking stones 2-3 of row 1")
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


def test_the_analysis_toggle_hint_and_value_history(page: Page, server: Any) -> None:
    page.set_viewport_size({"width": 1280, "height": 1000})
    open_game(
        page,
        server.url,
        players=[{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
        piles=[3, 4, 5],
    )
    page.click("#learn summary")
    page.check("#show-values")
    # 12 legal moves; only taking 2 from pile 1 wins (it leaves nim-sum 0)
    expect(page.locator("#board .vmark")).to_have_count(12)
    expect(page.locator("#board .vmark.win")).to_have_count(1)
    win = page.locator("#board .pile[data-pile='1'] .match").nth(1)
    expect(win.locator(".vmark.win")).to_have_count(1)
    expect(page.locator("#verdict")).to_contain_text("(Next player wins): Ann (to move) wins")
    expect(page.locator("pre.nimsum")).to_contain_text("nim-sum")
    expect(page.locator("pre.nimsum")).to_contain_text("3 = 011")
    page.click("#hint")
    expect(page.locator("#hint-out")).to_contain_text("Take 2 from pile 1")
    expect(page.locator("#selection")).to_contain_text("taking 2 from pile 1 — a winning move")
    shot(page, "analysis", full=True)
    page.click("#reset")
    take(page, 3, 5)  # a mistake: Hal can now win
    expect(page.locator("#value-history li").nth(1)).to_contain_text("a mistake")
    expect(page.locator("#value-history li").nth(2)).to_contain_text("Hal is winning")
    expect(page.locator("#verdict")).to_contain_text("P-position")
    expect(page.locator("#board .vmark.win")).to_have_count(0)
    page.uncheck("#show-values")
    expect(page.locator("#board .vmark")).to_have_count(0)
    no_js_errors(page)


def test_two_browsers_and_a_spectator(tabs: Tabs, server: Any) -> None:
    ann = tabs.get("desk")
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
    bob = tabs.get("phone")
    bob.goto(bob_link)
    expect(bob.locator("#status")).to_have_text("Ann's turn!")
    assert "token" not in bob.url  # the token is kept, not shown
    expect(bob.locator("#selection")).to_have_text("Waiting for Ann…")
    watcher = tabs.get("other")
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

    take(bob, 2, 4)
    for page in (ann, bob, watcher):
        expect(page.locator("#log li")).to_have_text(
            ["Ann took 2 from pile 1", "Bob took 4 from pile 2"]
        )
    take(ann, 1, 1)
    for page in (ann, bob, watcher):
        expect(page.locator("#status")).to_have_text("Ann wins!")
    for page in (ann, bob):
        close_dialog(page)
        no_js_errors(page)


def test_a_server_restart_the_connection_state_and_finished_links(
    tabs: Tabs, tmp_path: Path
) -> None:
    """One restart (a crash) for everything a restart tests: the page says the server cannot be
    reached (without anyone moving) and catches up when it is back (no reload), the game
    resumes with its bot, a reload shows the same board, and a finished game's link leads to
    its replay in a browser that never saw it."""
    server = ServerProcess(tmp_path / "restart.db").start()
    try:
        page = tabs.get("desk")
        created = open_game(
            page,
            server.url,
            players=[{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
            piles=[3, 4, 5],
        )
        key, ann_token = created["state"]["id"], created["seats"][0]["token"]
        take(page, 3, 1)
        expect(page.locator("#log li")).to_have_count(2)  # Ann's move and Hal's reply
        body = {"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [3, 4]}
        finished = page.request.post(server.url + "/api/games", data=body).json()
        r = page.request.post(
            server.url + f"/api/games/{finished['state']['id']}/resign",
            data={"seat": 0, "token": finished["seats"][0]["token"]},
        )
        assert r.status == 200, r.text()
        expect(page.locator("#conn")).to_be_hidden()
        server.kill()  # no clean shutdown
        expect(page.locator("#conn")).to_contain_text("the server cannot be reached")
        server.start()
        # Ann moves from elsewhere (with her seat's token) while this page may still be away
        r = page.request.post(
            server.url + f"/api/games/{key}/moves",
            data={"seat": 0, "token": ann_token, "turn": 3, "pile": 3, "take": 1},
        )
        assert r.status == 200, r.text()
        expect(page.locator("#conn")).not_to_contain_text("cannot be reached")
        expect(page.locator("#log li")).to_have_count(4)  # her move and Hal's reply, caught up
        expect(page.locator("#status")).to_have_text("Ann's turn!")
        take(page, first_nonempty(page), 1)
        expect(page.locator("#log li")).to_have_count(6)
        no_js_errors(page)
        other = tabs.get("other")  # another browser: it never saw these games
        other.goto(server.url + f"/game/{key}")
        expect(other.locator("#log li")).to_have_count(6)
        assert other.locator("#board").inner_text() == page.locator("#board").inner_text()
        other.goto(server.url + f"/game/{finished['state']['id']}")
        other.wait_for_url(re.compile(r"/history/\d+\?key="))  # a private game: by its key
        expect(other.locator("#replay-moves li").last).to_contain_text("Ann resigned. Bob wins!")
        expect(other.locator(".rules")).to_contain_text("Bob won by resignation")
        no_js_errors(other)
    finally:
        server.kill()


def test_a_phone_screen_and_a_huge_pile(tabs: Tabs, server: Any) -> None:
    page = tabs.get("phone")
    open_game(
        page,
        server.url,
        players=[{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
        piles=[1_000_000, 5],
    )
    expect(page.locator("#board .big-number")).to_have_text("1,000,000")
    assert page.locator("#board *").count() < 100  # a number and a small drawing
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, "the page must not scroll sideways on a phone"
    page.fill("#board .pile[data-pile='1'] input", "999,999")
    page.press("#board .pile[data-pile='1'] input", "Enter")
    expect(page.locator("#log li").first).to_have_text("Ann took 999,999 from pile 1")
    expect(page.locator("#log li")).to_have_count(2)
    no_js_errors(page)


def test_the_registry_pages(page: Page, server: Any) -> None:
    visit(page, server.url + "/players")
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
    no_js_errors(page)


# -- games made through the API, opened with a seat's link ---------------------------------------


def open_game(page: Page, base: str, seat: int = 0, **setup: Any) -> dict[str, Any]:
    """Start a game through the API and open it on ``page`` with seat ``seat``'s link."""
    body = {"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [5]} | setup
    r = page.request.post(base + "/api/games", data=body)
    assert r.status == 201, r.text()
    created: dict[str, Any] = r.json()
    link = next(s["link"] for s in created["seats"] if s["seat"] == seat)
    visit(page, base + link)
    expect(page.locator("#status")).not_to_have_text("Loading…")
    return created


def selection_text(page: Page) -> str:
    return page.inner_text("#selection")


def test_selection_on_a_subtraction_set_reaches_only_legal_moves(page: Page, server: Any) -> None:
    open_game(page, server.url, game="subtraction:1,3,4", piles=[5, 2])
    expect(page.locator("#rules")).to_contain_text("{1,3,4}")
    pile = page.locator("#board .pile[data-pile='1']")
    matches = pile.locator(".match")
    expect(matches).to_have_count(5)
    expect(pile.locator(".match.can")).to_have_count(3)  # take 1, 3 or 4 (never 2 or 5)
    by_take = {t: pile.locator(f".match[data-take='{t}']") for t in range(1, 6)}
    # click: a legal amount is chosen; the same match again gives back to the next legal one
    by_take[3].click()
    expect(page.locator("#selection")).to_contain_text("taking 3 from pile 1")
    by_take[3].click()
    expect(page.locator("#selection")).to_contain_text("taking 1 from pile 1")
    by_take[1].click()
    expect(page.locator("#selection")).not_to_contain_text("taking")
    by_take[4].click()
    for bad in (2, 5):  # illegal clicks say why and change nothing
        by_take[bad].click()
        expect(page.locator("#error")).to_have_text(
            f"You cannot take {bad} from pile 1: in this game you may take 1, 3 or 4 from it."
        )
        expect(page.locator("#selection")).to_contain_text("taking 4 from pile 1")
    # hovering an illegal match highlights nothing; a legal one lifts it and the rest
    by_take[2].hover()
    assert by_take[2].evaluate("(el) => getComputedStyle(el).transform") == "none"
    # the keyboard walks through the legal amounts only
    page.click("#reset")
    pile.focus()
    steps = [
        ("ArrowRight", 1),
        ("ArrowRight", 3),
        ("ArrowRight", 4),
        ("ArrowLeft", 3),
        ("End", 4),
        ("Home", 1),
        ("3", 3),
    ]
    for key, want in steps:
        page.keyboard.press(key)
        expect(page.locator("#selection")).to_contain_text(f"taking {want} from pile 1")
    page.keyboard.press("End")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#error")).to_have_text(
        "4 is the most you can take from pile 1 in this game."
    )
    page.keyboard.press("2")
    expect(page.locator("#error")).to_contain_text("You cannot take 2 from pile 1")
    expect(page.locator("#selection")).to_contain_text("taking 4 from pile 1")
    # the stepper: fewer and more walk the same legal amounts
    page.click("#take-less")
    expect(page.locator("#take-count")).to_have_text("3")
    page.click("#take-less")
    expect(page.locator("#take-count")).to_have_text("1")
    expect(page.locator("#take-less")).to_be_disabled()
    page.click("#take-more")
    expect(page.locator("#selection")).to_contain_text("taking 3 from pile 1")
    # pile 2 (2 matches): only 1 can be taken
    page.locator("#board .pile[data-pile='2'] .match[data-take='2']").click()
    expect(page.locator("#error")).to_contain_text("you may take 1 from it")
    page.locator("#board .pile[data-pile='2'] .match[data-take='1']").click()
    expect(page.locator("#selection")).to_contain_text("taking 1 from pile 2")
    page.click("#finish")
    expect(page.locator("#log li")).to_have_text(["Ann took 1 from pile 2"])
    no_js_errors(page)


def test_selection_on_rows_follows_adjacency_and_the_rules(page: Page, server: Any) -> None:
    created = open_game(page, server.url, game="kayles", piles=[6, 60])
    key = created["state"]["id"]
    row = page.locator("#board .stones[data-pile='1']")
    stone = lambda at: row.locator(f".stone[data-at='{at}']")  # noqa: E731
    row.locator(".link[data-pair='3']").click()
    expect(page.locator("#selection")).to_contain_text("taking stones 3-4 of row 1")
    for at, first in ((5, 3), (2, 2)):  # a third stone is never a move in Kayles
        stone(at).click()
        expect(page.locator("#error")).to_have_text(
            f"Taking stones {first}-{first + 2} is not a move: "
            "in this game a move takes 1 or 2 stones."
        )
        expect(page.locator("#selection")).to_contain_text("taking stones 3-4 of row 1")
    stone(3).click()  # give back the first stone of the selection
    expect(page.locator("#selection")).to_contain_text("taking stone 4 of row 1")
    stone(5).click()  # an adjacent stone: take more
    expect(page.locator("#selection")).to_contain_text("taking stones 4-5 of row 1")
    stone(1).click()  # not adjacent: a new selection
    expect(page.locator("#selection")).to_contain_text("taking stone 1 of row 1")
    stone(1).click()
    expect(page.locator("#selection")).not_to_contain_text("taking")
    # the keyboard: Space takes at the cursor, a neighbour extends, a third stone is refused
    row.focus()
    page.keyboard.press("Home")
    page.keyboard.press("Space")
    expect(page.locator("#selection")).to_contain_text("taking stone 1 of row 1")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")
    expect(page.locator("#selection")).to_contain_text("taking stones 1-2 of row 1")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")
    expect(page.locator("#error")).to_contain_text("Taking stones 1-3 is not a move")
    page.keyboard.press("Escape")
    # a gap: stones on both sides of it are not neighbours
    stone(3).click()
    page.click("#finish")
    expect(page.locator("#log li")).to_have_count(1)
    expect(page.locator("#board .stones[data-pile='1'] .hole")).to_have_count(1)
    assert row.locator(".link.can[data-pair='2']").count() == 0
    # Bob's turn in this browser? No: Ann's seat only. Bob moves through the API.
    r = page.request.post(
        server.url + f"/api/games/{key}/moves",
        data={"seat": 1, "token": created["seats"][1]["token"], "text": "2 1 1", "turn": 2},
    )
    assert r.status == 200, r.text()
    expect(page.locator("#log li")).to_have_count(2)
    stone(2).click()
    stone(4).click()  # across the gap: a new selection, never stones 2-4
    expect(page.locator("#selection")).to_contain_text("taking stone 4 of row 1")
    # the long row is drawn on one line (it scrolls sideways), never wrapped into a grid
    tops = page.locator("#board .stones[data-pile='2'] .stone").evaluate_all(
        "(els) => [...new Set(els.map((e) => Math.round(e.getBoundingClientRect().top)))]"
    )
    assert len(tops) == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    no_js_errors(page)


def test_dawsons_kayles_takes_two_stones_only(page: Page, server: Any) -> None:
    open_game(page, server.url, game="octal:0.07", piles=[5])
    row = page.locator("#board .stones[data-pile='1']")
    row.locator(".stone[data-at='3']").click()  # one stone alone is no move: a pair is chosen
    expect(page.locator("#selection")).to_contain_text("taking stones 3-4 of row 1")
    row.locator(".stone[data-at='5']").click()
    expect(page.locator("#error")).to_contain_text("Taking stones 3-5 is not a move")
    row.locator(".stone[data-at='3']").click()  # one stone left would be no move: unselect
    expect(page.locator("#selection")).not_to_contain_text("taking")
    no_js_errors(page)


def test_the_relatives_are_played_by_click_and_key_from_the_moves_the_server_lists(
    page: Page, server: Any
) -> None:
    """One page, one game of each board kind the registry adds: piles whose move takes from
    several (Wythoff's game), rows with cuts that take nothing (Lasker's Nim, Grundy's game),
    and a pile whose position carries a limit (Fibonacci Nim). Moves on several piles are made
    by keyboard too: with a pile chosen, the keys of another pile add it to the move."""
    created = open_game(page, server.url, game="wythoff", piles=[3, 5])
    pile = lambda i: page.locator(f"#board .pile[data-pile='{i}']")  # noqa: E731
    pile(1).locator(".match[data-take='2']").click()
    pile(2).locator(".match[data-take='2']").click()  # the same from both: one move
    expect(page.locator("#selection")).to_contain_text("taking 2 from pile 1 and 2 from pile 2")
    page.click("#finish")
    expect(page.locator("#log li")).to_have_count(1)
    expect(page.locator("#log li").first).to_contain_text("2 from pile 1 and 2 from pile 2")
    # Bob, by keyboard, on (1, 3): pile 1's arrow, then pile 2's arrow joins the same amount
    visit(page, server.url + next(s["link"] for s in created["seats"] if s["seat"] == 1))
    expect(page.locator("#board.live")).to_have_count(1)
    pile(1).focus()
    page.keyboard.press("ArrowRight")
    pile(2).focus()
    page.keyboard.press("ArrowRight")  # alone it would take 1 from pile 2 only: here it joins
    expect(page.locator("#selection")).to_contain_text("taking 1 from pile 1 and 1 from pile 2")
    page.keyboard.press("Enter")
    expect(page.locator("#log li")).to_have_count(2)
    expect(page.locator("#log li").nth(1)).to_contain_text("Bob took 1 from pile 1 and 1 from")

    open_game(page, server.url, game="moore:2", piles=[1, 2, 3])  # digits, on two piles
    pile(2).focus()
    page.keyboard.press("2")
    pile(3).focus()
    page.keyboard.press("3")
    expect(page.locator("#selection")).to_contain_text("taking 2 from pile 2 and 3 from pile 3")
    page.keyboard.press("Enter")
    expect(page.locator("#log li").first).to_contain_text("Ann took 2 from pile 2 and 3 from")

    open_game(page, server.url, game="staircase", piles=[3, 1, 2])  # told as the stairs are
    pile(3).focus()
    page.keyboard.press("2")
    expect(page.locator("#selection")).to_contain_text("moving 2 coins from step 3 down to step 2")
    page.keyboard.press("Enter")
    expect(page.locator("#log li").first).to_contain_text("Ann moved 2 coins from step 3 down to")

    open_game(page, server.url, game="lasker", piles=[4])
    row = page.locator("#board .stones[data-pile='1']")
    row.locator(".link[data-pair='3']").click()  # stones 3-4 from the end of the run
    expect(page.locator("#selection")).to_contain_text("taking stones 3-4 of row 1")
    row.locator(".link[data-pair='3']").click()  # again: a cut between them, taking nothing
    expect(page.locator("#selection")).to_contain_text("split row 1 before stone 4")
    page.keyboard.press("Escape")
    row.focus()
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("|")  # the keyboard's cut, before the stone at the cursor
    expect(page.locator("#selection")).to_contain_text("split row 1 before stone 2")
    page.keyboard.press("Enter")
    expect(page.locator("#log li")).to_have_count(1)
    expect(page.locator("#log li").first).to_contain_text("cutting before stone 2")

    open_game(page, server.url, game="grundys-game", piles=[6])
    row = page.locator("#board .stones[data-pile='1']")
    row.locator(".link[data-pair='3']").click()  # 3 and 3: equal halves are no move
    expect(page.locator("#error")).to_contain_text("nor a cut between them is a move")
    row.locator(".stone[data-at='2']").click()
    expect(page.locator("#error")).to_contain_text("No move takes stone 2")
    row.locator(".link[data-pair='2']").click()
    expect(page.locator("#selection")).to_contain_text("split row 1 before stone 3")

    created = open_game(page, server.url, game="fibonacci", piles=[10])
    assert created["state"]["limit"] == 9 and created["state"]["takes"] == [list(range(1, 10))]
    pile(1).locator(".match[data-take='2']").click()
    page.click("#finish")
    expect(page.locator("#log li")).to_have_count(1)
    state = page.request.get(server.url + f"/api/games/{created['state']['id']}").json()
    assert state["limit"] == 4 and state["takes"] == [[1, 2, 3, 4]]  # at most twice 2 now
    no_js_errors(page)


def test_take_back_is_enabled_when_the_answer_to_a_move_comes_after_its_state(
    page: Page, server: Any
) -> None:
    """The page learns of the move and the bot's reply on its WebSocket before the answer to
    its request arrives (a busy server): Take back, disabled while the move is sent, is enabled
    once the answer comes (it stayed disabled until the next state)."""
    open_game(
        page,
        server.url,
        players=[{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
        piles=[3, 4, 5],
    )

    def late(route: Any) -> None:
        answer = route.fetch()
        time.sleep(1.0)  # (the WebSocket's state is shown meanwhile)
        route.fulfill(response=answer)

    page.route("**/api/games/*/moves", late)
    take(page, 3, 5)
    expect(page.locator("#log li")).to_have_count(2)
    expect(page.locator("#undo")).to_be_enabled()
    page.unroute("**/api/games/*/moves")
    no_js_errors(page)


def test_take_back_value_history_resign_delete_and_replay(page: Page, server: Any) -> None:
    page.set_viewport_size({"width": 1280, "height": 1000})
    open_game(
        page,
        server.url,
        players=[{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
        piles=[3, 4, 5],
    )
    take(page, 3, 5)  # a mistake; Hal replies
    expect(page.locator("#log li")).to_have_count(2)
    expect(page.locator("#log li").nth(1).locator(".claim")).to_contain_text("winning move")
    page.click("#undo")
    expect(page.locator("#log li")).to_have_count(0)
    expect(page.locator("#board .match")).to_have_count(12)
    expect(page.locator("#undo")).to_be_hidden()
    take(page, 3, 5)
    expect(page.locator("#log li")).to_have_count(2)
    page.click("#learn summary")
    expect(page.locator("#value-history li").nth(1)).to_contain_text("a mistake")
    page.locator("#value-history li").nth(1).locator("button").click()
    expect(page.locator("#looking")).to_contain_text("after move 1 (Ann took 5 from pile 3)")
    expect(page.locator("#board .match")).to_have_count(7)  # the position after move 1
    expect(page.locator("#verdict")).to_contain_text("After move 1: ")
    page.click("#back-to-game")
    expect(page.locator("#looking")).to_be_hidden()
    page.click("#resign")
    page.locator("#dialog[open]").get_by_role("button", name="Resign").click()
    expect(page.locator("#status")).to_have_text("Ann resigned. Hal wins!")
    page.click("#delete")
    page.locator("#dialog[open]").get_by_role("button", name="Delete").click()
    page.wait_for_url(server.url + "/")
    # a finished game: its replay shows the values and the mistakes, and follows the move
    open_game(
        page,
        server.url,
        players=[{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
        piles=[1, 2],
    )
    take(page, 2, 2)  # a mistake: Hal takes the last match
    expect(page.locator("#status")).to_have_text("Hal wins!")
    close_dialog(page)
    page.get_by_role("link", name=re.compile(r"Replay game #\d+")).click()
    expect(page.locator("#replay-history li")).to_have_count(3)
    expect(page.locator("#replay-history li").nth(1)).to_contain_text("a mistake")
    expect(page.locator("#replay-moves li").nth(1)).to_contain_text("a mistake")
    expect(page.locator("#replay-moves li[aria-current]")).to_contain_text("Hal took 1")
    page.keyboard.press("Home")
    expect(page.locator("#replay-moves li[aria-current]")).to_have_text("Start")
    expect(page.locator("#replay-board .vmark.win")).to_have_count(1)  # take 1 from pile 2
    expect(page.locator("#replay-verdict")).to_contain_text("N-position")
    shot(page, "replay")
    no_js_errors(page)


def test_abandon_a_game_between_people_and_no_such_pages(page: Page, server: Any) -> None:
    created = open_game(page, server.url, piles=[3, 4], analysis=False)
    page.click("#learn summary")
    expect(page.locator("#analysis-off")).to_be_visible()
    expect(page.locator("#hint")).to_be_hidden()
    expect(page.locator("#resign")).to_be_visible()
    page.click("#abandon")
    page.locator("#dialog[open]").get_by_role("button", name="Abandon").click()
    expect(page.locator("#status")).to_have_text("Abandoned by Ann: nobody wins.")
    games = page.request.get(server.url + "/api/games").json()["games"]
    assert created["state"]["id"] not in [g["id"] for g in games]
    page.goto(server.url + "/nope")
    expect(page.locator("h1")).to_have_text("There is no such page")
    assert page.title() == "No such page — nimlab"
    visit(page, server.url + "/history/999")
    expect(page.locator("h1")).to_have_text("No such game")
    expect(page.locator("#replay-board")).to_have_count(0)
    no_js_errors(page)


def test_the_phone_layout_tap_targets_and_the_take_stepper(tabs: Tabs, server: Any) -> None:
    page = tabs.get("phone")
    open_game(page, server.url, piles=[7, 60, 10**40])
    expect(page.locator("#board .pile[data-pile='3'] .big-number")).to_contain_text("10,000,000")
    pile = page.locator("#board .pile[data-pile='1']")
    pile.locator(".pile-count").tap()  # a tap on the pile chooses it
    expect(page.locator("#stepper")).to_be_visible()
    expect(page.locator("#selection")).to_contain_text("taking 1 from pile 1")
    page.locator("#take-more").tap()
    page.locator("#take-more").tap()
    expect(page.locator("#selection")).to_contain_text("taking 3 from pile 1")
    expect(pile.locator(".match.taking")).to_have_count(3)  # the preview on the board
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "phone-stepper", full=True)
    small = page.evaluate(
        """() => [...document.querySelectorAll(
              'main button, main select, main input:not([type=checkbox]):not([type=radio]), '
              + 'main .pile[tabindex], main .stone.can, header a')]
            .filter((el) => el.offsetParent !== null)
            .map((el) => [el.id || el.className || el.tagName, el.getBoundingClientRect()])
            .filter(([, r]) => r.width < 24 || r.height < 24)
            .map(([name, r]) => `${name}: ${Math.round(r.width)}x${Math.round(r.height)}`)"""
    )
    assert small == []
    page.locator("#take-less").tap()
    page.click("#finish")
    expect(page.locator("#log li").first).to_have_text("Ann took 2 from pile 1")
    # rows on a phone: stones are big enough to tap, the page never scrolls sideways
    open_game(page, server.url, game="kayles", piles=[40, 3])
    boxes = page.locator("#board .stone").evaluate_all(
        "(els) => els.map((e) => [e.getBoundingClientRect().width,"
        " e.getBoundingClientRect().height])"
    )
    assert min(min(b) for b in boxes) >= 24
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.locator("#board .stones[data-pile='2'] .stone[data-at='2']").tap()
    page.locator("#board .stones[data-pile='2'] .stone[data-at='3']").tap()
    expect(page.locator("#selection")).to_contain_text("taking stones 2-3 of row 2")
    no_js_errors(page)


def test_a_double_click_or_tap_on_finish_plays_one_move_and_opens_nothing(
    tabs: Tabs, server: Any
) -> None:
    """The second click (or tap) of a double one on Finish plays nothing more and opens no
    confirmation (the layout does not move Resign under it); a confirmation opens with the
    focus on Cancel, so one Enter too many never resigns."""
    hal = [{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}]
    page = tabs.get("desk")
    open_game(page, server.url, players=hal, piles=[3, 4, 5])
    page.locator("#board .pile[data-pile='3'] .match[data-take='1']").click()
    page.dblclick("#finish")
    expect(page.locator("#log li")).to_have_count(2)  # Ann's move and Hal's reply
    wait_ready(page)
    expect(page.locator("#dialog[open]")).to_have_count(0)
    expect(page.locator("#log li").first).to_have_text("Ann took 1 from pile 3")
    page.focus("#resign")
    page.keyboard.press("Enter")  # asked on purpose: the focus is on Cancel
    expect(page.locator("#dialog[open]")).to_contain_text("Resign this game?")
    assert page.evaluate("document.activeElement.textContent") == "Cancel"
    page.keyboard.press("Enter")
    expect(page.locator("#dialog[open]")).to_have_count(0)
    expect(page.locator("#status")).to_have_text("Ann's turn!")
    phone = tabs.get("phone")
    open_game(phone, server.url, players=hal, piles=[3, 4, 5])
    phone.locator("#board .pile[data-pile='3'] .pile-count").tap()
    box = phone.locator("#finish").bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    phone.touchscreen.tap(x, y)
    phone.touchscreen.tap(x, y)
    expect(phone.locator("#log li")).to_have_count(2)
    wait_ready(phone)
    expect(phone.locator("#dialog[open]")).to_have_count(0)
    no_js_errors(page)
    no_js_errors(phone)


def test_moves_on_several_piles_are_coloured_and_valued(page: Page, server: Any) -> None:
    """Wythoff's game at (4, 6): the only winning move takes 1 from both piles. It is listed
    under the piles and, with pile 1 chosen, marked on pile 2, coloured winning with the
    remoteness the API gives."""
    created = open_game(page, server.url, game="wythoff", piles=[4, 6])
    api = page.request.get(server.url + f"/api/games/{created['state']['id']}/analysis").json()
    wins = [m for m in api["moves"] if m["winning"]]
    assert [(m["pile"], m["take"], m["also"]) for m in wins] == [(1, 1, [[2, 1]])]
    page.click("#learn summary")
    page.check("#show-values")
    joint = page.locator("#board .joint-move", has_text="1 from 1 + 1 from 2")
    expect(joint.locator(".vmark.win")).to_have_attribute("data-n", str(wins[0]["remoteness"]))
    expect(page.locator("#board .joint-move .vmark.win")).to_have_count(1)
    page.locator("#board .pile[data-pile='1'] .match[data-take='1']").click()
    mark = page.locator("#board .pile[data-pile='2'] .match[data-take='1']")
    expect(mark.locator(".vmark.win")).to_have_attribute("data-n", str(wins[0]["remoteness"]))
    expect(mark).to_have_attribute("title", re.compile("1 from pile 1 and 1 from pile 2: winning"))
    mark.click()
    expect(page.locator("#selection")).to_contain_text(
        "taking 1 from pile 1 and 1 from pile 2 — a winning move"
    )
    no_js_errors(page)


LONG_GIVEN, LONG_FAMILY = "Maximiliana" * 3 + "Ottilie", "Wolfeschlegelsteinhausenbergerdorffvoral"
"""An 80-character registered name (the longest the registry takes: 40 + 40)."""


def test_no_sideways_scrolling_on_a_phone_with_a_long_registered_name(
    tabs: Tabs, server: Any
) -> None:
    page = tabs.get("phone")
    r = page.request.post(
        server.url + "/api/players",
        data={"username": "x" * 40, "given": LONG_GIVEN, "family": LONG_FAMILY},
    )
    assert r.status in (201, 409), r.text()
    assert len(LONG_GIVEN + LONG_FAMILY) == 80
    wide: dict[str, int] = {}
    for path in ("/", "/players", "/rankings", "/history"):
        visit(page, server.url + path)
        expect(page.locator("main h1").first).to_be_visible()
        if path == "/":
            page.select_option("#registered", "x" * 40)
            page.locator("#registered").evaluate("(el) => el.form.requestSubmit()")
            expect(page.locator(".players li", has_text=LONG_GIVEN)).to_have_count(1)
        else:
            expect(page.locator("main .loading, main p.muted", has_text="Loading")).to_have_count(0)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 390:
            wide[path] = width
    assert wide == {}
    visit(page, server.url + "/players")
    region = page.locator("#players-table .table-wrap")
    expect(region).to_have_attribute("tabindex", "0")  # a table wider than the screen scrolls
    expect(page.locator("#players-table .scroll-cue")).to_be_visible()  # ... and says so
    no_js_errors(page)


HIT = """(sel) => [...document.querySelectorAll(sel)].filter((el) => {
    el.scrollIntoView({ block: 'center', inline: 'nearest' });
    const r = el.getBoundingClientRect();
    return r.width && r.left >= 0 && r.right <= innerWidth;
  }).map((el) => {
    el.scrollIntoView({ block: 'center', inline: 'nearest' });
    // a tap anywhere in the 44 x 44 px square around the target's centre reaches the target
    const r = el.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
    const misses = [[-21, -21], [21, -21], [-21, 21], [21, 21], [0, 0]].filter(([dx, dy]) => {
      const hit = document.elementFromPoint(x + dx, y + dy);
      return !(hit && (hit === el || el.contains(hit) || hit.contains(el) && hit.matches('.pile')));
    });
    return misses.length ? `${el.className} ${el.title || el.dataset.at || ''}: ${misses}` : null;
  }).filter(Boolean)"""
"""The board's tap targets of ``sel`` whose 44 x 44 px square misses them somewhere."""


def test_board_tap_targets_are_44_px_and_choose_their_own_move(tabs: Tabs, server: Any) -> None:
    page = tabs.get("phone")
    open_game(page, server.url, game="octal:0.07", piles=[5])  # Dawson's Kayles: pairs only
    page.click("#learn summary")
    page.check("#show-values")
    expect(page.locator("#board .row-strip[data-take='2'] .strip-mark")).to_have_count(4)
    misses = page.evaluate(HIT, "#board .stone.can, #board .strip-mark")
    assert misses == [], misses
    page.locator("#board .row-strip[data-take='2'] .strip-mark[data-at='1']").tap()
    expect(page.locator("#selection")).to_contain_text("taking stones 1-2 of row 1")
    page.locator("#board .stone[data-at='3']").tap()  # a stone alone is no move: it says so
    expect(page.locator("#error")).to_contain_text("a move takes 2 stones")
    open_game(page, server.url, game="wythoff", piles=[3, 5])  # a joint move by taps
    assert page.evaluate(HIT, "#board .pile") == []
    page.locator("#board .pile[data-pile='1'] .pile-count").tap()
    page.locator("#board .pile[data-pile='2'] .pile-count").tap()
    expect(page.locator("#selection")).to_contain_text("taking 1 from pile 1 and 1 from pile 2")
    page.locator("#take-more").tap()  # the stepper keeps both piles
    expect(page.locator("#selection")).to_contain_text("taking 2 from pile 1 and 2 from pile 2")
    expect(page.locator("#take-count")).to_have_text("2 + 2")
    no_js_errors(page)


# -- the hardened server: paged turns, pushed answers, finished links ------------------------------


BOT_PACE = 0.05
"""Seconds between two moves of a game of bots only on the fast server (0.8 on a real one)."""


@pytest.fixture(scope="module")
def fast_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """An in-process server without rate limits, whose hints and analyses answer 202 at once
    when they are not ready (so the page must wait for their push), and whose bots-only games
    move fast (BOT_PACE)."""
    from nimlab.web import ServerSettings, create_app
    from webtools import ServerThread

    settings = ServerSettings(
        bot_pace=BOT_PACE,
        compute_wait=0.05,
        move_rate=1e6,
        move_burst=10**6,
        create_rate=1e6,
        create_burst=10**6,
    )
    db = Path(tmp_path_factory.mktemp("fast")) / "web.db"
    with ServerThread(create_app(str(db), settings=settings)) as s:
        yield s


def post_json(url: str, body: dict[str, Any]) -> Any:
    """POST ``body`` as JSON from the test itself (cheaper than through the browser)."""
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT_MS / 1000) as response:
        return json.loads(response.read())


def test_a_long_game_is_paged_in_and_new_moves_are_appended(page: Page, fast_server: Any) -> None:
    from nimlab.web.schemas_out import TURN_PAGE

    body = {"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [70, 70]}
    created = page.request.post(fast_server.url + "/api/games", data=body).json()
    key, tokens = created["state"]["id"], [s["token"] for s in created["seats"]]
    moves = TURN_PAGE + 30
    for turn in range(1, moves + 1):  # straight to the server (the page is not open yet)
        seat = (turn - 1) % 2
        move = {"seat": seat, "token": tokens[seat], "turn": turn, "pile": seat + 1, "take": 1}
        post_json(fast_server.url + f"/api/games/{key}/moves", move)
    visit(page, fast_server.url + f"/game/{key}")
    expect(page.locator("#log li")).to_have_count(moves)  # the earlier page was fetched too
    expect(page.locator("#log li").first).to_have_text("Ann took 1 from pile 1")
    first = page.locator("#log li").first.element_handle()
    r = page.request.post(
        fast_server.url + f"/api/games/{key}/moves",
        data={"seat": 0, "token": tokens[0], "turn": moves + 1, "pile": 1, "take": 1},
    )
    assert r.status == 200
    expect(page.locator("#log li")).to_have_count(moves + 1)
    # the move list was appended to, not drawn again
    assert page.evaluate("(el) => el.isConnected", first)
    # the value history looks back at a move from the first page
    page.click("#learn summary")
    page.locator("#value-history li").nth(2).locator("button").click()
    expect(page.locator("#looking")).to_contain_text("move 2 (Bob took 1 from pile 2)")
    no_js_errors(page)


ARRIVALS = """() => {
  window.arrivals = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      // runs before the page's own handler: what the page shows when a new move arrives
      this.addEventListener('message', (e) => {
        const msg = JSON.parse(e.data);
        if (msg.type === 'state') {
          window.arrivals.push([msg.state.move_count, document.querySelectorAll('#log li').length]);
        }
      });
    }
  };
}"""
"""Records, as each state arrives over the game's WebSocket, its move count and how many moves
the page shows at that moment."""


def test_a_watcher_of_a_bots_only_game_never_falls_behind(page: Page, fast_server: Any) -> None:
    # a move is played out for 5 s at most (as a person may ask for), while the bots move
    # every BOT_PACE: the page cuts a move's animation short as soon as the next one arrives
    visit(page, fast_server.url + "/")
    page.evaluate("localStorage.setItem('nimlab.anim', '5000')")
    try:
        bots = [{"name": n, "kind": "random"} for n in ("Ada", "Bea")]
        body = {"players": bots, "piles": [20] * 6}
        page.evaluate(ARRIVALS)
        created = page.request.post(fast_server.url + "/api/games", data=body).json()
        visit(page, fast_server.url + f"/game/{created['state']['id']}")
        expect(page.locator("#status")).to_have_text(re.compile(r"wins!$"))
        final = page.request.get(fast_server.url + f"/api/games/{created['state']['id']}").json()
        expect(page.locator("#log li")).to_have_count(final["move_count"])
        arrivals = page.evaluate("window.arrivals")
        later = [(count, shown) for count, shown in arrivals[1:]]  # the first: the opening state
        assert len(later) >= 3, arrivals  # the page saw the bots play
        # when a move arrives, the page shows the one before it (or plays it out still)
        behind = [(count, shown) for count, shown in later if shown < count - 2]
        assert behind == [], arrivals
    finally:
        page.evaluate(f"localStorage.setItem('nimlab.anim', '{ANIMATION_MS}')")
    no_js_errors(page)


def test_a_watcher_of_bots_sees_eliminations_go_by(
    page: Page, fast_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # three bots, misère: a player is eliminated in each round; the watcher's page tells it
    # without waiting for anyone to close the news, and plays on to the winner
    import threading

    from nimlab.core.game import Game

    release, real = threading.Event(), Game.bot_choice

    def held(self: Game) -> Any:  # the bots wait until the page watches
        release.wait(60)
        return real(self)

    monkeypatch.setattr(Game, "bot_choice", held)
    bots = [{"name": n, "kind": "random"} for n in ("Ada", "Bea", "Cy")]
    body = {"players": bots, "piles": [3, 3], "misere": True}
    created = page.request.post(fast_server.url + "/api/games", data=body).json()
    visit(page, fast_server.url + f"/game/{created['state']['id']}")
    expect(page.locator("#status")).to_have_text(re.compile(r"Ada"))
    release.set()
    expect(page.locator("#status")).to_have_text(re.compile(r"wins!$"))
    final = page.request.get(fast_server.url + f"/api/games/{created['state']['id']}").json()
    assert any(t["eliminated"] for t in final["turns"])
    expect(page.locator("#log li")).to_have_count(final["move_count"])
    no_js_errors(page)


def test_hints_and_values_worked_out_later_are_pushed_to_the_page(
    page: Page, fast_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from nimlab.web import learning as learning_module

    release = threading.Event()
    real_hint, real_analysis = learning_module.hint_out, learning_module.analysis_out

    def slow_hint(*args: Any, **kwargs: Any) -> Any:
        release.wait(30)
        return real_hint(*args, **kwargs)

    def slow_analysis(*args: Any, **kwargs: Any) -> Any:
        release.wait(30)
        return real_analysis(*args, **kwargs)

    monkeypatch.setattr(learning_module, "hint_out", slow_hint)
    monkeypatch.setattr(learning_module, "analysis_out", slow_analysis)
    page.set_viewport_size({"width": 1280, "height": 1000})
    requests: list[str] = []
    note = lambda r: requests.append(r.url)  # noqa: E731
    page.on("request", note)
    open_game(
        page,
        fast_server.url,
        players=[{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
        piles=[3, 4, 5],
    )
    page.click("#learn summary")
    page.check("#show-values")
    expect(page.locator("#verdict")).to_contain_text("appear here by itself")
    page.click("#hint")
    expect(page.locator("#hint-out")).to_contain_text("the hint comes here when it is ready")
    asked = len([u for u in requests if "/hint" in u or "/analysis" in u])
    release.set()
    expect(page.locator("#hint-out")).to_contain_text("Hint: Take 2 from pile 1")
    expect(page.locator("#verdict")).to_contain_text("(Next player wins): Ann (to move) wins")
    expect(page.locator("#board .vmark.win")).to_have_count(1)
    # nothing was asked again: both answers came over the WebSocket
    assert len([u for u in requests if "/hint" in u or "/analysis" in u]) == asked
    page.remove_listener("request", note)
    no_js_errors(page)


# -- accessibility: axe-core on every screen, phones ----------------------------------------------

TAP = """() => [...document.querySelectorAll('button, a[href], input, select, summary')]
  .filter((e) => e.offsetParent && getComputedStyle(e).visibility !== 'hidden'
    && !e.classList.contains('skip'))
  .map((e) => { const box = (e.closest('label') || e).getBoundingClientRect();
    return [e.id || e.textContent.trim().slice(0, 20) || e.tagName, box.width, box.height]; })
  .filter(([, w, h]) => w < 44 || h < 44)"""


def serious_violations(page: Page) -> list[str]:
    """axe-core's serious and critical violations (WCAG 2.1 A and AA, and best practices) of the
    screen shown. axe-core ships in the axe-playwright-python package, nothing is fetched at run
    time; it is put into the page once (the app moves between screens without reloading)."""
    from importlib.resources import files

    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(files("axe_playwright_python").joinpath("axe.min.js").read_text("utf-8"))
    found = page.evaluate(
        "() => axe.run(document, {runOnly: {type: 'tag', values: "
        "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}, resultTypes: "
        "['violations']}).then((r) => r.violations)"
    )
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes'][:3]]}"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]


LONG_NAMES = {
    "x" * 40: (LONG_GIVEN, LONG_FAMILY),
    "y" * 39 + "z": ("Bartholomew" * 3 + "Hierony", "Featherstonehaugh-Cholmondeley-Marjoribs"),
}
"""Registered players with names of 80 characters (the longest the registry takes: 40 + 40)."""


@pytest.mark.parametrize("kind", ["desk", "phone"])
def test_every_screen_passes_axe_and_fits_a_phone(tabs: Tabs, server: Any, kind: str) -> None:
    """No serious or critical axe-core violation on any screen (setup, registry pages, games of
    piles and of rows with move values on, a past position, a finished game's dialog, a replay),
    every screen filled with 80-character names; on a phone, tap targets of at least 44 x 44 px
    and no sideways scrolling with huge piles and long rows."""
    page = tabs.get(kind)
    phone = kind == "phone"
    problems: dict[str, list[str]] = {}

    def check(screen: str) -> None:
        found = serious_violations(page)
        if phone:
            if page.evaluate("document.documentElement.scrollWidth") > 390:
                found.append("the page scrolls sideways")
            found += [f"tap target {t}" for t in page.evaluate(TAP)]
        if found:
            problems[screen] = found

    for username, (given, family) in LONG_NAMES.items():
        assert len(given) == len(family) == 40
        r = page.request.post(
            server.url + "/api/players",
            data={"username": username, "given": given, "family": family},
        )
        assert r.status in (201, 409), r.text()
    visit(page, server.url + "/")
    expect(page.locator("main h1")).to_be_visible()
    for username, (given, _) in LONG_NAMES.items():  # the setup's players: long names
        page.select_option("#registered", username)
        page.locator("#registered").evaluate("(el) => el.form.requestSubmit()")
        expect(page.locator(".players li", has_text=given)).to_have_count(1)
    check("/")
    long = [{"username": u} for u in LONG_NAMES]
    hal = [long[0], {"name": "Hal" * 13 + "l", "kind": "perfect"}]
    for setup in (
        {"piles": [10**40 + 7, 60, 3], "public": True},  # listed among the games in play
        {"game": "wythoff", "piles": [4, 6]},
        {"game": "octal:0.137", "piles": [12, 40]},
    ):
        open_game(page, server.url, players=hal, **setup)
        page.evaluate("document.querySelector('#learn').open = true")
        page.check("#show-values")
        expect(page.locator("#board .vmark, #board .hint-badge").first).to_be_attached()
        expect(page.locator("#explanation p").first).to_be_visible()
        if setup.get("game") == "octal:0.137":  # every move of the row of 12 has its mark
            expect(page.locator("#board [data-pile='1'] .vmark")).to_have_count(12)
        check(f"game {setup}")
    page.fill("#typed-move", "1 1 3")
    page.press("#typed-move", "Enter")
    expect(page.locator("#value-history li")).to_have_count(3)
    expect(page.locator("#value-history svg .vh-point")).to_have_count(3)
    page.locator("#value-history li").first.locator("button").click()
    expect(page.locator("#verdict")).to_contain_text("At the start: ")
    check("a past position")
    open_game(page, server.url, players=long, piles=[1], public=True)  # in the history
    page.fill("#typed-move", "1 1")
    page.press("#typed-move", "Enter")
    expect(page.locator("#dialog[open]")).to_contain_text("wins!")
    check("the winner's dialog")
    page.locator("#dialog[open]").get_by_role("button", name="Replay").click()
    expect(page.locator("#replay-board")).to_be_visible()
    expect(page.locator("#replay-verdict")).not_to_be_empty()
    check("a replay")
    for path, name in (("/history", "x" * 40), ("/players", LONG_GIVEN), ("/rankings", LONG_GIVEN)):
        visit(page, server.url + path)
        expect(page.locator("main td", has_text=name).first).to_be_visible()
        check(path)
    visit(page, server.url + "/")  # this browser's games in play, and everyone's, long names
    expect(page.locator("#your-games a", has_text="x" * 40).first).to_be_visible()
    expect(page.locator(".in-play a", has_text="x" * 40).nth(1)).to_be_visible()
    check("/ with games in play")
    visit(page, server.url + "/nope")
    expect(page.locator("main h1")).to_have_text("There is no such page")
    check("/nope")
    assert problems == {}
    no_js_errors(page)


def test_news_nobody_has_to_answer_closes_by_itself(page: Page, server: Any) -> None:
    """The dialog of a bots-only game's elimination closes after a moment; one a player must
    answer stays open."""
    visit(page, server.url + "/players")
    expect(page.locator("main h1")).to_be_visible()
    page.evaluate(
        "async () => { const { dialog } = await import('/static/js/dom.js');"
        " window.told = dialog({ title: 'Cy was eliminated!', closeAfterMs: 50 }); }"
    )
    expect(page.locator("#dialog[open]")).to_have_count(0)
    assert page.evaluate("() => window.told") is None
    page.evaluate(
        "async () => { const { dialog } = await import('/static/js/dom.js');"
        " dialog({ title: 'Stay' }); }"
    )
    expect(page.locator("#dialog[open]")).to_contain_text("Stay")
    close_dialog(page)


# -- every game: its winning moves by mouse, keyboard and touch, its values, its replay -----------

WINNING: dict[str, tuple[list[int], dict[str, Any]]] = {
    "nim": ([3, 4, 5], {"pile": 1, "take": 2}),
    "kayles": ([7], {"pile": 1, "take": 2, "at": 2}),  # a pair of stones
    "dawson": ([3, 4, 5], {"pile": 2, "take": 2, "at": 1}),
    "octal:0.137": ([3, 4, 5], {"pile": 2, "take": 3, "at": 1}),  # three stones: a line of marks
    "subtraction:1-3": ([3, 4, 5], {"pile": 3, "take": 2}),
    "lasker": ([6], {"pile": 1, "take": 0, "at": 4}),  # a cut that takes nothing
    "grundys-game": ([3, 4, 5], {"pile": 3, "take": 0, "at": 3}),
    "wythoff": ([4, 6], {"pile": 1, "take": 1, "also": [[2, 1]]}),  # the same from both piles
    "moore:2": ([3, 4, 5], {"pile": 2, "take": 1, "also": [[3, 2]]}),  # unequal, two piles
    "staircase": ([3, 1, 2], {"pile": 1, "take": 1}),
    "fibonacci": ([10], {"pile": 1, "take": 2}),
}
"""For each registered game (with the parameter tests/test_every_game.py plays), a start and
its winning move of the game's most interesting kind: on several piles, a pair, a run of three,
a cut."""


def test_every_registered_game_has_a_winning_move_here() -> None:
    from nimlab.core.games import GAMES

    kinds = {f"{e.name}:{e.example}" if e.parameter else e.name for e in GAMES.values()}
    assert kinds == set(WINNING)


def move_key(m: dict[str, Any]) -> str:
    """The page's key of a move (board.js moveKey)."""
    at = m.get("at")
    also = "".join(f"+{p}:{t}" for p, t in m.get("also") or [])
    return f"{m['pile']}:{m['take']}:{'' if at is None else at}" + also


MARKS = """(root) => {
  const board = document.querySelector(root);
  const legend = (c) => getComputedStyle(document.querySelector('.legend .l-' + c), '::before')
    .backgroundColor;
  return [...board.querySelectorAll('.vmark')].map((m) => {
    const cls = ['win', 'lose', 'unknown'].find((c) => m.classList.contains(c)) || 'plain';
    const r = m.closest('[data-pile]')?.dataset.pile;
    const joint = m.closest('.joint-move'), match = m.closest('.match');
    const stone = m.closest('.stone'), link = m.closest('.link'), strip = m.closest('.row-strip');
    let key = null;
    if (joint) {
      const parts = [...joint.textContent.matchAll(/([\\d,]+) from (\\d+)/g)]
        .map((x) => [Number(x[2]), Number(x[1].replace(/,/g, ''))]).sort((a, b) => a[0] - b[0]);
      const [[p0, t0], ...rest] = parts;
      key = `${p0}:${t0}:` + rest.map(([p, t]) => `+${p}:${t}`).join('');
    } else if (match) key = `${r}:${match.dataset.take}:`;
    else if (strip) key = `${r}:${strip.dataset.take}:${m.dataset.at}`;
    else if (stone) key = `${r}:1:${stone.dataset.at}`;
    else if (link) key = `${r}:2:${link.dataset.pair}`;
    const colour = getComputedStyle(m).backgroundColor;
    const legendColour = cls === 'win' || cls === 'lose' ? colour === legend(cls) : true;
    return [key, cls, m.dataset.n ?? '', legendColour, m.getClientRects().length > 0];
  });
}"""
"""Every value mark on the board ``root``: the move it stands for (read from where it is drawn),
its class, its number, whether its colour is the legend's, and whether it is drawn."""


def shown_values(page: Page, root: str) -> dict[str, tuple[str, str]]:
    marks = page.evaluate(MARKS, root)
    keys = [m[0] for m in marks]
    assert len(keys) == len(set(keys)), "a move is marked twice"
    assert all(m[3] and m[4] for m in marks), marks  # the legend's colours, all drawn
    return {key: (cls, n) for key, cls, n, _, _ in marks}


def api_values(analysis: dict[str, Any]) -> dict[str, tuple[str, str]]:
    cls = {True: "win", False: "lose", None: "unknown"}
    return {
        move_key(m): (cls[m["winning"]], "" if m["remoteness"] is None else str(m["remoteness"]))
        for m in analysis["moves"]
    }


CHOSEN = """() => {
  const out = {};
  for (const p of document.querySelectorAll('#board .pile')) {
    const n = p.querySelectorAll('.match.taking').length;
    if (n) out[`p${p.dataset.pile}`] = n;
  }
  for (const r of document.querySelectorAll('#board .stones')) {
    const at = [...r.querySelectorAll('.stone.taking')].map((s) => Number(s.dataset.at));
    if (at.length) out[`r${r.dataset.pile}`] = [Math.min(...at), at.length];
    const cut = r.querySelector('.link.cutting');
    if (cut) out[`r${r.dataset.pile}`] = [Number(cut.dataset.pair) + 1, 0];
  }
  return out;
}"""
"""The move the board shows being chosen, read from the board (what is marked as taken):
``p<pile>: amount`` for piles, ``r<row>: [first stone, amount]`` for rows (0: a cut)."""


def selected(page: Page) -> dict[str, Any]:
    return dict(page.evaluate(CHOSEN))


def as_selected(move: dict[str, Any]) -> dict[str, Any]:
    if "at" in move:
        return {f"r{move['pile']}": [move["at"], move["take"]]}
    return {f"p{p}": t for p, t in [[move["pile"], move["take"]], *move.get("also", [])]}


def wait_selected(page: Page, move: dict[str, Any]) -> None:
    page.wait_for_function(
        f"(want) => JSON.stringify(want) === JSON.stringify(({CHOSEN})())",
        arg=as_selected(move),
    )


def marks_valued(page: Page, root: str, n: int) -> None:
    """Until the board at ``root`` shows ``n`` value marks, each with its value (a row's
    strip of takes shows a plain mark, its size, until the analysis gives the move's value)."""
    page.wait_for_function(
        """([s, n]) => { const m = document.querySelectorAll(s);
          return m.length === n && [...m].every((x) => !x.classList.contains('plain')); }""",
        arg=[root + " .vmark", n],
    )


def count_is(page: Page, selector: str, n: int) -> None:
    """Until ``selector`` matches ``n`` elements (checked at each frame: expect's polling
    would add a tenth of a second to each step of the every-game test)."""
    page.wait_for_function(
        "([s, n]) => document.querySelectorAll(s).length === n", arg=[selector, n]
    )


def choose_by_mouse(page: Page, move: dict[str, Any]) -> None:
    row = page.locator(f"#board .stones[data-pile='{move['pile']}']")
    if "at" not in move:  # piles: a match of each pile (the others join the first)
        for p, t in [[move["pile"], move["take"]], *move.get("also", [])]:
            page.locator(f"#board .pile[data-pile='{p}'] .match[data-take='{t}']").click()
    elif move["take"] == 0:  # a cut: the link before the stone, once or (after the pair) twice
        link = row.locator(f".link[data-pair='{move['at'] - 1}']")
        link.click()
        if selected(page) != as_selected(move):
            link.click()
    elif move["take"] == 2:
        row.locator(f".link[data-pair='{move['at']}']").click()
    else:  # a stone, then the next ones until the run is taken
        row.locator(f".stone[data-at='{move['at']}']").click()
        last = move["at"] + move["take"] - 1
        for _ in range(move["take"]):
            first, count = selected(page).get(f"r{move['pile']}", [0, 0])
            if first + count - 1 >= last:
                break
            row.locator(f".stone[data-at='{first + count}']").click()


def tab_to(page: Page, selector: str) -> None:
    """Press Tab (or Shift+Tab, towards ``selector``) until ``selector`` has the focus."""
    where = """(s) => { const el = document.querySelector(s), at = document.activeElement;
      if (el === at) return 0;
      return at && at !== document.body
        && at.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_PRECEDING ? -1 : 1; }"""
    for _ in range(60):
        step = page.evaluate(where, selector)
        if step == 0:
            return
        page.keyboard.press("Tab" if step > 0 else "Shift+Tab")
    raise AssertionError(f"Tab never reaches {selector}")


def choose_by_keyboard(page: Page, move: dict[str, Any]) -> None:
    """Tab to each pile and type its amount (a second pile's digit joins the move), or Tab to
    the row, walk to the stone with the arrows and take with Space (a cut: "|")."""
    if "at" not in move:
        for p, t in [[move["pile"], move["take"]], *move.get("also", [])]:
            tab_to(page, f"#board .pile[data-pile='{p}']")
            page.keyboard.press(str(t))
        return
    tab_to(page, f"#board .stones[data-pile='{move['pile']}']")
    page.keyboard.press("Home")
    for _ in range(move["at"] - 1):
        page.keyboard.press("ArrowRight")
    if move["take"] == 0:
        page.keyboard.press("|")
        return
    page.keyboard.press("Space")
    cursor, last = move["at"], move["at"] + move["take"] - 1
    for _ in range(move["take"]):  # the next stone after the run chosen, until it is taken
        first, count = selected(page).get(f"r{move['pile']}", [0, 0])
        if first + count - 1 >= last:
            break
        while cursor < first + count:
            page.keyboard.press("ArrowRight")
            cursor += 1
        page.keyboard.press("Space")


TARGETS = """() => [...document.querySelectorAll(
    '#board .pile .pile-count, #board .stone.can, #board .strip-mark, #board .joint-move')]
  .map((el) => {
    const r = el.closest('[data-pile]')?.dataset.pile;
    if (el.matches('.pile-count')) return [`#board .pile[data-pile='${r}'] .pile-count`, `p${r}`];
    const at = el.dataset.at;
    if (el.matches('.stone')) return [`#board .stones[data-pile='${r}'] .stone[data-at='${at}']`,
      `${r}:1:${at}`];
    if (el.matches('.strip-mark')) {
      const take = el.closest('.row-strip').dataset.take;
      return [`#board .stones[data-pile='${r}'] .row-strip[data-take='${take}']`
        + ` .strip-mark[data-at='${at}']`, `${r}:${take}:${at}`];
    }
    return [null, el.getAttribute('aria-label')];
  })
  // of each line of targets (a row's stones, each line of marks under it), the first and the
  // last: the hit test (HIT) covers every target's square, these taps what a tap chooses
  .filter(([sel, what], i, all) => {
    const line = (x) => (x[0] ? x[0].replace(/\\[data-at='\\d+'\\]$/, '') : 'joint');
    return i === 0 || i === all.length - 1 || line(all[i - 1]) !== line([sel, what])
      || line(all[i + 1]) !== line([sel, what]);
  })"""
"""Each tap target of the board: a selector for it and the move it stands for (a pile: ``p<i>``;
a move on several piles: its label)."""


def taps_choose_their_own_moves(page: Page, legal: dict[str, Any]) -> list[str]:
    """Tap the board's tap targets at their centres (each from no selection: every pile, the
    first and the last of each line of stones or marks, the first two moves on several piles)
    and list those whose tap does not choose exactly their own move: a stone takes itself (or,
    when that is no move, nothing and says why), a mark under a row its move, a pile its
    smallest move alone, a move on several piles (a button under the piles) itself. ``legal``
    maps the legal moves' keys (move_key)."""
    wrong = []
    # the moves on several piles are alike: the first two (the winning ones first) will do
    joint = page.locator("#board .joint-move")
    targets = [t for t in page.evaluate(TARGETS) if t[0]] + [
        (
            f"#board .joint-list li:nth-child({k + 1}) .joint-move",
            joint.nth(k).get_attribute("aria-label"),
        )
        for k in range(min(2, joint.count()))
    ]
    for selector, what in targets:
        if ".joint-move" in selector:  # a move on several piles: its label names it
            parts = [(int(p), int(t)) for t, p in re.findall(r"(\d+) from pile (\d+)", what)]
            want = {f"p{p}": t for p, t in parts}
        elif what.startswith("p"):
            takes = sorted(
                int(key.split(":")[1])
                for key in legal
                if key.startswith(what[1:] + ":") and "+" not in key
            )
            want = {what: takes[0]} if takes else {}
        else:
            r, take, at = (int(x) for x in what.split(":"))
            want = {f"r{r}": [at, take]} if what in legal else {}
        x, y = page.evaluate(
            """(s) => { const el = document.querySelector(s);
              el.scrollIntoView({ block: 'center', inline: 'nearest' });
              const r = el.getBoundingClientRect();
              return [r.left + r.width / 2, r.top + r.height / 2]; }""",
            selector,
        )
        page.touchscreen.tap(x, y)
        try:  # the move chosen (or, for no move, the reason said)
            page.wait_for_function(
                f"""(want) => JSON.stringify(({CHOSEN})()) === JSON.stringify(want)
                  && (Object.keys(want).length || document.querySelector('#error').textContent)""",
                arg=want,
                timeout=3000,
            )
        except PlaywrightTimeout:
            wrong.append(f"{what}: {selected(page)} (want {want})")
        page.evaluate(
            "() => { const b = document.querySelector('#reset'); if (!b.disabled) b.click();"
            " document.querySelector('#error').textContent = ''; }"
        )
    return wrong


def choose_by_touch(page: Page, move: dict[str, Any]) -> None:
    if "at" not in move:  # tap each pile, then + until the amounts are reached
        for p, _ in [[move["pile"], move["take"]], *move.get("also", [])]:
            page.locator(f"#board .pile[data-pile='{p}'] .pile-count").tap()
        for _ in range(20):
            if selected(page) == as_selected(move):
                break
            page.locator("#take-more").tap()
        return
    row = page.locator(f"#board .stones[data-pile='{move['pile']}']")
    if move["take"] == 1:
        row.locator(f".stone[data-at='{move['at']}']").tap()
    else:  # pairs, longer runs and cuts: their marks in the lines under the row
        row.locator(
            f".row-strip[data-take='{move['take']}'] .strip-mark[data-at='{move['at']}']"
        ).tap()


@pytest.mark.parametrize("kind", ["desk", "phone"])
@pytest.mark.parametrize("game", list(WINNING))
def test_every_game_shows_the_values_the_api_gives_and_plays_its_winning_move(
    tabs: Tabs, server: Any, game: str, kind: str
) -> None:
    """Every game, at 1280 x 800 and on a 390 x 844 touch screen: with the values shown, every
    legal move's mark (its place, colour, shape and number) is the API's analysis of the
    position; the winning move is chosen by mouse and again by keyboard alone (desk) or by taps
    (phone; every tap target of the board at least 44 x 44 px and hit only by its own taps), and
    is the move played. On the desk, the replay's panel (verdict, explanation, marks) at the
    start and after that move is the one the live game showed there."""
    page = tabs.get(kind)
    page.set_viewport_size(
        {"width": 1280, "height": 800} if kind == "desk" else {"width": 390, "height": 844}
    )
    piles, move = WINNING[game]
    created = open_game(page, server.url, game=game, piles=piles)
    key, tokens = created["state"]["id"], [s["token"] for s in created["seats"]]
    analysis = page.request.get(server.url + f"/api/games/{key}/analysis").json()
    want = api_values(analysis)
    assert want[move_key(move)][0] == "win", (game, want)
    page.click("#learn summary")
    page.check("#show-values")
    marks_valued(page, "#board", len(want))
    assert shown_values(page, "#board") == want
    explanation = page.locator("#explanation").inner_text()
    verdict = page.inner_text("#verdict")
    if kind == "phone":
        misses = page.evaluate(
            HIT, "#board .pile, #board .stone.can, #board .strip-mark, #board .joint-move"
        )
        assert misses == [], misses
        wrong = taps_choose_their_own_moves(page, want)
        assert wrong == [], wrong
        choose_by_touch(page, move)
        wait_selected(page, move)
        expect(page.locator("#selection")).to_contain_text("a winning move")
        page.locator("#finish").tap()
    else:
        choose_by_mouse(page, move)
        wait_selected(page, move)
        by_mouse = page.inner_text("#selection")
        assert "a winning move" in by_mouse
        page.click("#reset")
        page.wait_for_function(f"() => !Object.keys(({CHOSEN})()).length")
        choose_by_keyboard(page, move)
        wait_selected(page, move)
        assert page.inner_text("#selection") == by_mouse
        page.keyboard.press("Enter")
    count_is(page, "#log li", 1)
    state = page.request.get(server.url + f"/api/games/{key}").json()
    played = state["turns"][0]["move"]
    assert move_key(played) == move_key(move)
    no_js_errors(page)
    if kind == "phone":
        return
    # the panel after the move (a P-position: every move loses), then Bob moves and resigns
    panels = [(verdict, explanation, want)]
    after = api_values(page.request.get(server.url + f"/api/games/{key}/analysis").json())
    assert {cls for cls, _ in after.values()} == {"lose"}
    marks_valued(page, "#board", len(after))
    assert shown_values(page, "#board") == after
    panels.append((page.inner_text("#verdict"), page.locator("#explanation").inner_text(), after))
    bob = page.request.get(server.url + f"/api/games/{key}").json()["moves"][0]
    bob = {k: bob[k] for k in ("pile", "take", "at", "also")}
    r = page.request.post(
        server.url + f"/api/games/{key}/moves",
        data={"seat": 1, "token": tokens[1], "turn": 2, **bob},
    )
    assert r.status == 200, r.text()
    count_is(page, "#log li", 2)
    r = page.request.post(
        server.url + f"/api/games/{key}/resign", data={"seat": 1, "token": tokens[1]}
    )
    assert r.status == 200, r.text()
    # the replay shows at each position the panel the live game showed there: at the start
    # (frame 0, and frame 1 before the first move) and after the first move (frame 2)
    saved = page.request.get(server.url + f"/api/games/{key}").json()["saved_as"]
    visit(page, server.url + f"/history/{saved}?key={key}")
    count_is(page, "#replay-moves li", 3)
    for frame, (live_verdict, live_explanation, values) in enumerate([panels[0], *panels]):
        page.locator("#replay-moves li a").nth(frame).click()
        prefix = "Before this move: " if frame else ""
        expect(page.locator("#replay-verdict")).to_have_text(prefix + live_verdict)
        marks_valued(page, "#replay-board", len(values))
        assert shown_values(page, "#replay-board") == values
        assert page.locator("#replay-explanation").inner_text() == live_explanation
    no_js_errors(page)
