#!/usr/bin/env python3
"""Which of the scheduler core's files clang-tidy has already passed, as recorded in .ci/lint-clean.

A file's key is a hash of everything its clang-tidy result depends on in the tree: the file, every
project header it includes (transitively), .clang-tidy, the top-level CMakeLists.txt (compile
options) and the clang-tidy version. A file whose key is in the record was checked clean with
exactly those inputs, so checking it again can only repeat the answer.

  lint_cache.py stale FILE...    prints the files whose key is not in the record
  lint_cache.py record FILE...   writes the record for FILE... (after clang-tidy passed on them)
"""
import hashlib
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
RECORD = ROOT / ".ci" / "lint-clean"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def project_headers(path, seen):
    """Every project header `path` includes, directly or through other headers."""
    for name in INCLUDE.findall(path.read_text(errors="replace")):
        for base in (ROOT / "src", path.parent):
            candidate = (base / name).resolve()
            if candidate.is_file() and ROOT in candidate.parents:
                if candidate not in seen:
                    seen.add(candidate)
                    project_headers(candidate, seen)
                break
    return seen


def common_inputs():
    version = subprocess.run(["clang-tidy", "--version"], capture_output=True, text=True).stdout
    digest = hashlib.sha256(version.encode())
    for name in (".clang-tidy", "CMakeLists.txt"):
        digest.update((ROOT / name).read_bytes())
    return digest.digest()


def key(relative, common):
    path = ROOT / relative
    digest = hashlib.sha256(common)
    for part in [path] + sorted(project_headers(path, set())):
        digest.update(str(part.relative_to(ROOT)).encode())
        digest.update(part.read_bytes())
    return digest.hexdigest()


def recorded():
    if not RECORD.is_file():
        return set()
    return {line.split()[0] for line in RECORD.read_text().splitlines() if line.strip()}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("stale", "record"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    mode, files = sys.argv[1], sys.argv[2:]
    common = common_inputs()
    if mode == "stale":
        clean = recorded()
        for relative in files:
            if key(relative, common) not in clean:
                print(relative)
        return 0
    lines = [f"{key(relative, common)}  {relative}" for relative in sorted(files)]
    RECORD.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
