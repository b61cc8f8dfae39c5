#!/usr/bin/env python3
"""How cckey reads manifest lines: the line-length limit (--max-line), running
out of memory on a huge line, lines that straddle the reader's buffer, and
the memory a single huge line costs.

Usage: test_manifest_reader.py PATH/TO/cckey [unittest args]

Keys are checked against the format's recipe (gen_vectors.make_key, hashlib)."""
import array
import fcntl
import os
import resource
import subprocess
import sys
import termios
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from gen_vectors import make_key  # noqa: E402
import clitest  # noqa: E402

CCKEY = None


def sanitized():
    """ASan/TSan reserve terabytes of address space: RLIMIT_AS cannot be used
    there, and their allocators change peak memory."""
    with open(CCKEY, "rb") as f:
        data = f.read()
    return b"__asan_init" in data or b"__tsan_init" in data


def run(args, cwd=None, limit_as=None, stdin=subprocess.DEVNULL, timeout=120):
    def pre():
        if limit_as:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
    p = subprocess.run([CCKEY] + args, cwd=cwd, capture_output=True, timeout=timeout, preexec_fn=pre, stdin=stdin)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def peak_rss_of(args, cwd):
    """Peak RSS in bytes of one cckey run, measured in a fresh child process
    (RUSAGE_CHILDREN is a maximum over all children waited for)."""
    code = ("import resource, subprocess, sys\n"
            "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
            "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", code, CCKEY] + args, cwd=cwd, capture_output=True, text=True,
                         timeout=300).stdout.split()
    return int(out[0]), int(out[1]) * 1024


class Tmp(clitest.TmpTest):
    prefix = "cckey-reader-"


def line(name, source):
    return '{"device": "d", "name": "%s", "source": "%s"}' % (name, source)


class LineLimit(Tmp):
    def test_over_long_line_is_an_error_naming_it(self):
        body = "\n".join([line("a", "s"), "", line("b", "x" * 3000), line("c", "s")]) + "\n"
        self.write("m.jsonl", body)
        out = os.path.join(self.tmp, "keys.txt")
        rc, stdout, err = run(["batch", "--max-line", "2K", "-o", out, "m.jsonl"], cwd=self.tmp)
        self.assertEqual(rc, 1, err)
        self.assertIn("m.jsonl:3:", err)
        self.assertIn("--max-line", err)
        self.assertFalse(os.path.exists(out), "an -o file was written for a failed run")
        self.assertEqual(sorted(os.listdir(self.tmp)), ["m.jsonl"])
        # --keep-going does not turn a refused line into a skipped one: the
        # rest of the manifest was never read.
        rc, stdout, err = run(["batch", "-k", "--max-line", "2K", "-o", out, "m.jsonl"], cwd=self.tmp)
        self.assertEqual(rc, 1, err)
        self.assertFalse(os.path.exists(out))
        # Under the limit (the line ending does not count), the same manifest works.
        rc, stdout, err = run(["batch", "--max-line", "3K", "m.jsonl"], cwd=self.tmp)
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(stdout.splitlines()[1], make_key(b"d", b"b", b"x" * 3000, []))

    def test_limit_is_exact_and_crlf_does_not_count(self):
        ln = line("n", "y" * 1000)
        body = (ln + "\r\n").encode()
        self.write("m.jsonl", body)
        rc, out, err = run(["batch", "--max-line", str(len(ln)), "m.jsonl"], cwd=self.tmp)
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(out, make_key(b"d", b"n", b"y" * 1000, []) + "\n")
        rc, out, err = run(["batch", "--max-line", str(len(ln) - 1), "m.jsonl"], cwd=self.tmp)
        self.assertEqual(rc, 1, err)
        self.assertIn("m.jsonl:1:", err)

    def test_endless_line_from_a_device(self):
        rc, out, err = run(["batch", "--max-line", "64K", "/dev/zero"])
        self.assertEqual((rc, out), (1, ""))
        self.assertIn("/dev/zero:1:", err)

    def test_bad_max_line_values(self):
        for v in ("", "0", "100", "-5", " 5K", "5iB", "1X", "99999999999999999999G"):
            rc, out, err = run(["batch", "--max-line", v, "/dev/null"])
            self.assertEqual(rc, 2, v)
            self.assertIn("--max-line", err, v)

    def test_warm_reads_manifests_the_same_way(self):
        self.write("k.cl", "__kernel void k(__global int *x) { x[0] = 1; }\n")
        body = '{"device": "d", "name": "k", "source_file": "k.cl", "pad": "%s"}\n' % ("p" * 5000)
        self.write("m.jsonl", body)
        cache = os.path.join(self.tmp, "cache")
        rc, out, err = run(["warm", "--cache-dir", cache, "--max-line", "4K", "-q", "m.jsonl"], cwd=self.tmp)
        self.assertEqual(rc, 1, err)
        self.assertIn("m.jsonl:1:", err)
        self.assertIn("--max-line", err)


