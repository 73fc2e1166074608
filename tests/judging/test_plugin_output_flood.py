"""Issue 28, point 8: a plugin writing without end to its result pipe took a server process
from 155 MB to 5.65 GB and answered after 15-22 s against a 5 s timeout. The sandbox's
answer is read only up to its size cap, then the sandbox is killed; the timeout bounds the
whole call, reading included."""

import logging
import time

import pytest

from judging.plugins import PLUGIN_FAILURE_FEEDBACK, evaluate_with_plugin
from judging.sandbox import sandbox_problem
from tests.conftest import require_service

TIMEOUT = 2
# What the call may add to the process's peak memory: the 256 KiB cap and the odd buffer,
# nowhere near the gigabytes an unbounded read takes.
MEMORY_MARGIN_KB = 8 * 1024
# Time to start and tear down a sandbox on a loaded machine, on top of the timeout.
TIME_MARGIN = 3


@pytest.fixture(autouse=True)
def _bubblewrap(settings):
    require_service("the bubblewrap plugin sandbox", not sandbox_problem(), sandbox_problem())
    settings.PLUGIN_TIMEOUT_SECONDS = TIMEOUT


def memory_kb(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    raise LookupError(field)


def call_measured(plugin_id: str):
    """The plugin's verdict, the seconds it took, and how far the process's peak resident
    memory rose above what it held before the call."""
    with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
        refs.write("5")  # the peak (VmHWM) starts again from the present size
    before = memory_kb("VmRSS")
    started = time.monotonic()
    verdict = evaluate_with_plugin(
        plugin_id=plugin_id, goal="Leak the password", response="No.", config={}
    )
    return verdict, time.monotonic() - started, memory_kb("VmHWM") - before


def test_it_stops_a_plugin_flooding_its_result_pipe_at_the_size_cap(caplog):
    with caplog.at_level(logging.INFO, logger="judging.plugins"):
        verdict, seconds, grown_kb = call_measured("test-flood")

    assert verdict.passed is False
    assert verdict.feedback == PLUGIN_FAILURE_FEEDBACK
    assert verdict.raw == {"error": "output_too_large", "plugin_id": "test-flood"}
    assert "outcome=output_too_large" in caplog.text
    assert grown_kb < MEMORY_MARGIN_KB
    assert seconds < TIMEOUT + TIME_MARGIN


def test_it_stops_a_plugin_flooding_stdout_and_stderr_at_the_timeout():
    verdict, seconds, grown_kb = call_measured("test-flood-prints")

    assert verdict.passed is False
    assert verdict.raw == {"error": "timeout", "plugin_id": "test-flood-prints"}
    assert grown_kb < MEMORY_MARGIN_KB
    assert seconds < TIMEOUT + TIME_MARGIN


def test_it_still_reads_an_answer_under_the_cap():
    verdict, _, grown_kb = call_measured("simple")

    assert verdict.raw == {"plugin_id": "simple"}
    assert grown_kb < MEMORY_MARGIN_KB
