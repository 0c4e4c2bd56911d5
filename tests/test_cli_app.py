"""The command line's structure: the lazy command table matches the commands the modules define,
and the registry commands start without the heavy libraries."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
from pathlib import Path

import typer
from typer.testing import CliRunner

from nimlab.cli.app import COMMANDS, app

HEAVY = ("numpy", "numba", "fastapi", "uvicorn", "nimlab.theory.grundy", "nimlab.web")


def test_command_table_matches_the_commands_the_modules_define() -> None:
    for module in {home for home, _ in COMMANDS.values()}:
        importlib.import_module(module)
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    assert list(group.commands) == list(COMMANDS)
    for name, (home, help_line) in COMMANDS.items():
        command = group.commands[name]
        assert command.callback is not None or name == "players"
        first_paragraph = (command.help or "").split("\n\n")[0]
        assert " ".join(first_paragraph.split()) == help_line, name
        if command.callback is not None:
            assert command.callback.__module__ == home, name


def test_help_lists_every_command_with_its_line() -> None:
    result = CliRunner().invoke(app, ["--help"], terminal_width=200)
    assert result.exit_code == 0
    for name, (_, help_line) in COMMANDS.items():
        assert name in result.output
        assert help_line[:40] in result.output


def test_a_mistyped_command_gets_a_suggestion() -> None:
    result = CliRunner().invoke(app, ["rankngs"])
    assert result.exit_code == 2
    assert "rankings" in result.output


def test_help_and_registry_commands_do_not_load_heavy_libraries(tmp_path: Path) -> None:
    """``nimlab --help``, ``players add/show``, ``rankings`` and ``history`` load no NumPy, Numba,
    web framework or compiled kernels (a fresh interpreter, so nothing is loaded before)."""
    lines = [
        ["--help"],
        ["players", "add", "ann", "--given", "Ann", "--family", "A", "--db", f"{tmp_path}/n.db"],
        ["players", "show", "--db", f"{tmp_path}/n.db"],
        ["rankings", "--db", f"{tmp_path}/n.db"],
        ["history", "--db", f"{tmp_path}/n.db"],
    ]
    code = textwrap.dedent(
        f"""
        import sys
        from nimlab.cli import main
        for argv in {lines!r}:
            sys.argv = ["nimlab", *argv]
            try:
                main()
            except SystemExit as e:
                assert e.code in (0, None), (argv, e.code)
        heavy = sorted(m for m in sys.modules if m.startswith({HEAVY!r}))
        print("HEAVY", heavy)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout, done.stdout[-500:]


_AT_EXIT = """
import atexit, gc, sys
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0, flush=True))
from nimlab.cli import main
for _ in range(2):
    sys.argv = ["nimlab", "analyze", "3", "4", "5"]
    try:
        main()
    except SystemExit:
        pass
print("frozen before:", gc.get_freeze_count() > 0 or not gc.isenabled(), flush=True)
"""


def test_the_command_line_leaves_the_last_collections_nothing_to_walk() -> None:
    """The console script freezes what is alive once it is done (atexit, registered once however
    often it runs), so the interpreter's collections at exit do not walk every object of the
    libraries it loaded (0.12-0.15 s of CPU once the compiled kernels are loaded); called from
    Python, it freezes nothing before and leaves collections on."""
    done = subprocess.run(
        [sys.executable, "-c", _AT_EXIT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["frozen before: False", "frozen at exit: True"]


_PAUSED = """
import gc, sys
from nimlab._start import main
seen = []
gc.callbacks.append(
    lambda phase, info: phase == "start" and seen.append("nimlab.cli.analyze" in sys.modules)
)
sys.argv = ["nimlab", "analyze", "3", "4", "5"]
try:
    main()
except SystemExit:
    pass
print(seen.count(False), gc.isenabled(), gc.get_freeze_count() > 0)
"""


def test_the_command_starts_without_collections_and_runs_with_them() -> None:
    """The console script (and ``python -m nimlab``) collects no garbage while the command line
    and the command's module are imported (long-lived objects only), then freezes them and
    collects as usual for the command's work."""
    done = subprocess.run(
        [sys.executable, "-c", _PAUSED], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-3:] == ["0", "True", "True"]


def test_the_library_imports_without_numpy() -> None:
    code = (
        "import sys, nimlab, nimlab.storage, nimlab.core.ruleset, nimlab.core.game; "
        "from nimlab import Game, Ruleset, analyze; "
        f"print(sorted(m for m in sys.modules if m.startswith({HEAVY!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_an_octal_code_with_no_digits_gets_the_octal_code_hint() -> None:
    from processes import nimlab

    for code in ("0.", "4.", ".", "0.8"):
        r = nimlab("grundy", code)
        assert r.returncode == 2, r.stdout
        assert f"'{code}' is not an octal code: write 0. (or 4.) followed by" in r.stderr
    assert nimlab("grundy", "0.7", "-n", "3").returncode == 0


def test_simulate_help_lists_the_real_default_of_first() -> None:
    from processes import nimlab

    help_text = " ".join(nimlab("simulate", "--help").stdout.split())
    assert "--first alternate|first|random|auto" in help_text
    assert "[default: alternate]" in help_text


def test_unbuffered_output_is_written_whole_when_the_process_is_stopped_and_continued() -> None:
    """With ``PYTHONUNBUFFERED`` (or ``python -u``) Python's standard output writes straight
    to the file descriptor, and a write that a stop signal interrupts after filling a pipe
    returns part way; the rest of the answer was lost (a JSON line cut at 64 KiB). A job
    stopped and continued (Ctrl-Z, ``bg``) while its reader lags must still print everything."""
    import fcntl
    import json
    import os
    import signal
    import termios

    from processes import PATIENCE, until

    proc = subprocess.Popen(
        [sys.executable, "-m", "nimlab", "grundy", "0.77", "--max", "60000", "--json", "--values"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None

    capacity = fcntl.fcntl(proc.stdout, 1032)  # F_GETPIPE_SZ

    def waiting_in_a_write() -> bool:  # the pipe is full: the rest of the answer waits
        queued = bytearray(4)
        fcntl.ioctl(proc.stdout, termios.FIONREAD, queued)
        return int.from_bytes(queued, sys.byteorder) >= capacity

    try:
        until(waiting_in_a_write, "the answer fills the pipe and the writer waits")
        os.kill(proc.pid, signal.SIGSTOP)
        os.kill(proc.pid, signal.SIGCONT)
        out, err = proc.communicate(timeout=PATIENCE)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0, err
    answer = json.loads(out)
    assert len(answer["values"]) == 60000 and answer["proven"]