class OutOfMemory(Tmp):
    def setUp(self):
        super().setUp()
        if sanitized():
            self.skipTest("sanitizer build: RLIMIT_AS cannot be applied")

    def test_a_line_memory_cannot_hold_is_an_error_not_end_of_file(self):
        # The default limit (1 GiB) is above what 700 MB of address space can
        # hold: the reader runs out of memory first, and says so.
        self.write("m.jsonl", line("a", "s") + "\n")
        out = os.path.join(self.tmp, "keys.txt")
        with open("/dev/zero", "rb") as zero:
            rc, stdout, err = run(["batch", "-o", out, "-"], cwd=self.tmp, limit_as=700 << 20,
                                  stdin=zero)
        self.assertEqual(rc, 1, err)
        self.assertIn("<stdin>:1:", err)
        self.assertIn("memory", err)
        self.assertFalse(os.path.exists(out))


class Buffering(Tmp):
    def test_lines_straddling_reads(self):
        # Lines of every length around the reader's 1 MiB reads, so that
        # line ends fall before, on and after buffer boundaries.
        names, body = [], []
        size = 0
        i = 0
        while size < (3 << 20) + 1000:
            src = "z" * (1000 + (i * 7919) % 300000)
            ln = line("n%d" % i, src)
            body.append(ln + ("\r\n" if i % 3 == 0 else "\n"))
            names.append((b"n%d" % i, src.encode()))
            size += len(ln) + 1
            i += 1
        self.write("m.jsonl", "".join(body).rstrip("\n"))   # the last line without its newline
        rc, out, err = run(["batch", "m.jsonl"], cwd=self.tmp)
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(out.splitlines(), [make_key(b"d", n, s, []) for n, s in names])


class Repeats(Tmp):
    """Long strings that repeat across lines and chunks are taken from the
    parser's tables (host/cli/manifest/manifest.h) rather than decoded and
    hashed again: the keys must not change, whatever the chunking and the
    threads, and whichever member the repeat is in."""

    def test_repeated_long_strings_across_chunks(self):
        import json
        import random
        rng = random.Random(5)
        # Only strings without a quote in their first 256 raw bytes are
        # looked up: most texts have none, two have one.
        alphabet = ["a", "b", " ", "{", "}", "\n", "\\", "\u00e9", "\u4e2d", "\U0001f600", "/", "\t", "\x00"]
        texts = ["".join(rng.choice(alphabet) for _ in range(rng.choice([240, 253, 256, 300, 4096, 20000])))
                 for _ in range(10)]
        texts += ['"' + texts[0], texts[1][:100] + '"' + texts[1]]
        rows, want = [], []
        for i in range(400):
            src = texts[rng.randrange(len(texts))]
            name = texts[rng.randrange(len(texts))] if i % 5 == 0 else "k%d" % (i % 7)
            dev = texts[i % 3] if i % 11 == 0 else "dev"
            opts = [["-O", texts[i % 4]]] if i % 13 == 0 else []
            row = {"device": dev, "name": name, "source": src, "options": opts}
            rows.append(json.dumps(row, ensure_ascii=(i % 2 == 0)))
            want.append(make_key(dev.encode(), name.encode(), src.encode(),
                                 [(k.encode(), v.encode()) for k, v in opts]))
        self.write("m.jsonl", "\n".join(rows) + "\n")
        for args in (["--chunk", "7"], ["--chunk", "7", "-j", "1"], ["--chunk", "50", "-j", "3"], []):
            with self.subTest(args=args):
                rc, out, err = run(["batch"] + args + ["m.jsonl"], cwd=self.tmp)
                self.assertEqual((rc, err), (0, ""))
                self.assertEqual(out.splitlines(), want)


