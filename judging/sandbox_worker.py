"""Runs one plugin call inside the bubblewrap sandbox; standard library only.

Started by judging.sandbox as
`bwrap … -- python -I -S -B /sandbox/worker.py <memory_bytes> <cpu_s> <processes>`
(or `--probe`). When it starts as root of its user namespace (the server runs as root),
it first drops to nobody, so no plugin code ever runs with a capability. Only then are
the resource limits set and site-packages loaded (`-S` keeps their .pth code back until
now). Reads {"entrypoint", "method", "args"} as JSON on stdin and writes one JSON line on
stdout: {"ok": true, "result": ...} or {"ok": false, "error": "<kind>"}. It never writes
the plugin's text or traceback anywhere: the parent logs outcomes only.
"""

import importlib
import json
import os
import resource
import socket
import sys

_NOBODY = 65534
_BLOCKED = "network access is disabled in the plugin sandbox"


class NetworkBlocked(OSError):
    pass


def _refuse(*args, **kwargs):
    raise NetworkBlocked(_BLOCKED)


def drop_root() -> None:
    """Become nobody (no groups, no capabilities) when started as namespace root."""
    if os.getuid() == 0 or os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(_NOBODY, _NOBODY, _NOBODY)
        os.setresuid(_NOBODY, _NOBODY, _NOBODY)
    if 0 in (os.getuid(), os.geteuid(), os.getgid(), os.getegid()):
        raise SystemExit("the sandbox worker must not run as root")


def limit_resources(memory_bytes: int, cpu_seconds: int, processes: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024 * 1024, 1024 * 1024))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def block_network() -> None:
    """Make opening a socket from Python raise, for a clear `network` outcome.

    Not the barrier: the sandbox's empty network namespace is. This only turns the
    plain attempt into an outcome the log can name.
    """
    import _socket

    for module in (socket, _socket):
        for name in (
            "socket",
            "socketpair",
            "fromfd",
            "create_connection",
            "create_server",
            "getaddrinfo",
            "gethostbyname",
            "gethostbyname_ex",
            "gethostbyaddr",
        ):
            if hasattr(module, name):
                setattr(module, name, _refuse)


def _load(entrypoint: str):
    module_name, _, attribute = entrypoint.partition(":")
    target = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target() if isinstance(target, type) else target


def run(request: dict):
    plugin = _load(request["entrypoint"])
    method = getattr(plugin, request["method"])
    return method(**request["args"])


def main() -> int:
    drop_root()
    if sys.argv[1:] == ["--probe"]:
        print("sandboxed")
        return 0
    memory_bytes, cpu_seconds, processes = (int(value) for value in sys.argv[1:4])
    request = json.loads(sys.stdin.read())
    # The result goes out on a private copy of stdout; a plugin's prints go to stderr.
    result_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    limit_resources(memory_bytes, cpu_seconds, processes)
    import site

    site.main()
    block_network()
    try:
        result = run(request)
    except MemoryError:
        text = json.dumps({"ok": False, "error": "memory"})
    except NetworkBlocked:
        text = json.dumps({"ok": False, "error": "network"})
    except BaseException as exc:  # noqa: BLE001 - any plugin failure is a non-pass
        text = json.dumps({"ok": False, "error": "error", "type": type(exc).__name__})
    else:
        try:
            text = json.dumps({"ok": True, "result": result}, allow_nan=False)
        except (TypeError, ValueError):
            text = json.dumps({"ok": False, "error": "bad_result"})
    result_out.write(text + "\n")
    result_out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
