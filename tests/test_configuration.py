"""``nimlab serve``'s one configuration: every setting from one class, by flag, ``NIMLAB_*``
variable or TOML file in that order, one name everywhere, and the table in the docs made from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from nimlab.web import setting_groups
from nimlab.web import settings as configuration
from nimlab.web.setting_groups import GROUPS
from nimlab.web.settings import ServerSettings, SettingsError, settings_fields, settings_table
from processes import nimlab
from webtools import ServerProcess

ROOT = Path(__file__).resolve().parent.parent


def test_the_docs_table_is_made_from_the_class() -> None:
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert settings_table() in doc, "run scripts/configuration-table"
    for name, _ in settings_fields():
        assert f"`NIMLAB_{name.upper()}`" in doc


def test_the_settings_come_group_by_group_in_the_groups_order() -> None:
    """ServerSettings inherits every group of web/setting_groups.py, and its settings (the
    table's, --help's and --print-config's order) are the groups' in GROUPS' order: a group
    left out of the bases or of GROUPS, or put in the wrong place, fails here."""
    grouped = [name for group in GROUPS for name in group.model_fields]
    assert [name for name, _ in settings_fields()] == grouped
    defined = {
        c
        for c in vars(setting_groups).values()
        if isinstance(c, type)
        and issubclass(c, BaseModel)
        and c.__module__ == setting_groups.__name__
    }
    assert defined == set(GROUPS)


def test_a_flag_wins_over_the_environment_which_wins_over_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "nimlab.toml"
    file.write_text(
        'create_rate = 12\nmove_rate = 3\nengine_threads = 2\nallow_host = ["a.example"]\n'
    )
    monkeypatch.setenv("NIMLAB_MOVE_RATE", "5")
    monkeypatch.setenv("NIMLAB_CREATE_RATE", "9")
    monkeypatch.setenv("NIMLAB_TRUSTED_PROXIES", "10.0.0.1, 192.168.0.0/16")
    s, sources = ServerSettings.load({"create_rate": "7"}, file)
    assert (s.create_rate, s.move_rate, s.engine_threads, s.move_burst) == (7, 5, 2, 40)
    assert s.allow_host == ("a.example",)
    assert s.trusted_proxies == ("10.0.0.1", "192.168.0.0/16")
    assert sources["create_rate"] == "--create-rate"
    assert sources["move_rate"] == "$NIMLAB_MOVE_RATE"
    assert sources["engine_threads"] == str(file)
    assert sources["move_burst"] == "default"


def test_bad_values_name_the_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SettingsError, match=r"create_rate \(--create-rate"):
        ServerSettings.load({"create_rate": "-1"})
    monkeypatch.setenv("NIMLAB_PORT", "eighty")
    with pytest.raises(SettingsError, match=r"port .*NIMLAB_PORT.*'eighty'"):
        ServerSettings.load({})
    monkeypatch.delenv("NIMLAB_PORT")
    file = tmp_path / "bad.toml"
    file.write_text("creat_rate = 1\n")
    with pytest.raises(SettingsError, match="unknown setting 'creat_rate'"):
        ServerSettings.load({}, file)
    with pytest.raises(SettingsError, match="cannot read"):
        ServerSettings.load({}, tmp_path / "missing.toml")
    with pytest.raises(SettingsError, match="admin_token_file"):
        ServerSettings.load({"admin_token_file": str(tmp_path / "missing")})


def test_the_admin_token_comes_from_a_file(tmp_path: Path) -> None:
    file = tmp_path / "token"
    file.write_text("  s3cret  \nignored\n")
    s, sources = ServerSettings.load({"admin_token_file": str(file)})
    assert s.admin_secret() == "s3cret" and sources["admin_token"] == str(file)
    assert "s3cret" not in repr(s)


def test_the_current_settings_are_the_modules_capital_names() -> None:
    configuration.use(ServerSettings(move_burst=7))
    try:
        assert configuration.MOVE_BURST == 7  # type: ignore[attr-defined]
        with pytest.raises(AttributeError):
            _ = configuration.NO_SUCH_SETTING  # type: ignore[attr-defined]
    finally:
        configuration.use(ServerSettings())


def test_serve_prints_its_configuration_and_refuses_bad_values(tmp_path: Path) -> None:
    env = {"NIMLAB_MOVE_RATE": "5", "NIMLAB_ADMIN_TOKEN": "t0ps3cret"}
    r = nimlab("serve", "--create-rate", "7", "--print-config", env=env)
    assert r.returncode == 0, r.stderr
    lines = {line.split(" = ")[0]: line for line in r.stdout.splitlines()}
    assert "--create-rate" in lines["create_rate"] and "7.0" in lines["create_rate"]
    assert "$NIMLAB_MOVE_RATE" in lines["move_rate"]
    assert "t0ps3cret" not in r.stdout and "(hidden)" in lines["admin_token"]
    r = nimlab("serve", "--move-burst", "0", "--db", str(tmp_path / "x.db"), env=env)
    assert r.returncode == 2 and "move_burst (--move-burst" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "x.db").exists()
    r = nimlab("serve", "--admin-token", "visible")
    assert r.returncode == 2 and "--admin-token-file" in r.stderr


def test_the_admin_token_comes_from_a_systemd_credential(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``LoadCredential=admin-token:FILE``: systemd hands the token over in
    ``$CREDENTIALS_DIRECTORY``; the environment or a token file named wins over it."""
    (tmp_path / "admin-token").write_text("from-systemd\n")
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path))
    monkeypatch.delenv("NIMLAB_ADMIN_TOKEN", raising=False)
    s, sources = ServerSettings.load({})
    assert s.admin_secret() == "from-systemd"
    assert sources["admin_token"] == str(tmp_path / "admin-token")
    monkeypatch.setenv("NIMLAB_ADMIN_TOKEN", "from-env")
    assert ServerSettings.load({})[0].admin_secret() == "from-env"
    (tmp_path / "admin-token").write_text("\n")
    monkeypatch.delenv("NIMLAB_ADMIN_TOKEN")
    with pytest.raises(SettingsError, match="holds no token"):
        ServerSettings.load({})


