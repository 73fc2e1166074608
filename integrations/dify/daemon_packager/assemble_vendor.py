#!/usr/bin/env python3
"""Assemble an offline build of difypack (main.go) against dify-plugin-daemon's packager.

No Go module proxy is needed: every module comes from a local bare git mirror of its
public GitHub repository (the `fetch` tool leaves them under $MIRRORS/<owner>+<name>/repo),
taken with `git archive` at the version dify-plugin-daemon's go.mod (at bdb5642a) selects,
and laid out as vendor/ with a vendor/modules.txt matching our go.mod. `go build
-mod=vendor` then checks no go.sum and touches no network.

Nothing here is copied into our repository: the build directory is a scratch directory.

    assemble_vendor.py --daemon-src DIR --mirrors /work/.mirror --out /tmp/difypack-build
    cd /tmp/difypack-build && GOFLAGS=-mod=vendor GOPROXY=off \
        go build -p 1 -trimpath -tags nomsgpack -o difypack .

Deviations from the daemon's own module graph (none touches the packager or decoder):
  * gin's msgpack codec (github.com/ugorji/go/codec v1.3.1) is left out with gin's own
    `nomsgpack` build tag: the mirror of ugorji/go here stops before codec/v1.3.1.
  * github.com/pelletier/go-toml/v2 is v2.2.0, not v2.2.4: the mirror here stops before
    v2.2.4. Only gin's TOML binding/render use it.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# module path -> (GitHub repository, git ref, subdirectory of the repository holding the module)
# The version each module gets is the one in our go.mod (the daemon's go.mod at bdb5642a,
# except where noted above); the ref is the git tag (or commit) of that version.
MODULES = {
    # from DAEMON_SRC, a source directory (no ref)
    "github.com/langgenius/dify-plugin-daemon": ("langgenius/dify-plugin-daemon", None, ""),
    "github.com/gin-gonic/gin": ("gin-gonic/gin", "v1.12.0", ""),
    "github.com/gin-contrib/sse": ("gin-contrib/sse", "v1.1.0", ""),
    "github.com/go-playground/validator/v10": ("go-playground/validator", "v10.30.1", ""),
    "github.com/go-playground/locales": ("go-playground/locales", "v0.14.1", ""),
    "github.com/go-playground/universal-translator": (
        "go-playground/universal-translator",
        "v0.18.1",
        "",
    ),
    "github.com/leodido/go-urn": ("leodido/go-urn", "v1.4.0", ""),
    "github.com/gabriel-vasile/mimetype": ("gabriel-vasile/mimetype", "v1.4.12", ""),
    "github.com/go-git/go-git/v5": ("go-git/go-git", "v5.19.2", ""),
    "github.com/go-git/go-billy/v5": ("go-git/go-billy", "v5.9.0", ""),
    "github.com/go-git/gcfg": ("go-git/gcfg", "3a3c6141e376c06bf6ca92f0450e974250b4367a", ""),
    "gopkg.in/warnings.v0": ("go-warnings/warnings", "v0.1.2", ""),
    "github.com/jbenet/go-context": (
        "jbenet/go-context",
        "d14ea06fba99483203c19d92cfcd13ebe73135f4",
        "",
    ),
    "gopkg.in/yaml.v3": ("go-yaml/yaml", "v3.0.1", ""),
    "github.com/google/uuid": ("google/uuid", "v1.6.0", ""),
    "github.com/fxamacker/cbor/v2": ("fxamacker/cbor", "v2.7.0", ""),
    "github.com/x448/float16": ("x448/float16", "v0.8.4", ""),
    "github.com/mitchellh/mapstructure": ("mitchellh/mapstructure", "v1.5.0", ""),
    "github.com/shopspring/decimal": ("shopspring/decimal", "v1.4.0", ""),
    "github.com/mattn/go-isatty": ("mattn/go-isatty", "v0.0.20", ""),
    "github.com/goccy/go-yaml": ("goccy/go-yaml", "v1.19.2", ""),
    "github.com/pelletier/go-toml/v2": ("pelletier/go-toml", "v2.2.0", ""),
    "github.com/quic-go/quic-go": ("quic-go/quic-go", "v0.59.1", ""),
    "github.com/quic-go/qpack": ("quic-go/qpack", "v0.6.0", ""),
    "go.mongodb.org/mongo-driver/v2": ("mongodb/mongo-go-driver", "v2.5.0", ""),
    "google.golang.org/protobuf": ("protocolbuffers/protobuf-go", "v1.36.11", ""),
    "golang.org/x/net": ("golang/net", "v0.56.0", ""),
    "golang.org/x/crypto": ("golang/crypto", "v0.53.0", ""),
    "golang.org/x/sys": ("golang/sys", "v0.46.0", ""),
    "golang.org/x/text": ("golang/text", "v0.39.0", ""),
}

TAGS = "nomsgpack"


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)  # noqa: S603 - git and go, our arguments


def requires(gomod):
    """module -> version from our go.mod's require block."""
    with open(gomod) as fh:
        text = fh.read()
    out = {}
    blocks = re.findall(r"require\s*\((.*?)\)", text, re.S)
    for block in blocks + re.findall(r"^require\s+(\S+\s+\S+)", text, re.M):
        for line in block.splitlines():
            parts = line.split("//")[0].split()
            if len(parts) == 2:
                out[parts[0]] = parts[1]
    return out


