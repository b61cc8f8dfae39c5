#!/usr/bin/env python3
"""The CLI as a new user meets it: --version, help, did-you-mean.

Usage: test_adoption.py PATH/TO/cckey [unittest args]"""
import ctypes.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

from clitest import run_on_pty

CCKEY = None
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "tests", "data")


def run(args, stdin=b"", cwd=None, env=None, timeout=60):
    p = subprocess.run([CCKEY] + args, input=stdin, cwd=cwd, env=env, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


class Version(unittest.TestCase):
    def version(self, env=None):
        rc, out, err = run(["--version"], env=env)
        self.assertEqual((rc, err), (0, ""))
        return out

    def test_version_names_format_backends_and_isa(self):
        out = self.version()
        self.assertRegex(out, r"^cckey \d+\.\d+\.\d+ \(key format 1\)\n")
        self.assertRegex(out, r"\nbackends compiled in: cpu( opencl)?( cuda)?\n")
        # The ISA is the one `cckey devices` reports for the CPU backend.
        rc, dev, _ = run(["devices", "--json"])
        self.assertEqual(rc, 0)
        cpu = [b for b in json.loads(dev)["backends"] if b["backend"] == "cpu"][0]
        self.assertIn("\nCPU MD5: %s\n" % cpu["simd"], out)
        self.assertIn("MIT License", out)

    def test_runtime_lines_follow_the_libraries(self):
        out = self.version()
        for what in ("OpenCL", "CUDA", "NVRTC", "Vulkan"):
            self.assertRegex(out, r"\n%s: +(loads|does not load: \S.*)\n" % what)
        # A library path that cannot load must say so, with the reason.
        env = dict(os.environ, CCKEY_OPENCL_LIBRARY="/nonexistent/libOpenCL.so.1",
                   CCKEY_CUDA_LIBRARY="/nonexistent/libcuda.so.1", CCKEY_NVRTC_LIBRARY="/nonexistent/libnvrtc.so",
                   CCKEY_VULKAN_LIBRARY="/nonexistent/libvulkan.so.1")
        out = self.version(env)
        if "opencl" in out.split("\n")[1]:
            self.assertRegex(out, r"\nOpenCL: +does not load: .*nonexistent")
        self.assertRegex(out, r"\nCUDA: +does not load: ")
        self.assertRegex(out, r"\nNVRTC: +does not load: ")
        self.assertRegex(out, r"\nVulkan: +does not load: no Vulkan loader \(/nonexistent/libvulkan.so.1\)")
        # And where ocl-icd is installed, OpenCL loads (ctypes is the oracle).
        if "opencl" in out.split("\n")[1] and ctypes.util.find_library("OpenCL"):
            try:
                ctypes.CDLL("libOpenCL.so.1")
            except OSError:
                return
            self.assertRegex(self.version(), r"\nOpenCL: +loads\n")


class Help(unittest.TestCase):
    def test_help_command_prints_that_commands_help(self):
        for cmd in ("key", "batch", "scan", "warm", "cache", "devices", "selftest"):
            rc, out, err = run(["help", cmd])
            rc2, out2, _ = run([cmd, "--help"])
            self.assertEqual((rc, err), (0, ""), cmd)
            self.assertEqual(out, out2, cmd)
            self.assertTrue(out.startswith("usage: cckey " + cmd), cmd)
        rc, out, err = run(["help"])
        self.assertEqual(rc, 0)
        self.assertIn("Commands:", out)

    def test_unknown_command_suggests_the_one_edit_away(self):
        for typo, meant in (("bacth", "batch"), ("bach", "batch"), ("kye", "key"), ("scann", "scan"),
                            ("selftets", "selftest"), ("devics", "devices"), ("wram", "warm")):
            rc, out, err = run([typo])
            self.assertEqual((rc, out), (2, ""), typo)
            self.assertEqual(err.count("\n"), 1, err)
            self.assertIn('did you mean "%s"' % meant, err)
        rc, out, err = run(["help", "bacth"])
        self.assertEqual(rc, 2)
        self.assertIn('did you mean "batch"', err)
        # Two edits away, or nothing close: no guess.
        for far in ("btahc", "frobnicate"):
            rc, out, err = run([far])
            self.assertEqual(rc, 2)
            self.assertNotIn("did you mean", err)


def recipe(device, name, source, options):
    """The key from its definition, with hashlib (independent of cckey)."""
    import hashlib
    h = lambda b: hashlib.md5(b).hexdigest()
    canon = ",".join("%s=%s" % (h(k), h(v)) for k, v in sorted(options, key=lambda kv: kv[0]))
    return ":".join([h(device), h(name), h(source), h(canon.encode())]), canon


class Grammar(unittest.TestCase):
    def test_errors_are_one_line_with_a_hint(self):
        cases = [(["key", "--devcie", "0"], "did you mean --device?"),
                 (["batch", "--fromat", "json"], "did you mean --format?"),
                 (["scan", "--lsit", "x"], "did you mean --list?"),
                 (["warm", "--jbos", "2", "m"], "did you mean --jobs?"),
                 (["devices", "--jsn"], "did you mean --json?"),
                 (["key", "--device"], "option --device needs a value"),
                 (["key", "-d"], "option -d needs a value"),
                 (["key", "--device", "0"], "missing --name N, --source S or --source-file F"),
                 (["key", "-d", "d", "-n", "n"], "missing --source S or --source-file F"),
                 (["key", "--help=x"], "option --help takes no value"),
                 (["key", "--format", "jsno", "-d", "d"], "did you mean json?"),
                 (["cache", "stast"], 'did you mean "stats"?'),
                 (["selftest", "-Z"], "unknown option -Z")]
        for args, hint in cases:
            rc, out, err = run(args)
            self.assertEqual((rc, out), (2, ""), args)
            self.assertEqual(err.count("\n"), 1, (args, err))
            self.assertIn(hint, err, args)
            self.assertNotIn("usage:", err, args)

    def test_jobs_and_threads_everywhere(self):
        manifest = os.path.join(DATA, "manifest.jsonl")
        rc, want, _ = run(["batch", manifest])
        self.assertEqual(rc, 0)
        for flag in (["-j", "1"], ["--jobs", "2"], ["--threads", "2"]):
            rc, out, err = run(["batch"] + flag + [manifest])
            self.assertEqual((rc, out), (0, want), flag)
        for cmd in ("batch", "selftest", "warm"):
            rc, out, _ = run([cmd, "--help"])
            self.assertIn("-j, --jobs N", out, cmd)

    def test_key_formats_and_bare_flags(self):
        want, canon = recipe(b"d", b"n", b"src", [(b"-cl-fast-relaxed-math", b""), (b"-D", b"N=4")])
        base = ["key", "-d", "d", "-n", "n", "-s", "src", "-O", "-cl-fast-relaxed-math", "-O", "-DN=4"]
        rc, out, err = run(base)
        self.assertEqual((rc, out, err), (0, want + "\n", ""))
        for fmt in (["--format", "json"], ["--json"], ["--format", "jsonl"]):
            rc, out, err = run(base + fmt)
            self.assertEqual(json.loads(out), {"key": want}, fmt)
        rc, out, err = run(base + ["--format", "jsonl"])
        self.assertEqual(out.count("\n"), 1)
        rc, out, err = run(base + ["--format", "text"])
        self.assertEqual(out, want + "\n")

    def test_key_explain_shows_every_step(self):
        import hashlib
        h = lambda b: hashlib.md5(b).hexdigest()
        opts = [(b"arch", b"sm_90"), (b"-O", b"3"), (b"-D", b"A"), (b"-D", b"B")]
        want, canon = recipe(b"NVIDIA H200|580.159.04", b"vec_add", b"__global__ void f(){}", opts)
        args = ["key", "-d", "NVIDIA H200|580.159.04", "-n", "vec_add", "-s", "__global__ void f(){}",
                "-O", "arch=sm_90", "-O", "-O=3", "-O", "-D=A", "-O", "-D=B", "--explain"]
        rc, out, err = run(args)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("key      %s\n" % want, out)
        self.assertIn('canon    "%s"\n' % canon, out)
        self.assertIn("device   md5 %s" % h(b"NVIDIA H200|580.159.04"), out)
        self.assertIn("name     md5 %s" % h(b"vec_add"), out)
        self.assertIn("source   md5 %s" % h(b"__global__ void f(){}"), out)
        # Canonical order: sorted by key, equal keys in their given order.
        self.assertLess(out.index('"-D" = "A"'), out.index('"-D" = "B"'))
        self.assertLess(out.index('"-O" = "3"'), out.index('"arch" = "sm_90"'))
        rc, out, err = run(args + ["--format", "json"])
        doc = json.loads(out)
        self.assertEqual(doc["key"], want)
        self.assertEqual(doc["canonical_options"], canon)
        self.assertEqual(doc["options_md5"], h(canon.encode()))
        self.assertEqual([(o["key"], o["value"]) for o in doc["options"]],
                         [("-D", "A"), ("-D", "B"), ("-O", "3"), ("arch", "sm_90")])
        self.assertEqual(doc["options"][0]["key_md5"], h(b"-D"))

    def test_json_formats_parse(self):
        manifest = os.path.join(DATA, "manifest.jsonl")
        rc, keys, _ = run(["batch", manifest])
        keys = keys.split()
        rc, out, err = run(["batch", "--format", "json", manifest])
        self.assertEqual(rc, 0, err)
        self.assertEqual([o["key"] for o in json.loads(out)], keys)
        rc, out2, err = run(["batch", "--json", manifest])
        self.assertEqual(out2, out)
        rc, out, err = run(["batch", "--format", "json", "-"], stdin=b"")
        self.assertEqual(json.loads(out), [])
        rc, out, err = run(["batch", "--format", "keys", manifest])
        self.assertEqual(out.split(), keys)
        for cmd in (["devices"], ["selftest", "-b", "cpu"]):
            rc, out, err = run(cmd + ["--format", "json"], timeout=300)
            self.assertEqual(rc, 0, (cmd, err))
            json.loads(out)
            rc, out, err = run(cmd + ["--format", "jsonl"], timeout=300)
            lines = [json.loads(l) for l in out.splitlines()]
            self.assertTrue(lines and all("backend" in l for l in lines), cmd)
        rc, out, err = run(["selftest", "-b", "cpu", "--json"], timeout=300)
        doc = json.loads(out)
        self.assertEqual((doc["failed"], doc["backends"][0]["status"]), (0, "ok"))
        self.assertGreater(doc["passed"], 0)
        self.assertIn("cpu:", err)   # the check lines, on standard error

    def test_scan_list_formats(self):
        kernels = os.path.join(ROOT, "examples", "kernels")
        rc, text, err = run(["scan", "--list", kernels])
        self.assertEqual(rc, 0, err)
        rc, out, err = run(["scan", "--list", "--format", "json", kernels])
        doc = json.loads(out)
        self.assertEqual(len(doc), len(text.splitlines()))
        for entry, line in zip(doc, text.splitlines()):
            self.assertTrue(line.startswith("%s:%d: %s" % (entry["file"], entry["line"], entry["name"])), line)
        rc, out, err = run(["scan", "--list", "--format", "jsonl", kernels])
        self.assertEqual([json.loads(l) for l in out.splitlines()], doc)
        rc, out, err = run(["scan", "--format", "json", kernels])
        self.assertEqual((rc, out), (2, ""))

    def scan_options(self, args):
        src = os.path.join(ROOT, "examples", "kernels")
        rc, out, err = run(["scan", "-d", "cpu"] + args + [src])
        self.assertEqual(rc, 0, err)
        return json.loads(out.splitlines()[0])["options"]

    def test_scan_options_are_quoted_as_in_sh(self):
        self.assertEqual(self.scan_options(["-O", '-DMSG="hi there",-cl-fast-relaxed-math']),
                         [["-D", "MSG=hi there"], ["-cl-fast-relaxed-math", ""]])
        self.assertEqual(self.scan_options(["-O", "'-DA=x,y' -DB=\\ z"]), [["-D", "A=x,y"], ["-D", "B= z"]])
        self.assertEqual(self.scan_options(["-O", '"-DQ=say \\"hi\\""']), [["-D", 'Q=say "hi"']])
        self.assertEqual(self.scan_options(["-O", "-DX= -O3"]), [["-D", "X="], ["-O", "3"]])
        self.assertEqual(self.scan_options(["-O", "-cl-std=CL2.0 a= =b"]), [["-cl-std", "CL2.0"], ["a=", ""], ["", "b"]])
        for bad in ("'open", '-D"open'):
            rc, out, err = run(["scan", "-d", "cpu", "-O", bad, ROOT])
            self.assertEqual((rc, out), (2, ""), bad)
            self.assertIn("unterminated", err)

    def test_options_file_takes_json_pairs(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "opts")
            with open(path, "w") as f:
                f.write('# sets\n[["-DMSG", "a \\"q\\", b"], ["", "="]]\n-DX=1 "-DY=a b"\n-\n')
            src = os.path.join(ROOT, "examples", "kernels", "opencl")
            rc, out, err = run(["scan", "-d", "cpu", "--options-file", path, src])
            self.assertEqual(rc, 0, err)
            sets = [json.loads(l)["options"] for l in out.splitlines()[:3]]
            self.assertEqual(sets, [[["-DMSG", 'a "q", b'], ["", "="]], [["-D", "X=1"], ["-D", "Y=a b"]], []])
            for bad, col in (('[["a"]]', 1), ('[["a", 1]]', 1), ('[{"a": "b"}]', 1), ('[["a", "b"]', 11)):
                with open(path, "w") as f:
                    f.write("-DOK\n" + bad + "\n")
                rc, out, err = run(["scan", "-d", "cpu", "--options-file", path, src])
                self.assertEqual((rc, out), (2, ""), bad)
                self.assertIn("%s:2:%d: " % (path, col), err)

    def test_quiet_means_no_warnings(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "empty.cl"), "w") as f:
                f.write("// no kernels\n")
            rc, out, err = run(["scan", "-d", "cpu", d])
            self.assertIn("warning", err)
            for q in ("-q", "--quiet"):
                rc, out, err = run(["scan", "-d", "cpu", q, d])
                self.assertEqual((rc, err), (0, ""), q)


