"""Plugins that misbehave on purpose, for the sandbox's tests. Never use them in a challenge."""

import os
import socket
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
