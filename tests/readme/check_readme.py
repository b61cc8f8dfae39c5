#!/usr/bin/env python3
"""Every example in README.md runs as written, from a fresh clone.

usage: check_readme.py SOURCE_DIR BUILD_DIR WORK_DIR

- ```sh blocks run with bash -euo pipefail in a clone of SOURCE_DIR, with
  BUILD_DIR (where the cckey binary is) first on PATH and a fresh HOME;
- ``` blocks written as a terminal transcript ("$ command", then its output)
  run and must print exactly that output;
- ```c blocks compile as C and as C++ (wrapped in a function);
- a block after "<!-- readme-test: skip (REASON) -->" is skipped, saying why;
- a block after "<!-- readme-test: needs (NAME, ...) -->" runs where each
  NAME (OpenCL, CUDA, NVRTC) loads, as `cckey --version` says, and is
  skipped, saying which does not, elsewhere.
Exit 0 when every block passes, 1 otherwise (each failure named by line)."""
import os
import re
import shutil
import subprocess
import sys

SKIP = re.compile(r"<!--\s*readme-test:\s*skip\s*\((.*)\)\s*-->")
NEEDS = re.compile(r"<!--\s*readme-test:\s*needs\s*\((.*)\)\s*-->")


def blocks(text):
    """(line number, language, body, skip reason or None) of each fenced block."""
    lines = text.split("\n")
    out, i, reason = [], 0, None
    while i < len(lines):
        m = SKIP.search(lines[i])
        n = NEEDS.search(lines[i])
        if m:
            reason = m.group(1)
        elif n:
            reason = ("needs",) + tuple(x.strip() for x in n.group(1).split(","))
        elif lines[i].startswith("```"):
            lang, start, body = lines[i][3:].strip(), i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append((start, lang, "\n".join(body) + "\n", reason))
            reason = None
        elif lines[i].strip():
            reason = None   # a skip marker applies to the very next block only
        i += 1
    return out


def transcript(body):
    """[(command, expected output)] of a "$ command" transcript."""
    steps, cmd, expect, cont = [], None, [], False
    for line in body.rstrip("\n").split("\n"):
        if cont:
            cmd += "\n" + line
        elif line.startswith("$ "):
            if cmd is not None:
                steps.append((cmd, "".join(e + "\n" for e in expect)))
            cmd, expect = line[2:], []
        else:
            expect.append(line)
        cont = line.endswith("\\")
    if cmd is not None:
        steps.append((cmd, "".join(e + "\n" for e in expect)))
    return steps


def missing(build, needs):
    """The names in needs that do not load here, by `cckey --version`."""
    out = subprocess.run([os.path.join(build, "cckey"), "--version"], capture_output=True, text=True).stdout
    loads = {l.split(":")[0].strip() for l in out.splitlines() if l.split(":", 1)[-1].strip() == "loads"}
    return [n for n in needs if n not in loads]


def main():
    src, build, work = (os.path.abspath(a) for a in sys.argv[1:4])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    clone = os.path.join(work, "clone")
    subprocess.run(["git", "clone", "--quiet", src, clone], check=True)
    home = os.path.join(work, "home")
    os.makedirs(home)
    env = {k: v for k, v in os.environ.items() if k not in ("CCKEY_CACHE_DIR", "XDG_CACHE_HOME", "CCKEY_REMOTE")}
    env.update(HOME=home, PATH=build + os.pathsep + env.get("PATH", ""))
    with open(os.path.join(clone, "README.md"), encoding="utf-8") as f:
        text = f.read()
    failed = ran = 0
    for line, lang, body, reason in blocks(text):
        where = "README.md:%d" % line
        if isinstance(reason, tuple):
            absent = missing(build, reason[1:])
            reason = "%s does not load here" % ", ".join(absent) if absent else None
        if reason:
            print("%s: skipped: %s" % (where, reason))
            continue
        if lang == "sh":
            p = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=clone, env=env, capture_output=True,
                               text=True, timeout=1200)
            ran += 1
            if p.returncode != 0:
                failed += 1
                print("%s: FAILED (exit %d)\n%s\n--- stdout\n%s--- stderr\n%s" % (where, p.returncode, body,
                                                                             p.stdout[-3000:], p.stderr[-3000:]))
            else:
                print("%s: ok (sh, %d lines)" % (where, body.count("\n")))
        elif lang == "" and body.startswith("$ "):
            for cmd, want in transcript(body):
                p = subprocess.run(["bash", "-euo", "pipefail", "-c", cmd], cwd=clone, env=env, capture_output=True,
                                   text=True, timeout=600)
                ran += 1
                if p.returncode != 0 or p.stdout != want:
                    failed += 1
                    print("%s: FAILED: $ %s\n--- wanted\n%s--- got (exit %d)\n%s%s" % (where, cmd, want, p.returncode,
                                                                                   p.stdout, p.stderr))
            print("%s: ok (transcript)" % where)
        elif lang == "c":
            includes = "".join(l + "\n" for l in body.split("\n") if l.startswith("#include"))
            rest = "".join(l + "\n" for l in body.split("\n") if not l.startswith("#include"))
            prog = includes + "#include <stdio.h>\nint example(const char *src);\nint example(const char *src)\n{\n" + \
                rest + "return 0;\n}\n"
            for compiler, suffix in (("cc", ".c"), ("c++", ".cpp")):
                path = os.path.join(work, "example" + suffix)
                with open(path, "w") as f:
                    f.write(prog)
                p = subprocess.run([compiler, "-fsyntax-only", "-Wall", "-Werror", "-I", os.path.join(clone, "include"),
                                    path], capture_output=True, text=True)
                ran += 1
                if p.returncode != 0:
                    failed += 1
                    print("%s: FAILED to compile as %s\n%s" % (where, compiler, p.stderr))
            print("%s: ok (compiles as C and C++)" % where)
    print("readme: %d checks, %d failed" % (ran, failed))
    return 1 if failed or not ran else 0


if __name__ == "__main__":
    sys.exit(main())
