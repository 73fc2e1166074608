"""The plugin sandbox: one call of a plugin's method in a fresh bubblewrap (`bwrap`) sandbox.

New user, PID, network, IPC and UTS namespaces; a file system of read-only binds of only
the interpreter, the standard library, site-packages and the plugin's own editable
sources, plus an empty private /tmp; a clean environment; the worker
(judging/sandbox_worker.py) runs as nobody with RLIMIT_AS, RLIMIT_CPU and RLIMIT_NPROC
set before any plugin code loads; the whole sandbox dies at the timeout, which bounds the
whole call, or as soon as its answer passes 256 KiB (only that much is ever read). Where
bubblewrap cannot start, no plugin runs. Plain data in, plain data out: what a plugin is
and what its answer means is judging/plugins.py's.
"""

import ast
import contextlib
import json
import logging
import math
import os
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

from django.conf import settings

logger = logging.getLogger(__name__)

WORKER = Path(__file__).resolve().with_name("sandbox_worker.py")
_MAX_OUTPUT_BYTES = 256 * 1024
_PIPE_CHUNK = 64 * 1024


@dataclass(frozen=True)
class SandboxOutcome:
    # ok | timeout | memory | network | error | crashed | bad_result | output_too_large
    # | not_found | busy | spawn_failed | sandbox_unavailable
    outcome: str
    result: Any = None
    duration_ms: int = 0


SANDBOX_UNAVAILABLE = "sandbox_unavailable"
# The unprivileged identity plugin code runs as when the server itself runs as root.
_NOBODY = 65534
_SANDBOX_HOME = "/tmp"  # noqa: S108 - the sandbox's own empty tmpfs, not the host's /tmp
_WORKER_IN_SANDBOX = "/sandbox/worker.py"


def _editable_sources(point: EntryPoint) -> list[Path]:
    """Source folders an editable install of the plugin's distribution points at.

    Found from the distribution's own files: path lines of its .pth files, and the
    MAPPING of a setuptools editable finder. Never a folder holding the app itself.
    """
    dist = getattr(point, "dist", None)
    found: list[Path] = []
    for file in (dist.files or []) if dist is not None else []:
        located = Path(str(dist.locate_file(file)))
        try:
            if file.name.endswith(".pth"):
                for line in located.read_text(encoding="utf-8").splitlines():
                    line = line.strip()
                    if line and not line.startswith(("#", "import ", "import\t")):
                        found.append(located.parent / line)
            elif file.name.startswith("__editable___") and file.name.endswith("_finder.py"):
                found.extend(Path(value) for value in _finder_mapping(located))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
    app = Path(settings.BASE_DIR).resolve()
    sources = []
    for candidate in found:
        resolved = candidate.resolve()
        if resolved.exists() and not app.is_relative_to(resolved):
            sources.append(resolved)
    return sources


def _finder_mapping(finder: Path) -> list[str]:
    for node in ast.parse(finder.read_text(encoding="utf-8")).body:
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
        if any(getattr(target, "id", "") == "MAPPING" for target in targets):
            mapping = ast.literal_eval(node.value)
            return [value for value in mapping.values() if isinstance(value, str)]
    return []


def _python_binds() -> tuple[str, dict[str, str]]:
    """(interpreter path inside the sandbox, {destination: host source}) for the
    interpreter, the standard library, the shared libraries it links and site-packages."""
    executable = os.path.realpath(sys.executable)
    binds = {executable: executable}
    paths = sysconfig.get_paths()
    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    for key in ("stdlib", "platstdlib"):
        binds[base[key]] = os.path.realpath(base[key])
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    shared = sysconfig.get_config_var("INSTSONAME") or ""
    if libdir and shared and os.path.exists(os.path.join(libdir, shared)):
        library = os.path.join(libdir, shared)
        binds[library] = os.path.realpath(library)
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    system_libs = [f"/usr/lib/{multiarch}" if multiarch else "/usr/lib", "/usr/lib64"]
    if not os.path.islink("/lib"):
        system_libs += [f"/lib/{multiarch}" if multiarch else "/lib", "/lib64"]
    for folder in system_libs:
        if os.path.isdir(folder) and not os.path.islink(folder):
            binds[folder] = os.path.realpath(folder)
    interpreter = executable
    if sys.prefix != sys.base_prefix:
        # A virtualenv: its pyvenv.cfg and site-packages, run through a link at its path.
        binds[os.path.join(sys.prefix, "pyvenv.cfg")] = os.path.join(sys.prefix, "pyvenv.cfg")
        for key in ("purelib", "platlib"):
            binds[paths[key]] = os.path.realpath(paths[key])
        interpreter = os.path.join(sys.prefix, "bin", "python")
    return interpreter, binds