class PinnedBuffer(Tmp):
    """batch keeps lines in the buffer they were read into, and a chunk takes
    that buffer whole (manifest_swap): lines that straddle its 36 MiB end,
    long runs of blank lines, and standard input."""

    def test_lines_and_blank_runs_across_buffers(self):
        rng = __import__("random").Random(3)
        body, want = [], []
        size, i = 0, 0
        while size < (80 << 20):
            if i % 500 == 7:   # 1-9 MiB of blank lines
                blank = (" " * rng.randrange(1, 4000) + "\n") * rng.randrange(300, 2500)
                body.append(blank)
                size += len(blank)
            src = "s%d" % i + "y" * rng.randrange(0, 40000)
            ln = line("n%d" % i, src) + ("\r\n" if i % 5 == 0 else "\n")
            body.append(ln)
            want.append(make_key(b"d", b"n%d" % i, src.encode(), []))
            size += len(ln)
            i += 1
        path = self.write("m.jsonl", "".join(body))
        for args in ([], ["-j", "1"], ["--chunk", "1000"]):
            with self.subTest(args=args):
                rc, out, err = run(["batch"] + args + ["m.jsonl"], cwd=self.tmp)
                self.assertEqual((rc, err), (0, ""))
                self.assertEqual(out.splitlines(), want)
        with open(path, "rb") as f:
            rc, out, err = run(["batch", "-"], cwd=self.tmp, stdin=f)
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(out.splitlines(), want)


    def test_a_buffer_of_blank_lines_only(self):
        # 75 MiB of blank lines between two tuples: after the first chunk,
        # a whole buffer holds nothing but blank lines.
        a, b = line("a", "x"), line("b", "x")
        self.write("m.jsonl", a + "\n" + ("\t" * 99 + "\r\n") * 750000 + b + "\n")
        rc, out, err = run(["batch", "m.jsonl"], cwd=self.tmp)
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(out.splitlines(), [make_key(b"d", n, b"x", []) for n in (b"a", b"b")])


def reader_only(test):
    """The reader's windows and buffers do not depend on the string kernels:
    tests of them alone run once, not again under each CCKEY_FORCE_ISA."""
    if os.environ.get("CCKEY_FORCE_ISA"):
        test.skipTest("reader paths only: run in the plain test_manifest_reader")