def extract(src_git_or_dir, ref, subdir, dest):
    os.makedirs(dest, exist_ok=True)
    if ref is None:  # a plain source directory
        shutil.copytree(
            src_git_or_dir,
            dest,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns(".git", "testdata", "*_test.go"),
        )
        return
    # Blobs read one by one (not `git archive`): a mirror may lack its largest blobs; those
    # are recorded, and the build fails only if an imported package needs one.
    ls_tree = ["git", "-C", src_git_or_dir, "ls-tree", "-r", "-z", f"{ref}^{{tree}}"]
    tree = run(ls_tree + ([subdir] if subdir else []), stdout=subprocess.PIPE).stdout.decode()
    entries = []
    for item in tree.split("\0"):
        if not item:
            continue
        meta, name = item.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob" or mode == "120000":
            continue
        if subdir:
            name = os.path.relpath(name, subdir)
        if "testdata" in name.split("/") or name.endswith("_test.go"):
            continue
        entries.append((sha, name))
    batch = subprocess.Popen(  # noqa: S603 - git, our arguments
        ["git", "-C", src_git_or_dir, "cat-file", "--batch"],  # noqa: S607
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    for sha, name in entries:
        batch.stdin.write(sha.encode() + b"\n")
        batch.stdin.flush()
        header = batch.stdout.readline().split()
        if header[-1] == b"missing":
            MISSING_BLOBS.append(os.path.join(dest, name))
            continue
        body = batch.stdout.read(int(header[2]))
        batch.stdout.read(1)
        target = os.path.join(dest, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(body)
    batch.stdin.close()
    batch.wait()


MISSING_BLOBS = []


def go_version(moddir):
    gomod = os.path.join(moddir, "go.mod")
    if os.path.exists(gomod):
        with open(gomod) as fh:
            m = re.search(r"^go\s+(\S+)", fh.read(), re.M)
        if m:
            return m.group(1)
    return None


def packages_in(moddir, module):
    pkgs = []
    for root, dirs, files in os.walk(moddir):
        # nested modules (a go.mod of their own) are not this module's packages
        dirs[:] = [
            d
            for d in dirs
            if not d.startswith((".", "_"))
            and d != "testdata"
            and not os.path.exists(os.path.join(root, d, "go.mod"))
        ]
        if any(f.endswith(".go") for f in files):
            rel = os.path.relpath(root, moddir)
            pkgs.append(module if rel == "." else module + "/" + rel.replace(os.sep, "/"))
    return sorted(pkgs)


def write_modules_txt(vendor, reqs, pkgs_by_module, goversions):
    lines = []
    for module in sorted(reqs):
        lines.append(f"# {module} {reqs[module]}")
        gv = goversions.get(module)
        lines.append("## explicit" + (f"; go {gv}" if gv else ""))
        lines.extend(pkgs_by_module.get(module, []))
    with open(os.path.join(vendor, "modules.txt"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon-src", required=True, help="dify-plugin-daemon source (bdb5642a)")
    ap.add_argument("--mirrors", default=os.environ.get("MIRRORS", "/work/.mirror"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--go", default="go")
    args = ap.parse_args()

    out = os.path.abspath(args.out)
    stage = os.path.join(out, ".stage")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(stage)
    for f in ("main.go", "go.mod"):
        shutil.copy(os.path.join(HERE, f), out)
    reqs = requires(os.path.join(out, "go.mod"))
    missing = sorted(set(reqs) ^ set(MODULES))
    if missing:
        sys.exit(f"go.mod and MODULES disagree on: {missing}")

    pkgs, goversions = {}, {}
    for module, (repo, ref, subdir) in MODULES.items():
        dest = os.path.join(stage, module)
        if ref is None:
            src = args.daemon_src
        else:
            src = os.path.join(args.mirrors, repo.replace("/", "+"), "repo")
            if not os.path.isdir(src):
                sys.exit(f"missing mirror for {module}: github:{repo} (expected {src})")
        try:
            extract(src, ref, subdir, dest)
        except subprocess.CalledProcessError:
            sys.exit(f"{module}: github:{repo} has no {ref} in {src}")
        pkgs[module] = packages_in(dest, module)
        goversions[module] = go_version(dest)
        print(f"  {module} {reqs[module]}  <- github.com/{repo} {ref or 'DAEMON_SRC'}", flush=True)

    # First pass: every package of every module, to ask the go command which are imported.
    os.rename(stage, os.path.join(out, "vendor"))
    vendor = os.path.join(out, "vendor")
    write_modules_txt(vendor, reqs, pkgs, goversions)
    env = dict(os.environ, GOFLAGS="-mod=vendor", GOPROXY="off", GOTOOLCHAIN="local")
    listed = subprocess.run(  # noqa: S603 - go, our arguments
        [
            args.go,
            "list",
            "-tags",
            TAGS,
            "-deps",
            "-f",
            "{{if not .Standard}}{{.ImportPath}}{{end}}",
            ".",
        ],
        cwd=out,
        env=env,
        capture_output=True,
        text=True,
    )
    if listed.returncode != 0:
        sys.exit("go list failed (a package no listed module provides?):\n" + listed.stderr)
    used = set(listed.stdout.split())

    # Second pass: vendor/ holds only the imported packages' directories, as `go mod vendor` would.
    pruned = os.path.join(out, "vendor.pruned")
    used_by_module = {}
    for module in reqs:
        mine = [p for p in pkgs[module] if p in used]
        used_by_module[module] = mine
        for p in mine:
            src_dir = os.path.join(vendor, p)
            dst_dir = os.path.join(pruned, p)
            os.makedirs(dst_dir, exist_ok=True)
            for f in os.listdir(src_dir):
                if os.path.isfile(os.path.join(src_dir, f)):
                    shutil.copy(os.path.join(src_dir, f), dst_dir)
        for lic in ("LICENSE", "LICENSE.md", "LICENSE.txt", "PATENTS", "NOTICE"):
            if mine and os.path.isfile(os.path.join(vendor, module, lic)):
                shutil.copy(os.path.join(vendor, module, lic), os.path.join(pruned, module))
    stage_of = os.path.join(out, ".stage")
    needed = [
        f
        for f in MISSING_BLOBS
        if os.path.relpath(os.path.dirname(f), stage_of).replace(os.sep, "/") in used
    ]
    if needed:
        sys.exit(f"an imported package needs a file its mirror lacks: {needed}")
    shutil.rmtree(vendor)
    os.rename(pruned, vendor)
    unused = sorted(m for m in reqs if not used_by_module[m])
    if unused:
        sys.exit(f"modules in go.mod no package imports (drop from go.mod and MODULES): {unused}")
    write_modules_txt(vendor, reqs, used_by_module, goversions)
    print(
        f"vendor/: {len(used - {'difypack'})} packages from {len(reqs)} modules; build: "
        f"cd {out} && GOFLAGS=-mod=vendor GOPROXY=off go build -p 1 -trimpath -tags {TAGS} ."
    )


if __name__ == "__main__":
    main()
