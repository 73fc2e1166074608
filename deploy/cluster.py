# ruff: noqa: S603 - every command here is ours, run with arguments this module builds
"""`make cluster`: the deployment described by deploy/ on one machine.

nginx on one port in front of three uvicorn processes (each standing for a host of its
own: they share nothing but PostgreSQL and Redis), two Celery workers and one beat, a
PostgreSQL primary with a streaming replica made by pg_basebackup, and one Redis. The
processes are started from the systemd units in deploy/systemd/ and the env files in
deploy/env/ (ExecStart, EnvironmentFile and ${NAME} expanded as systemd would), nginx from
deploy/nginx/: the files a host would install, rendered once into the state directory.

All state lives in PHC_CLUSTER_DIR (default .cluster/, gitignored); ports come from
PHC_CLUSTER_*_PORT(S) (defaults 18600-18613) and are kept in its cluster.json, so later
commands find the same ones.

    python deploy/cluster.py start | stop | status | env
    python deploy/cluster.py restart [NAME…]  # rolling: one process at a time (default all)
    python deploy/cluster.py render DIR       # the files for a host, with its own values
"""

import argparse
import contextlib
import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import string
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
STATE = Path(os.environ.get("PHC_CLUSTER_DIR", ROOT / ".cluster")).resolve()
POSTGRES_BIN = Path("/usr/lib/postgresql")
DATABASE = "phc"
WEB_NAMES = ("web-a", "web-b", "web-c")
WORKER_NAMES = ("worker-1", "worker-2")


@dataclass(frozen=True)
class Topology:
    http: int
    primary: int
    replica: int
    redis: int
    web: tuple[int, ...]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http}"

    def web_url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.web[WEB_NAMES.index(name)]}"

    def database_url(self, port: int | None = None) -> str:
        return f"postgres://postgres@127.0.0.1:{port or self.primary}/{DATABASE}"

    @property
    def replica_url(self) -> str:
        return self.database_url(self.replica)

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis}/0"


def topology() -> Topology:
    """The ports of the cluster in STATE, or of a new one from the environment."""
    saved = STATE / "cluster.json"
    if saved.exists():
        data = json.loads(saved.read_text())
        return Topology(**{**data, "web": tuple(data["web"])})
    web = os.environ.get("PHC_CLUSTER_WEB_PORTS", "18611,18612,18613")
    return Topology(
        http=int(os.environ.get("PHC_CLUSTER_HTTP_PORT", 18600)),
        primary=int(os.environ.get("PHC_CLUSTER_PG_PORT", 18601)),
        replica=int(os.environ.get("PHC_CLUSTER_REPLICA_PORT", 18602)),
        redis=int(os.environ.get("PHC_CLUSTER_REDIS_PORT", 18603)),
        web=tuple(int(port) for port in web.split(",")),
    )


# --- rendering deploy/ -------------------------------------------------------------------


def values(cluster: Topology, secret_key: str = "") -> dict[str, str]:
    """What the ${PHC_...} names in deploy/ stand for in this cluster."""
    upstream = "\n".join(
        f"    server 127.0.0.1:{port} max_fails=1 fail_timeout=2s;" for port in cluster.web
    )
    return {
        "PHC_ROOT": str(ROOT),
        "PHC_STATE": str(STATE),
        "PHC_ENV_DIR": str(STATE / "env"),
        "PHC_SECRET_KEY": secret_key,
        "PHC_DATABASE_URL": cluster.database_url(),
        "PHC_REPLICA_URLS": cluster.replica_url,
        "PHC_REDIS_URL": cluster.redis_url,
        "PHC_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "PHC_SITE_URL": cluster.base_url,
        "PHC_TRUSTED_PROXIES": "127.0.0.1",
        "PHC_SECURE_SSL_REDIRECT": "false",
        "PHC_SECURE_HSTS_SECONDS": "0",
        "PHC_SECURE_COOKIES": "false",
        "PHC_EGRESS_ALLOW_HOSTS": "127.0.0.1",
        "PHC_WEB_HOST": "127.0.0.1",
        "PHC_WEB_WORKERS": os.environ.get("PHC_CLUSTER_WEB_WORKERS", "1"),
        "PHC_WORKER_CONCURRENCY": os.environ.get("PHC_CLUSTER_WORKER_CONCURRENCY", "1"),
        "PHC_LISTEN": f"127.0.0.1:{cluster.http}",
        "PHC_ACCESS_LOG": "off",
        "PHC_UPSTREAM_SERVERS": upstream,
    }