def _parents(path: str) -> list[str]:
    return [str(parent) for parent in reversed(Path(path).parents) if str(parent) != "/"]


def _bwrap_command(
    *, binds: dict[str, str], interpreter: str, worker_args: list[str], userns_fd: int | None
) -> list[str]:
    command = [shutil.which("bwrap") or "bwrap"]
    if userns_fd is None:
        command += ["--unshare-user", "--disable-userns", "--uid", str(_NOBODY)]
        command += ["--gid", str(_NOBODY)]
    else:
        # Root cannot count processes (RLIMIT_NPROC spares uid 0): the worker starts as
        # root of a namespace that maps only 0 and nobody, and drops to nobody itself.
        command += ["--userns", str(userns_fd), "--uid", "0", "--gid", "0"]
    command += [
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "sandbox",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--setenv",
        "HOME",
        _SANDBOX_HOME,
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
    ]
    # The private /tmp first: binds made after it stay visible when the venv or the plugin
    # lives under the host's /tmp (a checkout there, as CI's may be).
    tmp_bytes = int(getattr(settings, "PLUGIN_TMP_LIMIT_MB", 16)) * 1024 * 1024
    command += ["--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", _SANDBOX_HOME]
    folders = sorted({parent for dest in [*binds, interpreter] for parent in _parents(dest)})
    for folder in folders:
        if not any(Path(folder).is_relative_to(dest) for dest in binds):
            command += ["--perms", "0755", "--dir", folder]
    for dest, source in sorted(binds.items()):
        command += ["--ro-bind", source, dest]
    for top in ("/lib", "/lib64"):
        # Merged /usr (Debian 12): /lib and /lib64 are links into the folders bound above.
        if os.path.islink(top):
            command += ["--symlink", os.readlink(top), top]
    if interpreter not in binds:
        command += ["--symlink", os.path.realpath(sys.executable), interpreter]
    command += ["--ro-bind", str(WORKER), _WORKER_IN_SANDBOX]
    command += ["--proc", "/proc", "--dev", "/dev"]
    command += ["--remount-ro", "/", "--chdir", _SANDBOX_HOME]
    # -S: site-packages (and their .pth code) load only after the worker dropped root.
    command += ["--", interpreter, "-I", "-S", "-B", _WORKER_IN_SANDBOX, *worker_args]
    return command


