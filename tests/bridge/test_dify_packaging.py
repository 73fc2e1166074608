"""What a Dify user does with integrations/dify/: package the plugin after the README's set-up,
with the README's command, and import the workflow DSL files into a current Dify.

The packaging walk below follows the plugin daemon's (dify-plugin-daemon, its FS decoder):
`.difyignore` lines are gitignore patterns, a path is left out when any pattern excludes
it, an excluded folder is not entered, and symlinks are not followed — a symlink to a
folder (a virtualenv's `lib64`) is read as a file, which stops the packager with
"read …/lib64: is a directory". integrations/dify/check_with_dify.sh runs the daemon's own
CLI and Dify's own import when their sources are at hand.
"""

import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DIFY = ROOT / "integrations" / "dify"
PLUGIN = DIFY / "plugin"
WORKFLOWS = sorted((DIFY / "workflows").glob("*.yml"))
# Dify 1.14.2's CURRENT_APP_DSL_VERSION: an older one makes every import warn.
DSL_VERSION = "0.6.0"
# The daemon's check of a plugin unique identifier (author/name:version@checksum).
PLUGIN_UNIQUE_IDENTIFIER = re.compile(
    r"^(?:([a-z0-9_-]{1,64})/)?([a-z0-9_-]{1,255}):([0-9]{1,4})(\.[0-9]{1,4}){1,3}"
    r"(-\w{1,16})?@[a-f0-9]{32,64}$"
)


# --- The daemon's packaging walk ----------------------------------------------------------


def ignore_patterns(root: Path) -> list[tuple[str, bool]]:
    """(name pattern, folders only) for each line of .difyignore, as the daemon reads it."""
    path = root / ".difyignore"
    if not path.exists():
        path = root / ".gitignore"  # the daemon's fallback
    if not path.exists():
        return []
    patterns = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line.startswith("!"):
            # A "!" line matches as Include, and the daemon acts on Exclude only.
            continue
        dir_only = line.endswith("/")
        name = line.rstrip("/")
        assert "/" not in name, f"{line!r}: this model handles name patterns only; extend it"
        patterns.append((name, dir_only))
    return patterns


def excluded(parts: list[str], is_dir: bool, patterns: list[tuple[str, bool]]) -> bool:
    for name, dir_only in patterns:
        for index, part in enumerate(parts):
            if not fnmatch.fnmatchcase(part, name):
                continue
            if not (dir_only and not is_dir and index == len(parts) - 1):
                return True
            break  # a folders-only pattern naming a file: this pattern does not exclude
    return False


def packaged(root: Path) -> list[str]:
    """The paths the packager would read, in walk order."""
    patterns = ignore_patterns(root)
    files = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        rel = Path(folder).relative_to(root).parts
        for entry in sorted(dirs):
            is_dir = not (Path(folder) / entry).is_symlink()
            if excluded([*rel, entry], is_dir, patterns):
                dirs.remove(entry)
            elif not is_dir:
                files.append("/".join([*rel, entry]))  # a symlinked folder is read as a file
        dirs[:] = [d for d in sorted(dirs) if not (Path(folder) / d).is_symlink()]
        for name in sorted(names):
            if not excluded([*rel, name], False, patterns):
                files.append("/".join([*rel, name]))
    return files


