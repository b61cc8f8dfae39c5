#!/usr/bin/env python3
"""The cckey command line, end to end.

Usage: test_cli.py PATH/TO/cckey [unittest args]
       test_cli.py --regen     rewrite tests/data's golden files from the recipe

Keys are checked two ways: against golden files committed under tests/data
and against the recipe computed here with hashlib (gen_vectors.make_key),
which also produced the golden files."""
import json
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "data")
MANIFEST = os.path.join(DATA, "manifest.jsonl")
sys.path.insert(0, os.path.dirname(HERE))
from gen_vectors import make_key  # noqa: E402

CCKEY = None
# "FILE:LINE:COLUMN: what", the one shape of a bad-input message.
LOCATED = re.compile(r"^(?P<file>[^\n]+?):(?P<line>\d+):(?P<col>\d+): \S", re.M)
ISSUE_KEY_2 = ("45552c6dfd18efd7f912010b34adcbdc:5eafe7ed354bd56348049a429ad6c938:"
               "82d7291d76296093ecda1094eb146d1e:6ffd84b89a8fc5513e9e085c93eec14a")


def run(args, stdin=b"", cwd=None, timeout=60):
    p = subprocess.run([CCKEY] + args, input=stdin, cwd=cwd, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def recipe_keys(manifest_path, base_dir):
    """The keys of a manifest, from the format's definition."""
    keys = []
    with open(manifest_path, "rb") as f:
        for raw in f.read().split(b"\n"):
            if not raw.strip():
                continue
            obj = json.loads(raw)
            enc = lambda s: s.encode("utf-8")
            if "source" in obj:
                src = enc(obj["source"])
            else:
                with open(os.path.join(base_dir, obj["source_file"]), "rb") as sf:
                    src = sf.read()
            opts = obj.get("options") or []
            if isinstance(opts, dict):
                opts = list(opts.items())
            keys.append(make_key(enc(obj["device"]), enc(obj["name"]), src, [(enc(k), enc(v)) for k, v in opts]))
    return keys


def recipe_jsonl(manifest_path, base_dir):
    lines, keys = [], recipe_keys(manifest_path, base_dir)
    numbers = [i + 1 for i, raw in enumerate(read(manifest_path, "rb").split(b"\n")) if raw.strip()]
    for n, k in zip(numbers, keys):
        lines.append(json.dumps({"line": n, "key": k, "device_md5": k[:32], "name_md5": k[33:65],
                                 "source_md5": k[66:98], "options_md5": k[99:]}))
    return "".join(l + "\n" for l in lines)


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def golden(name):
    return read(os.path.join(DATA, name))


class Tmp(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cckey-cli-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, name, data):
        path = os.path.join(self.dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        return path


class Golden(Tmp):
    def test_golden_files_follow_the_recipe(self):
        self.assertEqual(golden("manifest.keys"), "".join(k + "\n" for k in recipe_keys(MANIFEST, DATA)))
        self.assertEqual(golden("manifest.out.jsonl"), recipe_jsonl(MANIFEST, DATA))
        self.assertIn(ISSUE_KEY_2, golden("manifest.keys"))

    def test_batch_keys(self):
        # Run from elsewhere: source_file resolves against the manifest's folder.
        for extra in ([], ["--format", "keys"], ["-j", "1"], ["--chunk", "1"], ["--chunk", "3"],
                      ["--backend", "cpu"], ["-q"], ["-k"]):
            rc, out, err = run(["batch"] + extra + [MANIFEST], cwd=self.dir)
            self.assertEqual((rc, err), (0, ""), extra)
            self.assertEqual(out, golden("manifest.keys"), extra)

    def test_batch_jsonl(self):
        for extra in ([], ["--chunk", "2"]):
            rc, out, err = run(["batch", "--format", "jsonl"] + extra + [MANIFEST], cwd=self.dir)
            self.assertEqual((rc, err), (0, ""))
            self.assertEqual(out, golden("manifest.out.jsonl"))
            for line in out.splitlines():
                json.loads(line)

    def test_stdin_manifest_resolves_against_cwd(self):
        data = read(MANIFEST, "rb")
        for args in (["batch", "-"], ["batch"]):
            rc, out, err = run(args, stdin=data, cwd=DATA)
            self.assertEqual((rc, out, err), (0, golden("manifest.keys"), ""), args)
        # Elsewhere, the relative source files are not there.
        rc, out, err = run(["batch", "-"], stdin=data, cwd=self.dir)
        self.assertEqual(rc, 2)
        m = LOCATED.search(err)
        self.assertTrue(m and m.group("file") == "<stdin>" and m.group("line") == "4", err)
        self.assertIn("vec_add.cu", err)

    def test_manifest_in_cwd_and_absolute_source(self):
        src = self.write("k.cu", b"\x00\xff binary \x00")
        m = self.write("sub/m.jsonl", json.dumps({"device": "d", "name": "n", "source_file": src}) + "\n"
                       + json.dumps({"device": "d", "name": "n", "source_file": "../k.cu"}) + "\n")
        want = make_key(b"d", b"n", b"\x00\xff binary \x00", [])
        for cwd, path in ((self.dir, "sub/m.jsonl"), (os.path.join(self.dir, "sub"), "m.jsonl")):
            rc, out, err = run(["batch", path], cwd=cwd)
            self.assertEqual((rc, out, err), (0, want + "\n" + want + "\n", ""))

    def test_many_lines_many_chunks(self):
        rng = random.Random(7)
        lines, want = [], []
        for i in range(3000):
            d, n, s = f"dev{i % 3}", f"k{i}", "".join(rng.choice("ab:=,\u00e9\u0000") for _ in range(rng.randint(0, 30)))
            opts = [[rng.choice(["-O", "-D", "arch"]), str(rng.randint(0, 3))] for _ in range(rng.randint(0, 4))]
            lines.append(json.dumps({"device": d, "name": n, "source": s, "options": opts}))
            enc = lambda x: x.encode("utf-8")
            want.append(make_key(enc(d), enc(n), enc(s), [(enc(k), enc(v)) for k, v in opts]))
        m = self.write("m.jsonl", "\n".join(lines) + "\n")
        for extra in ([], ["--chunk", "7"], ["-j", "2", "--chunk", "1000"]):
            rc, out, err = run(["batch"] + extra + [m])
            self.assertEqual((rc, err), (0, ""))
            self.assertEqual(out.splitlines(), want, extra)

    def test_more_source_files_than_the_map_count_limit(self):
        # A mapping per source file: one chunk of distinct files used to run
        # into vm.max_map_count and report the rest as unreadable.
        try:
            limit = int(read("/proc/sys/vm/max_map_count"))
        except (OSError, ValueError):
            self.skipTest("no /proc/sys/vm/max_map_count")
        if limit > 200000:
            self.skipTest(f"vm.max_map_count is {limit}: too many files to reach it")
        n = limit + 500
        os.mkdir(os.path.join(self.dir, "k"))
        lines = []
        for i in range(n):
            with open(os.path.join(self.dir, "k", f"{i}.cl"), "wb") as f:
                f.write(b"s%d" % i)
            lines.append(f'{{"device": "d", "name": "n", "source_file": "k/{i}.cl"}}')
        m = self.write("m.jsonl", "\n".join(lines) + "\n")
        rc, out, err = run(["batch", "-q", m], timeout=120)
        self.assertEqual((rc, err), (0, ""))
        keys = out.splitlines()
        self.assertEqual(len(keys), n)
        for i in (0, n // 2, n - 1):
            self.assertEqual(keys[i], make_key(b"d", b"n", b"s%d" % i, []), i)


class Key(Tmp):
    def key(self, args, **kw):
        rc, out, err = run(["key"] + args, **kw)
        self.assertEqual((rc, err), (0, ""), args)
        self.assertEqual(len(out), 132, out)
        return out.strip()

    def test_issue_example(self):
        got = self.key(["-d", "NVIDIA H200|580.159.04", "-n", "vec_add", "-s", "__global__ void vec_add(float *a) {}",
                        "-O", "arch=sm_90", "--option=-O=3"])
        self.assertEqual(got, ISSUE_KEY_2)
        got = self.key(["--device", "0", "--name", "kernel_a", "--source", "code"])
        self.assertEqual(got, make_key(b"0", b"kernel_a", b"code", []))

    def test_option_parsing(self):
        cases = [
            (["-O", "k=a=b"], [(b"k", b"a=b")]),          # split at the first '='
            (["-O", "k="], [(b"k=", b"")]),                # nothing after it: the flag whole, as scan -O
            (["-O", "=v"], [(b"", b"v")]),
            (["-O", "="], [(b"=", b"")]),
            (["-O", "''"], [(b"", b"")]),                  # an empty word: the pair ("", "")
            (["-O", ""], []),                              # nothing: the empty set, as scan -O ""
            (["-O", "b=1", "-O", "a=2", "-Ob=0"], [(b"b", b"1"), (b"a", b"2"), (b"b", b"0")]),
            (["-O", "x=1", "-O", "x=1"], [(b"x", b"1"), (b"x", b"1")]),
            (["-O", "-cl-fast-relaxed-math"], [(b"-cl-fast-relaxed-math", b"")]),   # a bare flag
            (["-O", "novalue", "-O", "-DN=4"], [(b"novalue", b""), (b"-D", b"N=4")]),
            (["-O", "-I /b -I/a, -D N=4"], [(b"-I", b"/b"), (b"-I", b"/a"), (b"-D", b"N=4")]),
            (["-O", "'-DMSG=hi there' -O3"], [(b"-D", b"MSG=hi there"), (b"-O", b"3")]),
        ]
        for opts, want in cases:
            got = self.key(["-d", "d", "-n", "n", "-s", "s"] + opts)
            self.assertEqual(got, make_key(b"d", b"n", b"s", want), opts)

    def test_source_file_and_stdin(self):
        data = bytes(range(256)) * 3
        self.write("k.bin", data)
        want = make_key(b"d", b"n", data, [])
        self.assertEqual(self.key(["-d", "d", "-n", "n", "-f", "k.bin"], cwd=self.dir), want)
        self.assertEqual(self.key(["-d", "d", "-n", "n", "--source-file", "-"], stdin=data), want)
        self.write("empty", b"")
        self.assertEqual(self.key(["-d", "d", "-n", "n", "-f", "empty"], cwd=self.dir), make_key(b"d", b"n", b"", []))

    def test_stdin_read_error_is_not_an_empty_source(self):
        fd = os.open(self.dir, os.O_RDONLY)   # a folder as standard input: read() fails with EISDIR
        try:
            p = subprocess.run([CCKEY, "key", "-d", "d", "-n", "n", "-f", "-"], stdin=fd, capture_output=True,
                               timeout=60)
        finally:
            os.close(fd)
        self.assertEqual((p.returncode, p.stdout), (1, b""))
        self.assertIn(b"standard input", p.stderr)

    def test_bad_usage(self):
        for args in (["-n", "n", "-s", "s"], ["-d", "d", "-s", "s"], ["-d", "d", "-n", "n"],
                     ["-d", "d", "-n", "n", "-s", "s", "-f", "x"], ["-d", "d", "-n", "n", "-s", "s", "extra"],
                     ["--frob"], ["-d"]):
            rc, out, err = run(["key"] + args)
            self.assertEqual((rc, out), (2, ""), args)
            self.assertTrue(err.strip(), args)
        for path in ("missing.cu", "."):
            rc, out, err = run(["key", "-d", "d", "-n", "n", "-f", path], cwd=self.dir)
            self.assertEqual((rc, out), (2, ""), path)
            self.assertIn(path, err)


class BadInput(Tmp):
    GOOD = '{"device": "d", "name": "n", "source": "s"}'

    def expect_bad(self, line, what=None, col=None, raw=False):
        """line is the third line, after a good line and a blank one."""
        body = (self.GOOD + "\n\n").encode() + (line if raw else line.encode("utf-8")) + b"\n" + self.GOOD.encode() + b"\n"
        m = self.write("m.jsonl", body)
        rc, out, err = run(["batch", "m.jsonl"], cwd=self.dir)
        self.assertEqual(rc, 2, f"{line!r}: exit {rc}, stderr {err!r}")
        loc = LOCATED.search(err)
        self.assertTrue(loc, f"{line!r}: no FILE:LINE:COLUMN in {err!r}")
        self.assertEqual((loc.group("file"), loc.group("line")), ("m.jsonl", "3"), err)
        self.assertGreaterEqual(int(loc.group("col")), 1)
        if col is not None:
            self.assertEqual(int(loc.group("col")), col, err)
        if what:
            self.assertRegex(err, what)
        self.assertNotIn("Traceback", err)
        # Keep-going: one empty line in its place, the others keyed.
        rc, out, err = run(["batch", "-k", "m.jsonl"], cwd=self.dir)
        key = make_key(b"d", b"n", b"s", [])
        self.assertEqual((rc, out), (2, f"{key}\n\n{key}\n"), f"{line!r}: {err}")
        return err

    def test_invalid_json(self):
        for line in ("{", "{]", "nope", '{"device": "d",}', "{'device': 'd'}", '{"device" "d"}', "{} {}",
                     '{"device": "d", "name": "n", "source": "s"} x'):
            self.expect_bad(line, "invalid JSON")

    def test_truncated_line(self):
        self.expect_bad('{"device": "d", "name": "n", "sou', "invalid JSON")
        # Truncated last line, no newline at all.
        m = self.write("m.jsonl", self.GOOD + '\n{"device": "d", "na')
        rc, out, err = run(["batch", "m.jsonl"], cwd=self.dir)
        self.assertEqual(rc, 2)
        self.assertRegex(err, r"^m\.jsonl:2:\d+: invalid JSON")

    def test_not_an_object(self):
        for line in ("[]", '["device", "d"]', '"text"', "42", "null", "true"):
            self.expect_bad(line, "expected a JSON object", col=1)

    def test_non_string_field(self):
        self.expect_bad('{"device": 1, "name": "n", "source": "s"}', r'"device" must be a string', col=2)
        self.expect_bad('{"device": "d", "name": null, "source": "s"}', r'"name" must be a string')
        self.expect_bad('{"device": "d", "name": "n", "source": ["s"]}', r'"source" must be a string')
        self.expect_bad('{"device": "d", "name": "n", "source_file": 7}', r'"source_file" must be a string')
        self.expect_bad('{"device": {}, "name": "n", "source": "s"}', r'"device" must be a string')

    def test_missing_field(self):
        self.expect_bad('{"name": "n", "source": "s"}', r'missing "device"')
        self.expect_bad('{"device": "d", "source": "s"}', r'missing "name"')
        self.expect_bad("{}", "missing")

    def test_both_or_neither_source(self):
        self.expect_bad('{"device": "d", "name": "n", "source": "s", "source_file": "f"}', "not both")
        self.expect_bad('{"device": "d", "name": "n"}', r'missing "source"')

    def test_malformed_options(self):
        for opts in ('[["a"]]', '[["a", "b", "c"]]', "[[]]", '["a"]', '[["a", "b"], "c"]', '[[1, "b"]]',
                     '[["a", null]]', '[["a", ["b"]]]', '{"a": 1}', '{"a": ["b"]}', '"-O3"', "7", "true"):
            self.expect_bad('{"device": "d", "name": "n", "source": "s", "options": %s}' % opts, "options")

    def test_bad_escapes(self):
        for esc in (r"\q", r"\x41", r"\u12", r"\u12G4", "\\", r"\U0041"):
            self.expect_bad('{"device": "d%s", "name": "n", "source": "s"}' % esc, "invalid JSON")

    def test_lone_surrogates(self):
        for s in (r"\ud800", r"\udc00", r"\ud800\u0041", r"\udfff\ud800", r"x\ud83d"):
            self.expect_bad('{"device": "d", "name": "%s", "source": "s"}' % s, "invalid JSON")

    def test_raw_invalid_utf8_and_control_bytes(self):
        for junk in (b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xc0\xaf", b"\x01", b"\x00"):
            self.expect_bad(b'{"device": "d' + junk + b'", "name": "n", "source": "s"}', raw=True)

    def test_duplicate_members(self):
        self.expect_bad('{"device": "d", "device": "e", "name": "n", "source": "s"}', "duplicate")
        self.expect_bad('{"device": "d", "name": "n", "source": "s", "options": {"a": "1", "a": "2"}}', "duplicate")

    def test_source_file_problems(self):
        os.mkdir(os.path.join(self.dir, "adir"))
        err = self.expect_bad('{"device": "d", "name": "n", "source_file": "missing.cu"}', "missing.cu")
        self.assertRegex(err, "No such file")
        self.expect_bad('{"device": "d", "name": "n", "source_file": "adir"}', "directory")
        self.expect_bad('{"device": "d", "name": "n", "source_file": ""}', "empty")
        self.expect_bad('{"device": "d", "name": "n", "source_file": "a\\u0000b"}', "NUL")

    def test_fifo_source_file_is_refused_without_waiting(self):
        os.mkfifo(os.path.join(self.dir, "pipe.cu"))
        self.expect_bad('{"device": "d", "name": "n", "source_file": "pipe.cu"}', "not a regular file")
        rc, out, err = run(["key", "-d", "d", "-n", "n", "-f", "pipe.cu"], cwd=self.dir, timeout=20)
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("not a regular file", err)

    def test_unreadable_source_file(self):
        if os.geteuid() == 0:
            self.skipTest("running as root: chmod 000 does not stop root from reading")
        p = self.write("secret.cu", "x")
        os.chmod(p, 0)
        try:
            self.expect_bad('{"device": "d", "name": "n", "source_file": "secret.cu"}', "Permission denied")
        finally:
            os.chmod(p, stat.S_IRUSR | stat.S_IWUSR)

    def test_binary_garbage(self):
        rng = random.Random(99)
        for i in range(25):
            junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 400)))
            junk = junk.replace(b"\n", b"\x00")   # one line of it
            if not junk.strip(b" \t\r"):   # blank: JSON whitespace only
                continue
            self.expect_bad(junk, raw=True)
        # A whole file of garbage with many lines: exit 2, no crash, located.
        m = self.write("g.jsonl", bytes(rng.randrange(256) for _ in range(5000)))
        rc, out, err = run(["batch", "-k", "g.jsonl"], cwd=self.dir)
        self.assertEqual(rc, 2)
        self.assertRegex(err, r"g\.jsonl:\d+:\d+: ")

    def test_raw_nul_byte_is_named(self):
        err = self.expect_bad('{"device": "d",\x00 "name": "n", "source": "s"}', "raw NUL", col=16)
        self.assertNotIn("end of file", err)

    def test_errors_are_numbered_by_physical_line(self):
        body = "\n".join([self.GOOD, "", "   ", self.GOOD, "\t", "[1]", self.GOOD, "{"]) + "\n"
        m = self.write("m.jsonl", body)
        rc, out, err = run(["batch", "-k", "m.jsonl"], cwd=self.dir)
        self.assertEqual(rc, 2)
        self.assertEqual([l.split(":")[1] for l in err.splitlines() if LOCATED.match(l)], ["6", "8"], err)
        key = make_key(b"d", b"n", b"s", [])
        self.assertEqual(out, f"{key}\n{key}\n\n{key}\n\n")
        rc, out, err = run(["batch", "-k", "--format", "jsonl", "m.jsonl"], cwd=self.dir)
        rows = [json.loads(l) for l in out.splitlines()]
        self.assertEqual([r["line"] for r in rows], [1, 4, 6, 7, 8])
        self.assertEqual(["error" in r for r in rows], [False, False, True, False, True])
        self.assertRegex(rows[2]["error"], r"m\.jsonl:6:1: ")


class Output(Tmp):
    def test_success_replaces_atomically(self):
        out = self.write("keys.txt", "old contents\n")
        hard = os.path.join(self.dir, "old-link")
        os.link(out, hard)   # a rename leaves the old inode, and so this link, alone
        rc, stdout, err = run(["batch", "-o", out, MANIFEST])
        self.assertEqual((rc, stdout, err), (0, "", ""))
        self.assertEqual(read(out), golden("manifest.keys"))
        self.assertEqual(read(hard), "old contents\n", "the file was rewritten in place, not replaced")
        self.assertEqual(sorted(os.listdir(self.dir)), ["keys.txt", "old-link"], "a temporary file was left")

    def test_failure_leaves_no_file(self):
        m = self.write("m.jsonl", BadInput.GOOD + "\n{\n")
        out = os.path.join(self.dir, "keys.txt")
        rc, stdout, err = run(["batch", "-o", out, m])
        self.assertEqual((rc, stdout), (2, ""))
        self.assertEqual(sorted(os.listdir(self.dir)), ["m.jsonl"], "a file was left behind")
        # An existing output survives a failed run untouched.
        self.write("keys.txt", "precious\n")
        rc, stdout, err = run(["batch", "-o", out, m])
        self.assertEqual(rc, 2)
        self.assertEqual(read(out), "precious\n")
        self.assertEqual(sorted(os.listdir(self.dir)), ["keys.txt", "m.jsonl"])
        # Failing for another reason (a backend that is not there) too.
        if not os.path.exists("/dev/nvidiactl"):
            rc, stdout, err = run(["batch", "--backend", "cuda", "-o", out, m])
            self.assertNotEqual(rc, 0)
            self.assertEqual(read(out), "precious\n")
            self.assertEqual(sorted(os.listdir(self.dir)), ["keys.txt", "m.jsonl"])

    def test_keep_going_output_file_is_aligned(self):
        m = self.write("m.jsonl", BadInput.GOOD + "\n{\n" + BadInput.GOOD + "\n")
        out = os.path.join(self.dir, "keys.txt")
        rc, stdout, err = run(["batch", "-k", "-o", out, m])
        self.assertEqual(rc, 2)
        key = make_key(b"d", b"n", b"s", [])
        self.assertEqual(read(out), f"{key}\n\n{key}\n")
        self.assertEqual(sorted(os.listdir(self.dir)), ["keys.txt", "m.jsonl"])

    def test_unwritable_output_folder(self):
        rc, stdout, err = run(["batch", "-o", os.path.join(self.dir, "no", "such", "dir", "k.txt"), MANIFEST])
        self.assertEqual(rc, 1)
        self.assertIn("no/such/dir", err)


class Lines(Tmp):
    def test_blank_lines_and_crlf(self):
        good = BadInput.GOOD
        key = make_key(b"d", b"n", b"s", [])
        for body in (good + "\r\n\r\n" + good + "\r\n", good + "\n \t\n\r\n\n" + good,
                     "\n\n" + good + "\n" + good + "\n\n\n", good + "\r\n" + good):
            m = self.write("m.jsonl", body)
            rc, out, err = run(["batch", m])
            self.assertEqual((rc, out, err), (0, f"{key}\n{key}\n", ""), repr(body))

    def test_byte_order_mark_on_the_first_line_is_ignored(self):
        good = '{"device": "d", "name": "n", "source": "s"}'
        key = make_key(b"d", b"n", b"s", [])
        self.write("bom.jsonl", b"\xef\xbb\xbf" + good.encode() + b"\n" + good.encode() + b"\n")
        self.assertEqual(run(["batch", "bom.jsonl"], cwd=self.dir), (0, key + "\n" + key + "\n", ""))
        self.write("bom2.jsonl", b"\xef\xbb\xbf\n" + good.encode() + b"\n")   # a BOM alone: a blank line
        self.assertEqual(run(["batch", "bom2.jsonl"], cwd=self.dir), (0, key + "\n", ""))
        # Only the file's first bytes can be a BOM: later, it is bad input.
        self.write("bom3.jsonl", good.encode() + b"\n\xef\xbb\xbf" + good.encode() + b"\n")
        rc, out, err = run(["batch", "bom3.jsonl"], cwd=self.dir)
        self.assertEqual(rc, 2)
        self.assertIn("bom3.jsonl:2:1:", err)

    def test_crlf_manifest_matches_lf(self):
        data = read(MANIFEST, "rb").replace(b"\n", b"\r\n")
        m = self.write("m.jsonl", data)
        shutil.copytree(os.path.join(DATA, "src"), os.path.join(self.dir, "src"))
        rc, out, err = run(["batch", m])
        self.assertEqual((rc, out, err), (0, golden("manifest.keys"), ""))

    def test_empty_manifests(self):
        for body in ("", "\n", " \n\t\n\r\n"):
            rc, out, err = run(["batch", self.write("m.jsonl", body)])
            self.assertEqual((rc, out, err), (0, "", ""), repr(body))


class Usage(Tmp):
    def test_help_and_version(self):
        for args in (["--help"], ["-h"], ["help"], ["batch", "--help"], ["key", "--help"], ["key", "-h"]):
            rc, out, err = run(args)
            self.assertEqual((rc, err), (0, ""), args)
            self.assertIn("usage", out.lower(), args)
        for args in (["--version"], ["-V"]):
            rc, out, err = run(args)
            self.assertEqual(rc, 0)
            self.assertRegex(out, r"^cckey \d+\.\d+\.\d+ \(key format 1\)\n")

    def test_unknown_command_or_option(self):
        for args in ([], ["frob"], ["--frob"], ["batch", "--frob", MANIFEST], ["key", "--frob"], ["batch", "-Z"],
                     ["batch", "--threads", "0", MANIFEST], ["batch", "--threads", "x", MANIFEST],
                     ["batch", "--threads", "-1", MANIFEST], ["batch", "--chunk", "0", MANIFEST],
                     ["batch", "--format", "xml", MANIFEST], ["batch", "--backend", "gpu", MANIFEST],
                     ["batch", "--verify=most", MANIFEST], ["batch", MANIFEST, MANIFEST],
                     ["batch", os.path.join(self.dir, "missing.jsonl")]):
            rc, out, err = run(args)
            self.assertEqual((rc, out), (2, ""), args)
            self.assertTrue(err.strip(), args)

    def test_directory_as_manifest(self):
        rc, out, err = run(["batch", self.dir])
        self.assertIn(rc, (1, 2))
        self.assertIn(self.dir, err)

    def test_reading_a_cache_never_creates_one(self):
        missing = os.path.join(self.dir, "no-such-cache")
        for sub in (["stats"], ["verify"], ["get", "0" * 131]):
            rc, out, err = run(["cache"] + sub + ["--cache-dir", missing])
            self.assertEqual(rc, 1, sub)
            self.assertIn("no cache folder here", err)
            self.assertFalse(os.path.exists(missing), sub)
        afile = self.write("plain.txt", "x")
        rc, out, err = run(["cache", "stats", "--cache-dir", afile])
        self.assertEqual(rc, 1)
        self.assertIn("not a folder", err)

    def test_cuda_backend_is_unavailable_here(self):
        if os.path.exists("/dev/nvidiactl"):
            self.skipTest("this machine has an NVIDIA driver")
        rc, out, err = run(["batch", "--backend", "cuda", MANIFEST])
        self.assertEqual((rc, out), (1, ""))
        self.assertRegex(err.lower(), r"cuda.*(unavailable|not)|(unavailable|not).*cuda")


def regen():
    with open(os.path.join(DATA, "manifest.keys"), "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(k + "\n" for k in recipe_keys(MANIFEST, DATA)))
    with open(os.path.join(DATA, "manifest.out.jsonl"), "w", encoding="utf-8", newline="\n") as f:
        f.write(recipe_jsonl(MANIFEST, DATA))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--regen":
        regen()
        sys.exit(0)
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: test_cli.py PATH/TO/cckey [unittest args]")
    CCKEY = os.path.abspath(sys.argv.pop(1))
    unittest.main()