class LongLinesAfterTheFirst(Tmp):
    """A line longer than a window (36 MiB) that is not the first: a window
    starts at a page boundary, so the reader's first unread byte is rarely
    at its start, and 6f74adb then remapped the same window for ever (100%
    CPU, no output). Every reader path: mapped windows (a file, or one as
    standard input), read() buffers (a pipe; a file as standard input not at
    its start) and warm's reader."""

    def setUp(self):
        super().setUp()
        reader_only(self)
        self.path = os.path.join(self.tmp, "m.jsonl")

    def batch(self, stdin=subprocess.DEVNULL, arg="m.jsonl"):
        return run(["batch", "-q", arg], cwd=self.tmp, stdin=stdin, timeout=60)

    def test_keys_on_every_reader_path(self):
        # The case: a 1-byte source, then one of 37 MiB; then a
        # blank line and a short one after it.
        self.rows = [(b"a", b"x"), (b"b", b"y" * (37 << 20)), (b"c", b"v")]
        text = "".join(line(n.decode(), s.decode()) + "\n" for n, s in self.rows[:2]) + "\n" + line("c", "v") + "\n"
        self.write("m.jsonl", text)
        self.want = [make_key(b"d", n, s, []) for n, s in self.rows]
        for args in ([], ["-j", "1"]):
            with self.subTest(args=args):
                rc, out, err = run(["batch", "-q"] + args + ["m.jsonl"], cwd=self.tmp, timeout=60)
                self.assertEqual((rc, err), (0, ""))
                self.assertEqual(out.splitlines(), self.want)
        with open(self.path, "rb") as f:
            rc, out, err = self.batch(stdin=f, arg="-")
        self.assertEqual((rc, err, out.splitlines()), (0, "", self.want))
        cat = subprocess.Popen(["cat", self.path], stdout=subprocess.PIPE)
        rc, out, err = self.batch(stdin=cat.stdout, arg="-")
        cat.stdout.close()
        cat.wait()
        self.assertEqual((rc, err, out.splitlines()), (0, "", self.want))
        with open(self.path, "rb") as f:   # past line 1: read(), not mapped
            f.seek(len(line("a", "x")) + 1)
            rc, out, err = self.batch(stdin=f, arg="-")
        self.assertEqual((rc, err, out.splitlines()), (0, "", self.want[1:]))
        rc, out, err = run(["warm", "--check", "--cache-dir", os.path.join(self.tmp, "c"), "m.jsonl"],
                           cwd=self.tmp, timeout=60)
        self.assertEqual(rc, 3, err)
        self.assertIn("3 tuples (3 distinct keys)", out + err)

    def test_sparse_line_of_4_5_gib_is_the_max_line_error(self):
        # Mostly a hole: only what the limit lets the reader look at is
        # read (zero pages), not the 4.5 GiB.
        with open(self.path, "wb") as f:
            f.write((line("a", "x") + '\n{"device": "d", "name": "b", "source": "').encode())
            f.truncate(9 << 29)
        if os.stat(self.path).st_blocks * 512 > (1 << 20):
            self.skipTest("this file system does not keep sparse files sparse")
        for limit in ("64M", "40M"):
            rc, out, err = run(["batch", "-q", "--max-line", limit, "-o", "keys", "m.jsonl"], cwd=self.tmp,
                               timeout=60)
            self.assertEqual(rc, 1, err)
            self.assertIn("m.jsonl:2: line is longer than the limit", err)
            self.assertFalse(os.path.exists(os.path.join(self.tmp, "keys")))


