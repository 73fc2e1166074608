#!/usr/bin/env bash
# A maintainer's check, not part of `make test`: Dify's own code against our files.
#
#  1. DSL import and publish — Dify's console code (AppDslService.import_app, then
#     WorkflowService.publish_workflow, through dify_import_check.py) imports each
#     workflows/*.yml into a throwaway database and must answer `completed` (no DSL version
#     warning) with our `dependencies`, then publish it.
#     Checked against Dify 1.14.2, upstream commit ad96501e091cb614b7dc287d761a7637989f5391
#     (DSL 0.6.0). langgenius/dify itself is too large to fetch here; the fork
#     BlueSkyXN/dify carries that exact upstream commit: `git archive ad96501e api dify-agent`.
#  2. Plugin packaging — the plugin daemon's packaging code (dify-plugin-daemon at bdb5642a)
#     packages plugin/ exactly as the README says, after the README's own set-up (a real
#     .venv inside plugin/, made here with `python3 -m venv`, plus a __pycache__), and the
#     package must hold no .venv, cache or check script. Either the daemon's CLI
#     (`dify plugin package ./plugin -o …`), or, with no Go module proxy, daemon_packager/:
#     a few lines of ours (main.go) calling the same daemon functions as the CLI's package
#     command (decoder.NewFSPluginDecoder, packager.NewPackager(…).Pack) and then the
#     daemon's upload-time decoding of the .difypkg (NewZipPluginDecoderWithSizeLimit,
#     UniqueIdentity, NewZipPluginDecoderWithThirdPartySignatureVerificationConfig,
#     Manifest, ManifestValidate, Assets), built `-mod=vendor` from local git mirrors of
#     each dependency's GitHub repository (daemon_packager/assemble_vendor.py lists them).
#     Then the same packaging without plugin/.difyignore must fail with the daemon's
#     "read …/.venv/lib64: is a directory": proof the check sees the real set-up.
#
# Each step runs when what it needs is present and says so when it is skipped:
#   DIFY_API     Dify's api/ folder at that commit
#   DIFY_PYTHON  a Python 3.12 with Dify's API dependencies (from api/uv.lock; the
#                git-pinned flask-restx can come from PyPI's flask-restx)
#   DIFY_DB_*    PostgreSQL for a throwaway database (default: postgres@127.0.0.1:5432,
#                database dify_dsl_check, dropped and made anew), Redis REDIS_URL-like
#                DIFY_REDIS_HOST/PORT/DB (default 127.0.0.1:6379/5)
#   DIFY_CLI     Dify's plugin CLI binary; or DAEMON_SRC (dify-plugin-daemon source at
#                bdb5642a, e.g. `git -C <mirror> archive bdb5642a | tar -x -C "$DAEMON_SRC"`)
#                and `go` (1.26+), with either
#                MIRRORS    a directory of bare git mirrors, <owner>+<name>/repo, of the
#                           GitHub repositories assemble_vendor.py names (default
#                           /work/.mirror): the offline daemon_packager build, or
#                           the Go module proxy, to build the daemon's CLI.
#                DIFYPACK   instead: an already built daemon_packager binary.
#
#   DIFY_API=… DIFY_PYTHON=… DAEMON_SRC=… integrations/dify/check_with_dify.sh
set -uo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
failed=0
ran=0

# --- 1. Dify's DSL import and publish ------------------------------------------------------
if [[ -n "${DIFY_API:-}" && -x "${DIFY_PYTHON:-}" && -f "${DIFY_API}/app_factory.py" ]]; then
  db="${DIFY_DB_DATABASE:-dify_dsl_check}"
  export DB_TYPE=postgresql DB_HOST="${DIFY_DB_HOST:-127.0.0.1}" DB_PORT="${DIFY_DB_PORT:-5432}"
  export DB_USERNAME="${DIFY_DB_USERNAME:-postgres}" DB_PASSWORD="${DIFY_DB_PASSWORD:-}"
  export DB_DATABASE="$db"
  export REDIS_HOST="${DIFY_REDIS_HOST:-127.0.0.1}" REDIS_PORT="${DIFY_REDIS_PORT:-6379}"
  export REDIS_DB="${DIFY_REDIS_DB:-5}" REDIS_PASSWORD="" REDIS_KEY_PREFIX="dify-dsl-check:"
  export CELERY_BROKER_URL="redis://${REDIS_HOST}:${REDIS_PORT}/${REDIS_DB}"
  export SECRET_KEY="dsl-check-only" STORAGE_TYPE=opendal OPENDAL_SCHEME=fs
  export OPENDAL_FS_ROOT="$WORK/storage"
  # Marketplace on, as a default Dify has it: with no network, a file that made Dify ask
  # the marketplace for its plugins fails here, as it does for an offline Dify.
  export MARKETPLACE_ENABLED="${MARKETPLACE_ENABLED:-true}"
  "$DIFY_PYTHON" - "$db" <<'PY' || exit 1
import sys
import psycopg2  # Dify's own driver, in its environment
from os import environ as env
conn = psycopg2.connect(host=env["DB_HOST"], port=env["DB_PORT"], user=env["DB_USERNAME"],
                        password=env["DB_PASSWORD"] or None, dbname="postgres")
conn.autocommit = True
with conn.cursor() as cursor:
    cursor.execute(f'DROP DATABASE IF EXISTS "{sys.argv[1]}"')
    cursor.execute(f'CREATE DATABASE "{sys.argv[1]}"')