def render_files(mapping: dict[str, str], target: Path) -> None:
    """deploy/'s env files, units and nginx files with ${PHC_...} filled in, into `target`;
    other ${NAME}s (systemd's, from the env files) and nginx's $names stay as they are."""
    for folder in ("env", "systemd", "nginx"):
        (target / folder).mkdir(parents=True, exist_ok=True)
        for source in sorted((DEPLOY / folder).iterdir()):
            text = string.Template(source.read_text()).safe_substitute(mapping)
            (target / folder / source.name).write_text(text)


def read_env_file(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            found[name.strip()] = value.strip()
    return found


def unit_command(unit: str, instance: str = "") -> tuple[list[str], dict[str, str], Path]:
    """A rendered unit's ExecStart, environment and working directory, as systemd runs it."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")}
    env["LANG"] = "C.UTF-8"
    command, cwd = "", ROOT
    for line in (STATE / "systemd" / unit).read_text().splitlines():
        name, _, value = line.partition("=")
        if name == "EnvironmentFile":
            env.update(read_env_file(Path(value)))
        elif name == "ExecStart":
            command = value
        elif name == "WorkingDirectory":
            cwd = Path(value)
    command = command.replace("%i", instance).replace("%H", socket.gethostname())
    return shlex.split(string.Template(command).substitute(env)), env, cwd


# --- processes --------------------------------------------------------------------------


def _pid_file(name: str) -> Path:
    return STATE / "run" / f"{name}.pid"


def pid_of(name: str) -> int | None:
    try:
        pid = int(_pid_file(name).read_text())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return None if _zombie(pid) else pid


def _zombie(pid: int) -> bool:
    # Dead but not reaped: a container's init may never reap what a finished `make` left.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def spawn(name: str, argv: list[str], env: dict[str, str], cwd: Path) -> int:
    """`argv` in a session of its own (its children stop with it), output to logs/."""
    log = open(STATE / "logs" / f"{name}.log", "ab")  # noqa: SIM115 - the child keeps it
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    log.close()
    _pid_file(name).write_text(str(process.pid))
    return process.pid


def wait_listening(port: int, seconds: float = 60, *, name: str = "") -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        if name and pid_of(name) is None:
            raise RuntimeError(f"{name} exited; see {STATE / 'logs' / (name + '.log')}")
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port} after {seconds} s")


def web_start(name: str, cluster: Topology | None = None) -> None:
    cluster = cluster or topology()
    port = cluster.web[WEB_NAMES.index(name)]
    if pid_of(name) is None:
        spawn(name, *unit_command("phc-web@.service", str(port)))
    wait_listening(port, 120, name=name)


def worker_start(name: str) -> None:
    if pid_of(name) is None:
        spawn(name, *unit_command("phc-worker@.service", name.rsplit("-", 1)[1]))


def beat_start() -> None:
    if pid_of("beat") is None:
        spawn("beat", *unit_command("phc-beat.service"))


def signal_process(name: str, signum: int) -> int | None:
    """`signum` to the process `name` and its children (its session's group)."""
    pid = pid_of(name)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signum)
    return pid


def wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            # Our own child when a test started the cluster: reap it, or it lingers.
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if _zombie(pid):
            return True
        time.sleep(0.05)
    return False


def process_stop(name: str, seconds: float = 20) -> None:
    pid = signal_process(name, signal.SIGTERM)
    if pid is not None and not wait_gone(pid, seconds):
        signal_process(name, signal.SIGKILL)
        wait_gone(pid, 5)
    _pid_file(name).unlink(missing_ok=True)


# --- PostgreSQL, Redis, nginx ----------------------------------------------------------


def pg_bin() -> Path:
    versions = sorted(POSTGRES_BIN.glob("*/bin/initdb"), key=lambda path: int(path.parts[-3]))
    if not versions:
        raise RuntimeError("PostgreSQL's server binaries are missing (apt-get install postgresql)")
    return versions[-1].parent


def _as_postgres(*argv: str, **kwargs) -> subprocess.CompletedProcess:
    # PostgreSQL refuses to run as root: its data and processes belong to `postgres`.
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return subprocess.run([*prefix, *argv], check=True, **kwargs)


def pg_data(node: str) -> Path:
    return STATE / f"pg-{node}"


def pg_ctl(node: str, *args: str) -> None:
    data = pg_data(node)
    _as_postgres(
        str(pg_bin() / "pg_ctl"),
        "-D",
        str(data),
        "-w",
        "-t",
        "60",
        *args,
        stdout=subprocess.DEVNULL,
    )


def pg_start(node: str, cluster: Topology | None = None) -> None:
    cluster = cluster or topology()
    port = cluster.primary if node == "primary" else cluster.replica
    data = pg_data(node)
    if (data / "postmaster.pid").exists() and _pg_ready(port):
        return
    # Sockets and logs outside the data directories, which pg_basebackup copies.
    run = STATE / "pg"
    run.mkdir(exist_ok=True)
    _pg_own(run)
    data.chmod(0o700)
    pg_ctl(node, "-o", f"-p {port} -k {run}", "-l", str(run / f"{node}.log"), "start")


def pg_stop(node: str, mode: str = "fast") -> None:
    if (pg_data(node) / "postmaster.pid").exists():
        pg_ctl(node, "-m", mode, "stop")


def _pg_ready(port: int) -> bool:
    ready = subprocess.run(
        [str(pg_bin() / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port)], check=False
    )
    return ready.returncode == 0


def _pg_own(path: Path) -> None:
    if os.geteuid() == 0:
        shutil.chown(path, user="postgres")


def _pg_include_deploy_conf(data: Path) -> None:
    conf = data / "postgresql.conf"
    line = f"include '{DEPLOY / 'postgresql' / 'cluster.conf'}'\n"
    if line not in conf.read_text():
        with conf.open("a") as out:
            out.write(line)


def _pg_data_new(node: str) -> Path | None:
    """`node`'s data directory, made and owned by postgres; None when it holds a cluster."""
    data = pg_data(node)
    if (data / "PG_VERSION").exists():
        return None
    data.mkdir(parents=True)
    _pg_own(data)
    return data


def pg_primary_init(cluster: Topology) -> None:
    data = _pg_data_new("primary")
    if data is None:
        return
    _as_postgres(
        str(pg_bin() / "initdb"),
        "-D",
        str(data),
        "-A",
        "trust",
        "-U",
        "postgres",
        "--no-sync",
        "-E",
        "UTF8",
        stdout=subprocess.DEVNULL,
    )
    _pg_include_deploy_conf(data)
    pg_start("primary", cluster)
    _as_postgres(
        str(pg_bin() / "createdb"), "-h", "127.0.0.1", "-p", str(cluster.primary), DATABASE
    )


def pg_replica_init(cluster: Topology) -> None:
    data = _pg_data_new("replica")
    if data is None:
        return
    # -R: standby.signal and primary_conninfo; -X stream: the WAL written meanwhile too.
    _as_postgres(
        str(pg_bin() / "pg_basebackup"),
        "-h",
        "127.0.0.1",
        "-p",
        str(cluster.primary),
        "-U",
        "postgres",
        "-D",
        str(data),
        "-R",
        "-X",
        "stream",
        "-c",
        "fast",
    )


def redis_start(cluster: Topology | None = None) -> None:
    cluster = cluster or topology()
    if pid_of("redis") is None:
        # No persistence, as in production: a restart comes back empty (docs/outages.md).
        argv = [
            "redis-server",
            "--port",
            str(cluster.redis),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--loglevel",
            "warning",
            "--dir",
            str(STATE / "redis"),
        ]
        spawn("redis", argv, {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, STATE)
    wait_listening(cluster.redis, 30, name="redis")


def nginx_binary() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else "")
    if not found:
        raise RuntimeError("nginx is missing: apt-get install -y nginx")
    return found


def _nginx(*args: str) -> None:
    conf = STATE / "nginx" / "nginx.conf"
    subprocess.run(
        [nginx_binary(), "-p", str(STATE / "nginx"), "-c", str(conf), *args],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def nginx_pid() -> int | None:
    with contextlib.suppress(OSError, ValueError):
        pid = int((STATE / "nginx" / "nginx.pid").read_text())
        os.kill(pid, 0)
        return pid
    return None


def nginx_start(cluster: Topology) -> None:
    for folder in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (STATE / "nginx" / folder).mkdir(parents=True, exist_ok=True)
    _nginx("-t")
    if nginx_pid() is None:
        _nginx()
    else:
        _nginx("-s", "reload")  # the site as rendered now
    wait_listening(cluster.http, 30)


# --- the whole ---------------------------------------------------------------------------


def django_env() -> tuple[dict[str, str], Path]:
    """The web processes' environment, for manage.py commands and the tests."""
    _, env, cwd = unit_command("phc-web@.service", "0")
    return env, cwd


def start() -> Topology:
    cluster = topology()
    for folder in ("run", "logs", "redis", "env"):
        (STATE / folder).mkdir(parents=True, exist_ok=True)
    (STATE / "cluster.json").write_text(json.dumps(asdict(cluster)))
    key_file = STATE / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
    render_files(values(cluster, key_file.read_text().strip()), STATE)
    pg_primary_init(cluster)
    pg_start("primary", cluster)
    pg_replica_init(cluster)
    pg_start("replica", cluster)
    redis_start(cluster)
    env, cwd = django_env()
    python = str(ROOT / ".venv" / "bin" / "python")
    subprocess.run(
        [python, "manage.py", "migrate", "--no-input", "-v", "0"], env=env, cwd=cwd, check=True
    )
    if not (ROOT / "staticfiles").exists():
        subprocess.run(
            [python, "manage.py", "collectstatic", "--no-input", "-v", "0"],
            env=env,
            cwd=cwd,
            check=True,
        )
    for name in WEB_NAMES:
        web_start(name, cluster)
    for name in WORKER_NAMES:
        worker_start(name)
    beat_start()
    nginx_start(cluster)
    (STATE / "test.env").write_text(
        f"DATABASE_URL={cluster.database_url()}\nREDIS_URL={cluster.redis_url}\n"
        f"DATABASE_REPLICA_URLS={cluster.replica_url}\nPHC_CLUSTER_DIR={STATE}\n"
        # The tests' own connections, unpooled: a fault test ends them with the server.
        "DB_POOL_SIZE=0\n"
    )
    return cluster


def heal() -> None:
    """Start again whatever of a started cluster is down (as systemd's Restart=always
    would); a fault test leaves the cluster whole with this."""
    cluster = topology()
    pg_start("primary", cluster)
    pg_start("replica", cluster)
    redis_start(cluster)
    for name in WEB_NAMES:
        web_start(name, cluster)
    for name in WORKER_NAMES:
        worker_start(name)
    beat_start()
    nginx_start(cluster)


def running() -> bool:
    """Whether a cluster answers on its ports (every process of it up)."""
    if not (STATE / "cluster.json").exists():
        return False
    names = [*WEB_NAMES, *WORKER_NAMES, "beat", "redis"]
    return nginx_pid() is not None and all(pid_of(name) is not None for name in names)


def stop() -> None:
    pid = nginx_pid()
    if pid is not None:
        os.kill(pid, signal.SIGQUIT)
        wait_gone(pid, 10)
    for name in (*WEB_NAMES, *WORKER_NAMES, "beat"):
        process_stop(name)
    process_stop("redis", 5)
    for node in ("replica", "primary"):
        with contextlib.suppress(subprocess.CalledProcessError):
            pg_stop(node)


def rolling_restart(names: tuple[str, ...] = (*WEB_NAMES, *WORKER_NAMES, "beat")) -> None:
    """One process at a time: SIGTERM (websockets closed with 1001, requests in flight
    finished), start it again, wait until it listens, then the next. nginx sends new
    requests to the others meanwhile."""
    cluster = topology()
    render_files(values(cluster, (STATE / "secret_key").read_text().strip()), STATE)
    for name in names:
        process_stop(name)
        if name in WEB_NAMES:
            web_start(name, cluster)
        elif name in WORKER_NAMES:
            worker_start(name)
        else:
            beat_start()


def status() -> dict[str, int | None]:
    names = [*WEB_NAMES, *WORKER_NAMES, "beat", "redis"]
    found: dict[str, int | None] = {name: pid_of(name) for name in names}
    found["nginx"] = nginx_pid()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["start", "stop", "status", "env", "render", "restart"])
    parser.add_argument(
        "target", nargs="*", help="render: the directory to write to; restart: process names"
    )
    args = parser.parse_args()
    if args.action == "start":
        cluster = start()
        print(
            f"cluster: {cluster.base_url} (nginx) in front of "
            + ", ".join(
                f"{name} :{port}" for name, port in zip(WEB_NAMES, cluster.web, strict=True)
            )
            + f"; PostgreSQL :{cluster.primary} (replica :{cluster.replica}),"
            f" Redis :{cluster.redis}; state and logs in {STATE}"
        )
    elif args.action == "stop":
        stop()
    elif args.action == "status":
        for name, pid in status().items():
            print(f"{name:10} {pid or 'stopped'}")
    elif args.action == "restart":
        rolling_restart(tuple(args.target) or (*WEB_NAMES, *WORKER_NAMES, "beat"))
    elif args.action == "env":
        print((STATE / "test.env").read_text(), end="")
    else:
        if not args.target:
            parser.error("render needs a directory")
        mapping = {name: os.environ.get(name, f"${{{name}}}") for name in values(topology())}
        render_files(mapping, Path(args.target[0]))


if __name__ == "__main__":
    sys.exit(main())