def plugin_after_readme_setup(tmp_path: Path, *, with_ignore_file: bool = True) -> Path:
    """A copy of plugin/ as the README's set-up leaves it: a .venv, caches, a debug .env."""
    copy = tmp_path / "plugin"
    shutil.copytree(
        PLUGIN, copy, ignore=shutil.ignore_patterns(".venv", "__pycache__", "*.difypkg")
    )
    if not with_ignore_file:
        (copy / ".difyignore").unlink()
    venv = copy / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    site = venv / "lib" / "python3.11" / "site-packages" / "dify_plugin"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("")
    (venv / "lib64").symlink_to("lib")
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    for folder in (copy, copy / "tools", copy / "provider"):
        (folder / "__pycache__").mkdir()
        (folder / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (copy / ".env").write_text("INSTALL_METHOD=remote\nREMOTE_INSTALL_KEY=secret\n")
    return copy


def files_the_plugin_declares(root: Path) -> set[str]:
    """The manifest, and every file it and its provider name (what Dify loads)."""
    manifest = yaml.safe_load((root / "manifest.yaml").read_text())
    wanted = {"manifest.yaml", f"{manifest['meta']['runner']['entrypoint']}.py"}
    wanted.add(f"_assets/{manifest['icon']}")
    wanted.add(manifest["privacy"])
    for provider_file in manifest["plugins"]["tools"]:
        wanted.add(provider_file)
        provider = yaml.safe_load((root / provider_file).read_text())
        wanted.add(provider["extra"]["python"]["source"])
        for tool_file in provider["tools"]:
            wanted.add(tool_file)
            tool = yaml.safe_load((root / tool_file).read_text())
            wanted.add(tool["extra"]["python"]["source"])
    return wanted


def test_the_package_holds_the_plugin_and_nothing_else(tmp_path):
    files = packaged(plugin_after_readme_setup(tmp_path))
    assert not [f for f in files if f.startswith(".venv/") or "__pycache__" in f]
    assert not [f for f in files if Path(f).name in ("check_tools.py", "check_team_tool.py")]
    assert ".env" not in files
    assert files_the_plugin_declares(PLUGIN) <= set(files)
    assert {"bridge_client.py", "requirements.txt"} <= set(files)  # the tools import it


def test_a_virtualenv_linked_in_from_elsewhere_stays_out_too(tmp_path):
    copy = plugin_after_readme_setup(tmp_path)
    shutil.move(copy / ".venv", tmp_path / "shared-venv")
    (copy / ".venv").symlink_to(tmp_path / "shared-venv")
    assert not [f for f in packaged(copy) if f.split("/")[0] == ".venv"]


def test_without_the_ignore_file_the_walk_meets_the_venv_symlink(tmp_path):
    # What the daemon refused before .difyignore existed: it reads lib64 as a file.
    files = packaged(plugin_after_readme_setup(tmp_path, with_ignore_file=False))
    assert ".venv/lib64" in files


def test_the_ignore_file_leaves_out_the_check_scripts_that_exist():
    # If a check script is renamed, the ignore file must follow it.
    scripts = {path.name for path in PLUGIN.glob("check_*.py")}
    assert scripts
    assert not scripts & set(packaged(PLUGIN))


# --- The README's package command ---------------------------------------------------------


def readme_shell_steps() -> list[str]:
    text = (DIFY / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    block = next(b for b in blocks if "dify plugin package" in b)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def test_the_readme_packages_the_plugin_from_where_it_says():
    cwd = ROOT  # the README's commands start at the repository root
    package = None
    for step in readme_shell_steps():
        words = shlex.split(step)
        if words[0] == "cd":
            cwd = (cwd / words[1]).resolve()
            assert cwd.is_dir(), step
        elif words[:3] == ["dify", "plugin", "package"]:
            package = (cwd, words[3:])
    assert package, "the README shows no 'dify plugin package' command"
    cwd, args = package
    output = args[args.index("-o") + 1] if "-o" in args else None
    path = [arg for index, arg in enumerate(args) if arg != "-o" and args[index - 1] != "-o"]
    assert len(path) == 1
    assert (cwd / path[0]).resolve() == PLUGIN.resolve()
    # Dify's CLI, without -o, names the package after the folder and refuses "." or "/".
    assert output or os.path.basename(os.path.normpath(path[0])) not in (".", "/")
    if output:
        assert PLUGIN.resolve() not in (cwd / output).resolve().parents


# --- The workflow DSL files ---------------------------------------------------------------


def plugins_used(workflow: dict) -> set[str]:
    """Plugin ids of the model providers and tools the nodes use."""
    used = set()
    for node in workflow["workflow"]["graph"]["nodes"]:
        data = node["data"]
        provider = None
        if data["type"] in ("llm", "question-classifier", "parameter-extractor"):
            provider = data["model"]["provider"]
        elif data["type"] == "tool":
            provider = data["provider_id"]
        if provider:
            parts = provider.split("/")
            used.add("/".join(parts[:2]) if len(parts) == 3 else f"langgenius/{provider}")
    return used


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_each_dsl_file_has_the_current_version_and_names_its_plugins(path):
    workflow = yaml.safe_load(path.read_text())
    assert workflow["version"] == DSL_VERSION  # a string: Dify refuses a number here
    dependencies = workflow["dependencies"]
    assert isinstance(dependencies, list)
    named = set()
    for dependency in dependencies:
        assert dependency == {
            "current_identifier": None,
            "type": "marketplace",
            "value": {
                "marketplace_plugin_unique_identifier": dependency["value"][
                    "marketplace_plugin_unique_identifier"
                ],
                "version": None,
            },
        }
        identifier = dependency["value"]["marketplace_plugin_unique_identifier"]
        assert PLUGIN_UNIQUE_IDENTIFIER.match(identifier), identifier
        named.add(identifier.split(":")[0])
    assert named == plugins_used(workflow)


def test_the_llm_workflows_depend_on_openais_plugin_and_the_team_one_on_none():
    used = {path.name: plugins_used(yaml.safe_load(path.read_text())) for path in WORKFLOWS}
    assert used == {
        "prompt-challenge-judged.yml": {"langgenius/openai"},
        "prompt-challenge.yml": {"langgenius/openai"},
        "team-challenge.yml": set(),
    }


def test_make_variants_writes_the_variants_as_committed(tmp_path):
    copy = tmp_path / "integrations" / "dify" / "workflows"
    shutil.copytree(DIFY / "workflows", copy)
    subprocess.run(
        [sys.executable, str(copy / "make_variants.py")], cwd=tmp_path, check=True, timeout=60
    )
    for name in ("prompt-challenge-judged.yml", "team-challenge.yml"):
        assert (copy / name).read_text() == (DIFY / "workflows" / name).read_text(), name