PY
  echo "== Dify DSL import and publish ($DIFY_API)"
  (cd "$DIFY_API" && "$DIFY_PYTHON" "$HERE/dify_import_check.py" "$HERE"/workflows/*.yml) \
    2> "$WORK/dify.log" | grep -v '^INFO'
  status=${PIPESTATUS[0]}
  if [[ $status -ne 0 ]]; then
    failed=1
    echo "   Dify refused something (its log: the last lines below)"
    tail -20 "$WORK/dify.log"
  fi
  ran=$((ran + 1))
else
  echo "== skipped: Dify DSL import (set DIFY_API to Dify's api/ and DIFY_PYTHON to its Python)"
fi

# --- 2. The plugin daemon's packaging ------------------------------------------------------
# pack PLUGIN_DIR OUTPUT: package as `dify plugin package PLUGIN_DIR -o OUTPUT` does.
cli="${DIFY_CLI:-}"
difypack="${DIFYPACK:-}"
mirrors="${MIRRORS:-/work/.mirror}"
if [[ -z "$cli" && -z "$difypack" && -n "${DAEMON_SRC:-}" ]] && command -v go > /dev/null; then
  if [[ -d "$mirrors/gin-gonic+gin/repo" ]]; then
    echo "== building the daemon's packager offline from $DAEMON_SRC and the mirrors in $mirrors"
    if python3 "$HERE/daemon_packager/assemble_vendor.py" --daemon-src "$DAEMON_SRC" \
         --mirrors "$mirrors" --out "$WORK/difypack-build" \
       && (cd "$WORK/difypack-build" && GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local \
             GOMAXPROCS="${GOMAXPROCS:-1}" go build -p 1 -trimpath -tags nomsgpack -o "$WORK/difypack" .); then
      difypack="$WORK/difypack"
    else
      echo "   could not build it (above: which module or file was missing)"
    fi
  else
    echo "== building Dify's plugin CLI from $DAEMON_SRC"
    if (cd "$DAEMON_SRC" && go build -o "$WORK/dify" ./cmd/commandline); then
      cli="$WORK/dify"
    else
      echo "   could not build it (Go 1.26+ and the Go module proxy are needed, or MIRRORS)"
    fi
  fi
fi
pack() {
  if [[ -n "$cli" ]]; then
    "$cli" plugin package "$1" -o "$2"
  else
    "$difypack" -o "$2" "$1"
  fi
}
if [[ -n "$cli" || -n "$difypack" ]]; then
  echo "== Dify plugin packaging (the README's set-up, then its package command) with ${cli:-$difypack}"
  cp -r "$HERE" "$WORK/dify"
  rm -rf "$WORK/dify/plugin/.venv"
  python3 -m venv "$WORK/dify/plugin/.venv"  # the README's set-up leaves this in plugin/
  mkdir -p "$WORK/dify/plugin/__pycache__" && touch "$WORK/dify/plugin/__pycache__/main.cpython-311.pyc"
  if (cd "$WORK/dify" && pack ./plugin prompt_challenges.difypkg 2>&1); then
    inside="$(python3 -m zipfile -l "$WORK/dify/prompt_challenges.difypkg")"
    echo "$inside"
    if grep -E '(^|/)(\.venv|__pycache__)/|check_(tools|team_tool)\.py' <<< "$inside"; then
      echo "   the package holds files that are not the plugin (above)"
      failed=1
    fi
  else
    failed=1
  fi
  echo "== and with plugin/.venv a symlink to a virtualenv (as in a git worktree): walked as a file"
  mv "$WORK/dify/plugin/.venv" "$WORK/venv" && ln -s "$WORK/venv" "$WORK/dify/plugin/.venv"
  if (cd "$WORK/dify" && pack ./plugin symlinked.difypkg > "$WORK/symlinked.log" 2>&1) \
     && ! python3 -m zipfile -l "$WORK/dify/symlinked.difypkg" | grep -E '(^|/)\.venv'; then
    echo "   packaged, no .venv inside"
  else
    cat "$WORK/symlinked.log"
    failed=1
  fi
  rm -f "$WORK/dify/plugin/.venv" && mv "$WORK/venv" "$WORK/dify/plugin/.venv"
  echo "== and without plugin/.difyignore (must fail on the virtualenv: expected)"
  mv "$WORK/dify/plugin/.difyignore" "$WORK/difyignore"
  out="$(cd "$WORK/dify" && pack ./plugin unignored.difypkg 2>&1)"
  status=$?
  mv "$WORK/difyignore" "$WORK/dify/plugin/.difyignore"
  echo "$out" | grep -v '^  '
  if [[ $status -eq 0 ]] || ! grep -q '\.venv/lib64: is a directory' <<< "$out"; then
    echo "   it did not fail on .venv/lib64: the packaging check above proves nothing"
    failed=1
  fi
  echo "== and 'dify plugin package ./' inside plugin/ (the CLI refuses it: expected)"
  if [[ -n "$cli" ]]; then
    (cd "$WORK/dify/plugin" && "$cli" plugin package ./) || true
  else
    (cd "$WORK/dify/plugin" && "$difypack" ./) || true
  fi
  ran=$((ran + 1))
else
  echo "== skipped: plugin packaging (set DIFY_CLI or DIFYPACK, or DAEMON_SRC with Go 1.26+ on PATH)"
fi

if [[ $ran -eq 0 ]]; then
  echo "nothing ran"
  exit 2
fi
exit $failed