class ProgressOnATerminal(unittest.TestCase):
    """Keys and the progress bar share one terminal: the bar is cleared
    before any key is written, so every key line shows the key alone."""

    def run_on_pty(self, args):
        rc, out = run_on_pty([CCKEY] + args, timeout=120, environ=os.environ.copy())
        self.assertEqual(rc, 0)
        return out

    def test_bar_never_shares_a_line_with_a_key(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "big.jsonl")
            with open(path, "w") as f:
                for i in range(150000):
                    f.write('{"device":"d","name":"k%d","source":"%s"}\n' % (i, ("x%d " % i) * 40))
            raw = self.run_on_pty(["batch", "-j", "1", "--chunk", "2000", path])
            quiet = self.run_on_pty(["batch", "-q", "-j", "1", "--chunk", "2000", path])
        self.assertNotIn("batch [", quiet)
        if "batch [" not in raw:
            self.skipTest("the batch finished before the bar's first second")
        lines = raw.replace("\r\n", "\n").split("\n")
        keys = 0
        for line in lines:
            # What the terminal shows: the text after the last carriage
            # return, with erase-to-end-of-line codes gone.
            shown = line.split("\r")[-1].replace("\033[K", "")
            if not shown:
                continue
            self.assertRegex(shown, r"^[0-9a-f]{32}(:[0-9a-f]{32}){3}$", repr(line[:300]))
            keys += 1
        self.assertEqual(keys, 150000)


