"""The exported files load with the tools' own code (docs/exports.md): promptfoo's config
validation (`promptfoo validate config`) and schemas from npm, PyRIT's
`SeedDataset.from_yaml_file`, and garak's payload loader (`garak.payloads`), all from
`make export-checkers` (tools/export_checkers/). Skipped locally without them; under
CI=true they must be there."""

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import require_service
from tests.exports.conftest import SECRET, WINNING, WINNING_TEMPLATED, body_of, export_url

pytestmark = pytest.mark.django_db

CHECKERS = Path(__file__).resolve().parents[2] / "tools" / "export_checkers"
PYTHON = CHECKERS / ".venv" / "bin" / "python"
PROMPTFOO = CHECKERS / "node_modules" / ".bin" / "promptfoo"
QUIET_NODE = {
    "PROMPTFOO_DISABLE_TELEMETRY": "1",
    "PROMPTFOO_DISABLE_UPDATE": "1",
    "NODE_NO_WARNINGS": "1",
}


def _run(args, *, env=None, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(arg) for arg in args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, **(env or {}), "HOME": str(tmp_path)},
    )


def _export(creator_api, challenge, export_format, tmp_path, name) -> Path:
    path = tmp_path / name
    path.write_text(body_of(creator_api.get(export_url(challenge, export_format))))
    return path


def test_promptfoo_validates_the_suite(creator_api, vault, played, tmp_path):
    require_service("promptfoo (make export-checkers)", PROMPTFOO.exists())
    suite = _export(creator_api, vault, "promptfoo", tmp_path, "suite.yaml")
    env = {**QUIET_NODE, "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo")}
    validated = _run([PROMPTFOO, "validate", "config", "-c", suite], env=env, tmp_path=tmp_path)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "Configuration is valid" in validated.stdout + validated.stderr

    checked = _run(
        ["node", CHECKERS / "check_promptfoo.cjs", suite], env=QUIET_NODE, tmp_path=tmp_path
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr

    # The checks see a broken suite as broken.
    broken = yaml.safe_load(suite.read_text())
    broken["defaultTest"]["assert"][0]["type"] = "not-containz"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(broken))
    refused = _run(
        ["node", CHECKERS / "check_promptfoo.cjs", bad], env=QUIET_NODE, tmp_path=tmp_path
    )
    assert refused.returncode == 1
    assert "not-containz" in refused.stdout


def test_promptfoo_runs_the_suite_and_reads_the_secret_from_the_environment(
    creator_api, workspace, tmp_path
):
    """A suite whose defence has no secret, run with promptfoo's echo provider: each attack
    comes back as sent, and the not-contains assertions read $PC_SECRET."""
    require_service("promptfoo (make export-checkers)", PROMPTFOO.exists())
    from challenges.models import ChallengeAttempt
    from tests.factories import make_challenge, record_win

    challenge = make_challenge(workspace=workspace, name="Echo", secret_ref="")
    win = record_win(challenge, "echoer")
    ChallengeAttempt.objects.filter(pk=win.pk).update(prompt=WINNING_TEMPLATED)
    suite = yaml.safe_load(body_of(creator_api.get(export_url(challenge, "promptfoo"))))
    suite["providers"] = ["echo"]
    suite["defaultTest"] = {
        "assert": [
            {"type": "not-contains", "value": "{{env.PC_SECRET}}"},
            {"type": "contains", "value": "datasets_path"},
        ]
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(suite))
    env = {**QUIET_NODE, "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"), "PC_SECRET": "zq"}
    ran = _run(
        [PROMPTFOO, "eval", "-c", path, "--no-cache", "--no-table", "-o", tmp_path / "out.json"],
        env=env,
        tmp_path=tmp_path,
    )
    results = json.loads((tmp_path / "out.json").read_text())["results"]["results"]
    assert len(results) == 1, ran.stdout + ran.stderr
    output = results[0]["response"]["output"]
    # The attack reached the model as written: no template ran, no file was read.
    assert json.loads(output)[-1]["content"] == " " + WINNING_TEMPLATED
    assert results[0]["success"] is True, results[0].get("gradingResult")


def test_pyrit_loads_the_seed_dataset(creator_api, vault, played, tmp_path):
    require_service("PyRIT (make export-checkers)", PYTHON.exists())
    dataset = _export(creator_api, vault, "pyrit", tmp_path, "seeds.yaml")
    script = (
        "import json, sys\n"
        "from pyrit.models import SeedDataset\n"
        "ds = SeedDataset.from_yaml_file(sys.argv[1])\n"
        "print(json.dumps({'name': ds.dataset_name, 'values': list(ds.get_values()),"
        " 'types': [s.data_type for s in ds.seeds], 'harm': ds.harm_categories}))\n"
    )
    loaded = _run([PYTHON, "-c", script, dataset], tmp_path=tmp_path)
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    result = json.loads(loaded.stdout.strip().splitlines()[-1])
    assert result["name"] == f"phc-{vault.slug}"
    # Jinja syntax in an attack survives PyRIT's template rendering as written.
    assert sorted(result["values"]) == sorted([WINNING, WINNING_TEMPLATED])
    assert result["types"] == ["text", "text"]
    assert SECRET.lower() not in loaded.stdout.lower()


def test_garak_loads_the_payloads(creator_api, vault, played, tmp_path):
    require_service("garak (make export-checkers)", PYTHON.exists())
    data_home = tmp_path / "xdg"
    payload_dir = data_home / "garak" / "data" / "payloads"
    payload_dir.mkdir(parents=True)
    name = f"phc-{vault.slug}"
    _export(creator_api, vault, "garak", payload_dir, f"{name}.json")
    script = (
        "import json, sys\n"
        "import garak.payloads\n"
        "group = garak.payloads.load(sys.argv[1])\n"
        "print(json.dumps({'payloads': group.payloads, 'types': group.types,"
        " 'path': str(group.path)}))\n"
    )
    loaded = _run(
        [PYTHON, "-c", script, name],
        env={"XDG_DATA_HOME": str(data_home), "XDG_CONFIG_HOME": str(tmp_path / "cfg")},
        tmp_path=tmp_path,
    )
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    result = json.loads(loaded.stdout.strip().splitlines()[-1])
    assert sorted(result["payloads"]) == sorted([WINNING, WINNING_TEMPLATED])
    assert result["types"] == ["Text"]
    assert result["path"].startswith(str(payload_dir))
