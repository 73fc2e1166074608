"""Plugins that misbehave on purpose, for the sandbox's tests. Never use them in a challenge."""

import os
import socket
import stat
import subprocess
import sys
import time
from typing import Any


class RaisingEvaluator:
    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        raise RuntimeError("this evaluator always fails")


class LoopingEvaluator:
    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        n = 0
        while True:
            n += 1


class HungryEvaluator:
    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        hoard = []
        for _ in range(int(config.get("megabytes", 4096))):
            hoard.append(bytearray(1024 * 1024))
        return {"passed": True, "feedback": f"allocated {len(hoard)} MB"}


class NetworkEvaluator:
    """Passes only if it could reach config["host"]:config["port"] over TCP."""

    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        address = (config.get("host", "127.0.0.1"), int(config["port"]))
        with socket.create_connection(address, timeout=2) as connection:
            connection.sendall(b"leak")
        return {"passed": True, "feedback": "reached the network"}


class EscapingNetworkEvaluator:
    """Tries the network from a fresh interpreter, where Python-level guards do not apply."""

    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        host, port = config.get("host", "127.0.0.1"), int(config["port"])
        code = f"import socket; socket.create_connection(({host!r}, {port}), 2).sendall(b'x')"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=3)  # noqa: S603
        return {"passed": done.returncode == 0, "feedback": "tried from a subprocess"}


class DetachingEvaluator:
    """Leaves a child behind in its own session, holding the answer pipe open."""

    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        if os.fork() == 0:
            os.setsid()
            time.sleep(float(config.get("linger_seconds", 3)))
            os._exit(0)
        return {"passed": True, "feedback": "left a child behind"}


class EchoEvaluator:
    """Hands back what it was given, so tests can see exactly what a plugin receives."""

    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        return {
            "passed": True,
            "rating": 15,
            "feedback": "echo",
            "raw": {
                "goal": goal,
                "response": response,
                "config": config,
                "ctx": dict(ctx),
                "environment": sorted(os.environ),
            },
        }


class BadResultEvaluator:
    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> Any:
        return "yes it passed"


class RaisingScorer:
    def score(self, metrics: dict[str, Any], config: dict[str, Any], ctx: dict) -> dict:
        raise ValueError("this scorer always fails")


class LoopingScorer:
    def score(self, metrics: dict[str, Any], config: dict[str, Any], ctx: dict) -> dict:
        while True:
            pass


# --- Escape attempts: each passes only if it got out, and hands back what it saw. -------


def _run_outside_python_guards(code: str) -> subprocess.CompletedProcess:
    # A fresh interpreter has none of the worker's Python-level guards.
    return subprocess.run(  # noqa: S603
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=5
    )


class ReadsFileEvaluator:
    """Reads config["path"] (for instance /etc/shadow)."""

    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        try:
            with open(config["path"], encoding="utf-8", errors="replace") as handle:
                seen = handle.read(4096)
        except OSError as exc:
            return {"passed": False, "raw": {"error": type(exc).__name__}}
        return {"passed": True, "raw": {"seen": seen}}


class ReadsEnvironmentEvaluator:
    """Reads its own environment and the environ files of PID 1 and its parent."""

    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        seen = {"os.environ": dict(os.environ)}
        for pid in sorted({1, os.getppid()}):
            try:
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    seen[f"/proc/{pid}/environ"] = handle.read().decode("utf-8", "replace")
            except OSError as exc:
                seen[f"/proc/{pid}/environ"] = type(exc).__name__
        return {"passed": True, "raw": {"seen": seen}}


class UnixSocketEvaluator:
    """Connects to the Unix socket at config["path"] and sends a line."""

    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        code = (
            "import socket; s = socket.socket(socket.AF_UNIX);"
            f"s.connect({config['path']!r}); s.sendall(b'escaped'); print(s.recv(100))"
        )
        done = _run_outside_python_guards(code)
        return {
            "passed": done.returncode == 0,
            "raw": {"stdout": done.stdout[-500:], "stderr": done.stderr[-300:]},
        }


class WritesFileEvaluator:
    """Writes config["content"] into the file at config["path"]."""

    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        try:
            with open(config["path"], "w", encoding="utf-8") as handle:
                handle.write(config.get("content", "written by a plugin"))
        except OSError as exc:
            return {"passed": False, "raw": {"error": type(exc).__name__}}
        return {"passed": True, "raw": {}}


class OutlivesTimeoutEvaluator:
    """Starts a child in its own session (named by config["marker"]), then hangs."""

    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                code = "import time; time.sleep(60)"
                os.execv(sys.executable, [sys.executable, "-c", code, config["marker"]])
            os._exit(0)
        while True:
            time.sleep(0.1)


class ForkBombEvaluator:
    """Forks up to config["children"] sleeping children; passes if it got them all."""

    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        wanted, forked, error = int(config.get("children", 200)), 0, ""
        for _ in range(wanted):
            try:
                pid = os.fork()
            except OSError as exc:
                error = type(exc).__name__
                break
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            forked += 1
        return {"passed": forked >= wanted, "raw": {"forked": forked, "error": error}}


class FloodingEvaluator:
    """Writes without end to the worker's result pipe: every pipe it holds beside stdin."""

    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        pipes = []
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            try:
                if fd != 0 and stat.S_ISFIFO(os.fstat(fd).st_mode):
                    pipes.append(fd)
            except OSError:
                continue
        flood = b'{"ok": true, "result": {"passed": true, "feedback": "' + b"x" * 65536
        while True:
            for fd in pipes:
                os.write(fd, flood)


class FloodingPrintsEvaluator:
    """Prints without end to stdout and stderr."""

    def evaluate(self, goal: str, response: str, config: dict[str, Any], ctx: dict) -> dict:
        line = "y" * 65536
        while True:
            print(line)
            print(line, file=sys.stderr)