class ShrinkingManifest(Tmp):
    """A manifest cut short while batch reads it, beyond the window being
    read: the next window (or read()) ends early. That is exit 1 and the
    "shrank" message, as for a cut under a window (SIGBUS), not an "invalid
    JSON" exit 2 for the torn line or, cut at a line end, exit 0 with the
    tail's tuples silently lost (6f74adb)."""

    def setUp(self):
        super().setUp()
        reader_only(self)

    def cut_while_reading(self, cut_mid_line, stdin_at=None, cut_line=10000):
        rows = [line("n%d" % i, "s" * 4000) + "\n" for i in range(12000)]
        path = self.write("m.jsonl", "".join(rows))
        cut = sum(len(r) for r in rows[:cut_line]) + (100 if cut_mid_line else 0)   # line 10000: past the window
        stdin, args = subprocess.DEVNULL, ["batch", "--chunk", "64", path]
        if stdin_at is not None:
            stdin = open(path, "rb")
            stdin.seek(stdin_at)
            args = ["batch", "--chunk", "64", "-"]
        p = subprocess.Popen([CCKEY] + args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # Keys are not read until half the pipe is full: batch is then
        # blocked writing, and its reader at most two chunks of 64 lines
        # ahead, far from the cut.
        ready = array.array("i", [0])
        while p.poll() is None:
            fcntl.ioctl(p.stdout.fileno(), termios.FIONREAD, ready)
            if ready[0] >= 32768:
                break
            time.sleep(0.01)
        os.truncate(path, cut)
        out, err = p.communicate(timeout=120)
        if stdin_at is not None:
            stdin.close()
        return p.returncode, out.decode(), err.decode()

    def test_cut_mid_line_or_at_a_line_end_is_the_shrank_error(self):
        for mid in (True, False):
            for stdin_at in (None, 0, len(line("n0", "s" * 4000)) + 1):
                with self.subTest(mid=mid, stdin_at=stdin_at):
                    rc, out, err = self.cut_while_reading(mid, stdin_at)
                    self.assertEqual(rc, 1, err)
                    self.assertIn("shrank while it was being read", err)
                    self.assertNotIn("invalid JSON", err)
        # Cut below what the reader has read: under its window (SIGBUS) or
        # before it (the next window is empty), the same error.
        for stdin_at in (None, len(line("n0", "s" * 4000)) + 1):
            with self.subTest(cut_line=30, stdin_at=stdin_at):
                rc, out, err = self.cut_while_reading(True, stdin_at, cut_line=30)
                self.assertEqual(rc, 1, err)
                self.assertIn("shrank while it was being read", err)


class WhitespaceLines(Tmp):
    """One rule for whitespace-only lines: JSON whitespace (space, tab, CR)
    is a blank line, skipped; a form feed or vertical tab is not JSON
    whitespace, so such a line is refused with its column (6f74adb skipped
    both alone, yet refused both before a '{')."""

    def test_json_whitespace_is_blank_and_form_feed_or_vertical_tab_is_not(self):
        good = line("n", "s")
        body = "\n".join([good, " \t\r \t", "\f", "\v", " \f\v", "\f" + good, good]) + "\n"
        self.write("m.jsonl", body)
        key = make_key(b"d", b"n", b"s", [])
        rc, out, err = run(["batch", "-k", "m.jsonl"], cwd=self.tmp)
        self.assertEqual(rc, 2, err)
        located = [ln.split(":")[1:3] for ln in err.splitlines() if ln.startswith("m.jsonl:")]
        self.assertEqual(located, [["3", "1"], ["4", "1"], ["5", "2"], ["6", "1"]], err)
        self.assertEqual(err.count("invalid JSON"), 4, err)
        self.assertEqual(out, key + "\n" + "\n" * 4 + key + "\n")   # line 2 skipped, 3-6 held in place
        rc, out, err = run(["warm", "--check", "--cache-dir", os.path.join(self.tmp, "c"), "m.jsonl"],
                           cwd=self.tmp)
        self.assertEqual(rc, 2, err)
        self.assertIn("m.jsonl:3:1: invalid JSON", err)
        # The same lines without \f and \v are all blank.
        self.write("ok.jsonl", "\n".join([good, " \t\r \t", "\t", "   ", good]) + "\r\n")
        rc, out, err = run(["batch", "ok.jsonl"], cwd=self.tmp)
        self.assertEqual((rc, err, out), (0, "", key + "\n" + key + "\n"))


class SourceFileColumn(Tmp):
    def test_unreadable_source_file_names_its_column_in_characters(self):
        # The column is worked out only for the message, from the line the
        # chunk still holds: UTF-8 before the member counts by characters.
        self.write("k.cu", "x")
        bad = '{"device": "\u00e9\u4e2d", "name": "n\u00e9", "source_file": "missing.cu"}'
        good = '{"device": "d", "name": "n", "source_file": "k.cu"}'
        self.write("m.jsonl", (good + "\n") * 2 + bad + "\n" + good + "\n")
        col = bad.index('"source_file"') + 1
        for args in ([], ["--chunk", "1"], ["-j", "1", "--keep-going"]):
            with self.subTest(args=args):
                rc, out, err = run(["batch"] + args + ["m.jsonl"], cwd=self.tmp)
                self.assertEqual(rc, 2)
                self.assertIn("m.jsonl:3:%d: cannot read source_file" % col, err)


class HugeLine(Tmp):
    def test_one_huge_line_costs_a_small_multiple_of_its_size(self):
        if sanitized():
            self.skipTest("sanitizer build: its allocator changes peak memory")
        n = 96 << 20
        self.write("m.jsonl", '{"device": "d", "name": "n", "source": "' + "q" * n + '"}\n')
        rc, peak = peak_rss_of(["batch", "m.jsonl"], self.tmp)
        self.assertEqual(rc, 0)
        # The line held once, its decoded string once, and slack.
        self.assertLess(peak, 2.6 * n, f"peak RSS {peak >> 20} MiB for a {n >> 20} MiB line")


if __name__ == "__main__":
    CCKEY = os.path.abspath(sys.argv.pop(1))
    unittest.main()