class CacheErgonomics(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def env(self, **kv):
        env = {k: v for k, v in os.environ.items() if k not in ("CCKEY_CACHE_DIR", "XDG_CACHE_HOME")}
        env.update(kv)
        return env

    def test_default_folder(self):
        home = os.path.join(self.dir, "home")
        os.mkdir(home)
        cases = [(dict(HOME=home), os.path.join(home, ".cache", "cckey")),
                 (dict(HOME=home, XDG_CACHE_HOME=os.path.join(self.dir, "xdg")), os.path.join(self.dir, "xdg", "cckey")),
                 (dict(HOME=home, XDG_CACHE_HOME="relative/ignored"), os.path.join(home, ".cache", "cckey")),
                 (dict(HOME=home, XDG_CACHE_HOME=os.path.join(self.dir, "xdg"),
                       CCKEY_CACHE_DIR=os.path.join(self.dir, "explicit")), os.path.join(self.dir, "explicit"))]
        for kv, want in cases:
            rc, out, err = run(["cache", "config", "max-size", "1M"], env=self.env(**kv))
            self.assertEqual((rc, err), (0, ""), kv)
            with open(os.path.join(want, "cckey.conf")) as f:
                self.assertIn("max_size = 1M\n", f.read(), kv)
            rc, out, err = run(["cache", "stats", "--format", "json"], env=self.env(**kv))
            self.assertEqual(json.loads(out)["cache_dir"], want)
            self.assertEqual(json.loads(out)["max_bytes"], 1 << 20)

    def cache(self, *args, **kw):
        return run(["cache"] + list(args) + ["--cache-dir", self.dir], **kw)

    def test_put_get_list_stats_trim(self):
        keys = []
        for i in range(6):
            key, _ = recipe(b"d", b"k%d" % i, b"s", [])
            payload = os.path.join(self.dir, "p%d" % i)
            with open(payload, "wb") as f:
                f.write(bytes([i]) * (300 * (i + 1)))
            rc, out, err = self.cache("put", key, payload)
            self.assertEqual((rc, err), (0, ""))
            keys.append(key)
        rc, out, _ = self.cache("get", keys[2])
        self.assertEqual(out, "\x02" * 900)
        missing, _ = recipe(b"d", b"nope", b"s", [])
        rc, out, _ = self.cache("get", missing)
        self.assertEqual(rc, 1)
        rc, out, err = self.cache("list")
        listed = {l.split()[0]: int(l.split()[1]) for l in out.splitlines()}
        self.assertEqual(listed, {k: 192 + 300 * (i + 1) for i, k in enumerate(keys)})
        rc, out, err = self.cache("list", "--format", "json")
        self.assertEqual(sorted(e["key"] for e in json.loads(out)), sorted(keys))
        rc, out, err = self.cache("stats", "--json")
        doc = json.loads(out)
        self.assertEqual((doc["entries"], doc["hits"], doc["misses"], doc["max_bytes"]), (6, 1, 1, 0))
        rc, out, err = self.cache("stats")
        self.assertIn("local:             1 hit, 1 miss, 50.0% hit rate\n", out)
        rc, out, err = self.cache("trim")
        self.assertEqual(rc, 2)
        self.assertIn("no size or age limit", err)
        # The limit set once is the folder's: trim, and any later writer, keep to it.
        rc, out, err = self.cache("config", "max-size", "4K")
        self.assertEqual(rc, 0, err)
        rc, out, err = self.cache("config")
        self.assertIn("(cckey.conf) max-size = 4K\n", out)
        rc, out, err = self.cache("trim")
        self.assertEqual(rc, 0, err)
        rc, out, err = self.cache("stats", "--json")
        self.assertLessEqual(json.loads(out)["bytes"], 4096)
        big = os.path.join(self.dir, "big")
        with open(big, "wb") as f:
            f.write(b"x" * 3000)
        for i in range(5):
            key, _ = recipe(b"d", b"more%d" % i, b"s", [])
            self.assertEqual(self.cache("put", key, big)[0], 0)
        rc, out, err = self.cache("stats", "--json")
        self.assertLessEqual(json.loads(out)["bytes"], 4096)
        rc, out, err = self.cache("config", "max-size", "none")
        rc, out, err = self.cache("config")
        self.assertIn("(default) max-size = none\n", out)

    def test_bad_input(self):
        rc, out, err = self.cache("config", "max-szie", "1G")
        self.assertEqual(rc, 2)
        self.assertIn('did you mean "max-size"', err)
        rc, out, err = self.cache("config", "max-size", "lots")
        self.assertEqual(rc, 2)
        rc, out, err = self.cache("put", "not-a-key", "/dev/null")
        self.assertEqual(rc, 2)
        key, _ = recipe(b"d", b"n", b"s", [])
        rc, out, err = self.cache("put", key, os.path.join(self.dir, "missing"))
        self.assertEqual(rc, 2)
        self.assertIn("missing", err)
        rc, out, err = run(["cache", "list", "--cache-dir", os.path.join(self.dir, "none")])
        self.assertEqual(rc, 1)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "none")))


