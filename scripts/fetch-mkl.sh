#!/usr/bin/env bash
# Fetch Intel MKL (static, LP64, sequential) from the mkl-static and mkl-include wheels on the
# Python package index pip is configured with, and lay it out as DEST/lib/*.a + DEST/include/.
# intel-mkl-src finds it there through MKLROOT=DEST (the Makefile sets it when BLAS=mkl).
# Real files, not symlinks: intel-mkl-src's directory walk does not follow symlinked folders.
#
# usage: scripts/fetch-mkl.sh DEST VERSION
set -euo pipefail
dest=${1:?destination folder}
version=${2:?MKL version, e.g. 2026.2.0}
# The three archives intel-mkl-src links for mkl-static-lp64-seq.
libs=(mkl_intel_lp64 mkl_sequential mkl_core)

stamp="$dest/.mkl-version"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
    ok=1
    for l in "${libs[@]}"; do [[ -f "$dest/lib/lib$l.a" ]] || ok=0; done
    [[ -f "$dest/include/mkl.h" ]] || ok=0
    ((ok)) && exit 0
fi

echo "fetching Intel MKL $version wheels (mkl-static, mkl-include) into $dest"
parent=$(dirname "$dest")
mkdir -p "$parent"
work=$(mktemp -d "$parent/.mkl-fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT

python3 -m pip download --quiet --no-deps --only-binary=:all: \
    --dest "$work/wheels" "mkl-static==$version" "mkl-include==$version"

python3 - "$work/wheels" "$work/mkl" "${libs[@]}" <<'PY'
import pathlib, shutil, sys, zipfile

wheels, out, libs = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:]
wanted_libs = {f"lib{l}.a" for l in libs}
found = set()
for whl in sorted(wheels.glob("*.whl")):
    with zipfile.ZipFile(whl) as z:
        for info in z.infolist():
            if info.is_dir():
                continue
            parts = pathlib.PurePosixPath(info.filename).parts
            # wheel data lives under <name>-<version>.data/data/{lib,include,share}/...
            if len(parts) < 4 or not parts[0].endswith(".data") or parts[1] != "data":
                continue
            rel = pathlib.PurePosixPath(*parts[2:])
            top = rel.parts[0]
            if top == "lib":
                if rel.name not in wanted_libs:
                    continue
                found.add(rel.name)
            elif top == "include" or (top == "share" and "licensing" in rel.parts):
                pass
            else:
                continue
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with z.open(info) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
missing = wanted_libs - found
if missing or not (out / "include" / "mkl.h").is_file():
    sys.exit(f"MKL wheels lack {sorted(missing) or 'include/mkl.h'}")
PY

echo "$version" > "$work/mkl/.mkl-version"
rm -rf "$dest"
mv "$work/mkl" "$dest"
echo "Intel MKL $version ready in $dest ($(du -sh "$dest" | cut -f1))"
