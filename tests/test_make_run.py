"""`make run PORT=…` (issue 20.15): the site it serves names that port in printed links,
mails and its CSP, and the development server logs each request once."""

import os
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.servers import ROOT, free_port


def test_make_run_hands_the_port_to_every_command_it_runs():
    plan = subprocess.run(
        ["make", "-n", "run", "PORT=9123"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    commands = [line for line in plan.splitlines() if "manage.py" in line]
    assert len(commands) == 5
    assert all("SITE_URL=http://127.0.0.1:9123" in line for line in commands)
    assert commands[-1].endswith("runserver 127.0.0.1:9123")


@pytest.fixture
def served(tmp_path):
    """The development server as `make run` starts it, on a fresh SQLite file."""
    port = free_port()
    env = {
        **os.environ,
        "DEBUG": "true",
        "SITE_URL": f"http://127.0.0.1:{port}",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "REDIS_URL": "",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    server = subprocess.Popen(
        [*manage, "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/static/img/favicon.svg")
                break
            except OSError:
                assert time.monotonic() < deadline, "runserver did not start"
                time.sleep(0.3)
        yield port, server
    finally:
        server.terminate()


def test_the_served_site_names_its_port_and_logs_each_request_once(served):
    port, server = served

    response = urllib.request.urlopen(f"http://127.0.0.1:{port}/")
    policy = response.headers["Content-Security-Policy"]
    server.terminate()
    output = server.communicate(timeout=30)[0]

    assert f"ws://127.0.0.1:{port}" in policy
    home_lines = [line for line in output.splitlines() if "GET / " in line]
    assert len(home_lines) == 1, output