class ManifestTypos(unittest.TestCase):
    def test_a_member_one_edit_away_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.jsonl")
            with open(path, "w") as f:
                f.write('{"devcie": "d", "name": "n", "source": "s"}\n')
                for _ in range(3):
                    f.write('{"device": "d", "name": "n", "source": "s", "optoins": [["-O", "3"]]}\n')
                f.write('{"device": "d", "name": "n", "source": "s", "comment": "unrelated"}\n')
            rc, out, err = run(["batch", "-k", path])
            self.assertEqual(rc, 2)
            want, _ = recipe(b"d", b"n", b"s", [])
            self.assertEqual(out.split("\n"), ["", want, want, want, want, ""])
            self.assertIn('%s:1:1: missing "device"' % path, err)
            self.assertIn('"devcie" is not a member; did you mean "device"?', err)
            self.assertEqual(err.count('unknown member "optoins" is ignored; did you mean "options"?'), 1, err)
            self.assertIn("%s:2:45: " % path, err)
            self.assertNotIn("comment", err)
            rc, out, err = run(["batch", "-k", "-q", path])
            self.assertNotIn("optoins", err)


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: test_adoption.py PATH/TO/cckey [unittest args]")
    CCKEY = os.path.abspath(sys.argv.pop(1))
    unittest.main()