def test_an_unknown_nimlab_variable_is_named_with_the_closest_setting() -> None:
    environ = {
        "NIMLAB_MOVE_RTAE": "3",
        "NIMLAB_MOVE_RATE": "3",
        "NIMLAB_TEST_POSTGRES": "x",  # the tests' own
        "NIMLAB_ZZZ": "1",
        "HOME": "/root",
    }
    [misspelt, unknown] = configuration.unknown_variables(environ)
    assert "NIMLAB_MOVE_RTAE" in misspelt and misspelt.endswith("did you mean NIMLAB_MOVE_RATE?")
    assert "NIMLAB_ZZZ" in unknown and "did you mean" not in unknown


def test_serve_logs_in_json_its_start_its_stop_and_unknown_variables(tmp_path: Path) -> None:
    """With --log-format json every line of the log is JSON: the warnings at start, the line
    saying it started and the one saying it stopped."""
    server = ServerProcess(
        tmp_path / "j.db", args=["--log-format", "json"], env={"NIMLAB_MOVE_RTAE": "3"}
    ).start()
    server.stop()
    log = server.logged()
    lines = [json.loads(line) for line in log.splitlines() if line.strip()]
    messages = [line["message"] for line in lines]
    assert any("NIMLAB_MOVE_RTAE" in m and "NIMLAB_MOVE_RATE" in m for m in messages), log
    assert any(m.startswith("started: nimlab ") and "j.db" in m for m in messages), log
    assert any(m.startswith("stopped") for m in messages), log


def test_preparing_the_solvers_is_said_in_the_server_s_log(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from nimlab.cli.prepare import prepare_solvers
    from nimlab.theory import kernels

    prepared: list[list[str]] = []
    monkeypatch.setattr(kernels, "cold", lambda groups: ["grundy", "split"])
    monkeypatch.setattr(kernels, "prepare", lambda groups, progress=None: prepared.append(groups))
    said: list[str] = []
    prepare_solvers(["grundy", "split"], say=said.append)
    assert said == ["preparing the solvers once (about 9 s)"] and prepared == [["grundy", "split"]]
    assert capsys.readouterr().err == ""  # not printed besides the log