@contextlib.contextmanager
def _user_namespace():
    """A fresh user namespace mapping only root and nobody, as an fd (root only)."""
    if os.geteuid() != 0:
        yield None
        return
    holder = subprocess.Popen(  # noqa: S603 - fixed arguments
        [shutil.which("unshare") or "unshare", "--user", "--", "cat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={},
        close_fds=True,
    )
    fd = None
    try:
        own = os.readlink("/proc/self/ns/user")
        deadline = time.monotonic() + 2
        while os.readlink(f"/proc/{holder.pid}/ns/user") == own:
            if holder.poll() is not None or time.monotonic() > deadline:
                raise OSError("unshare --user did not start")
            time.sleep(0.0005)
        mapping = f"0 0 1\n{_NOBODY} {_NOBODY} 1\n"
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{holder.pid}/{name}", "w", encoding="ascii") as handle:
                handle.write(mapping)
        fd = os.open(f"/proc/{holder.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        if holder.stdin is not None:
            holder.stdin.close()
        holder.kill()
        holder.wait()
    try:
        yield fd
    finally:
        os.close(fd)


def sandbox_command(
    *, entrypoint_point: EntryPoint | None, worker_args: list[str], userns_fd: int | None
) -> list[str]:
    interpreter, binds = _python_binds()
    if entrypoint_point is not None:
        for source in _editable_sources(entrypoint_point):
            binds.setdefault(str(source), str(source))
    return _bwrap_command(
        binds=binds, interpreter=interpreter, worker_args=worker_args, userns_fd=userns_fd
    )


@lru_cache(maxsize=1)
def sandbox_problem() -> str:
    """Why plugins cannot run here ("" when bubblewrap works); probed once per process."""
    if not shutil.which("bwrap"):
        return "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    try:
        with _user_namespace() as userns_fd:
            command = sandbox_command(
                entrypoint_point=None, worker_args=["--probe"], userns_fd=userns_fd
            )
            probe = subprocess.run(  # noqa: S603 - our bwrap, interpreter and worker
                command,
                capture_output=True,
                timeout=10,
                check=False,
                env={},
                pass_fds=() if userns_fd is None else (userns_fd,),
            )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the bubblewrap sandbox could not start ({type(exc).__name__})"
    if probe.returncode != 0 or probe.stdout.strip() != b"sandboxed":
        detail = probe.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return f"the bubblewrap sandbox does not work here: {detail[0][:200]}"
    return ""


def _sandbox_start(*, point: EntryPoint, timeout: float, userns_fd: int | None) -> subprocess.Popen:
    memory_bytes = int(getattr(settings, "PLUGIN_MEMORY_LIMIT_MB", 256)) * 1024 * 1024
    processes = int(getattr(settings, "PLUGIN_MAX_PROCESSES", 8))
    worker_args = [str(memory_bytes), str(math.ceil(timeout) + 1), str(processes)]
    return subprocess.Popen(  # noqa: S603 - our bwrap, interpreter and worker only
        sandbox_command(entrypoint_point=point, worker_args=worker_args, userns_fd=userns_fd),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={},
        cwd="/",
        start_new_session=True,
        close_fds=True,
        pass_fds=() if userns_fd is None else (userns_fd,),
    )


def _kill(process: subprocess.Popen) -> None:
    """Kill the sandbox and reap it. bwrap leads its own process group; killing it takes
    down the sandbox's PID namespace (--die-with-parent), a plugin's children with it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=1)


def _exchange(process: subprocess.Popen, request: bytes, *, deadline: float) -> tuple[str, bytes]:
    """Send the request and read the answer until the sandbox closes its end: ("", the
    answer), or what cut it short — "timeout" at the deadline, "output_too_large" as soon
    as more than _MAX_OUTPUT_BYTES came — so neither the time nor the memory a call takes
    depends on what the plugin writes."""
    stdin, stdout = process.stdin.fileno(), process.stdout.fileno()
    os.set_blocking(stdin, False)
    os.set_blocking(stdout, False)
    pending = memoryview(request)
    received = bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(stdout, selectors.EVENT_READ)
        selector.register(stdin, selectors.EVENT_WRITE)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout", b""
            for key, _ in selector.select(remaining):
                if key.fd == stdin:
                    try:
                        pending = pending[os.write(stdin, pending[:_PIPE_CHUNK]) :]
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        pending = pending[:0]  # the worker stopped reading; its answer says why
                    if not pending:
                        selector.unregister(stdin)
                        process.stdin.close()
                    continue
                try:
                    chunk = os.read(stdout, _MAX_OUTPUT_BYTES + 1 - len(received))
                except BlockingIOError:
                    continue
                if not chunk:
                    return "", bytes(received)
                received += chunk
                if len(received) > _MAX_OUTPUT_BYTES:
                    return "output_too_large", b""


@lru_cache(maxsize=1)
def _slots() -> threading.BoundedSemaphore:
    return threading.BoundedSemaphore(max(1, int(getattr(settings, "PLUGIN_MAX_CONCURRENT", 4))))


def sandbox_call(*, point: EntryPoint, method: str, args: dict[str, Any]) -> SandboxOutcome:
    """One plugin call in a fresh bubblewrap sandbox; never raises for the plugin's faults.

    Where no such sandbox can start, no plugin runs: the outcome is `sandbox_unavailable`.
    """
    problem = sandbox_problem()
    if problem:
        logger.error("plugin sandbox unavailable, plugins cannot run: %s", problem)
        return SandboxOutcome(outcome=SANDBOX_UNAVAILABLE)
    timeout = float(getattr(settings, "PLUGIN_TIMEOUT_SECONDS", 5))
    # A burst of calls must not fork without bound; a call that waits a whole timeout
    # for a free slot gives up.
    if not _slots().acquire(timeout=timeout):
        return SandboxOutcome(outcome="busy", duration_ms=int(timeout * 1000))
    try:
        return _sandbox_run(point=point, method=method, args=args, timeout=timeout)
    finally:
        _slots().release()


def _sandbox_run(
    *, point: EntryPoint, method: str, args: dict[str, Any], timeout: float
) -> SandboxOutcome:
    started = time.monotonic()

    def finish(outcome: str, result: Any = None) -> SandboxOutcome:
        duration_ms = int((time.monotonic() - started) * 1000)
        return SandboxOutcome(outcome=outcome, result=result, duration_ms=duration_ms)

    try:
        with _user_namespace() as userns_fd:
            process = _sandbox_start(point=point, timeout=timeout, userns_fd=userns_fd)
    except OSError:
        return finish("spawn_failed")
    request = json.dumps({"entrypoint": point.value, "method": method, "args": args})
    try:
        cut_short, stdout = _exchange(process, request.encode(), deadline=started + timeout)
    finally:
        _kill(process)
    if cut_short:
        return finish(cut_short)
    try:
        answer = json.loads(stdout.decode("utf-8").strip().splitlines()[-1])
    except (ValueError, IndexError, UnicodeDecodeError):
        # No answer line: killed by a limit (memory, CPU) or exited on its own.
        return finish("crashed")
    if not isinstance(answer, dict):
        return finish("crashed")
    if not answer.get("ok"):
        return finish(str(answer.get("error") or "error"))
    return finish("ok", answer.get("result"))
