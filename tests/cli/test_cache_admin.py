#!/usr/bin/env python3
"""cckey cache stats, config and trim as a ccache user expects them (issue 27):
stats for people and as JSON, --zero, every setting through config with its
origin, age-based trim. The oracles are the files themselves (os.stat, the
cckey.conf text), hashlib for the keys, and the look-ups the test made.

Usage: test_cache_admin.py PATH/TO/cckey [unittest args]"""
import hashlib
import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import time
import unittest

CCKEY = None


def env_of(**kv):
    env = {k: v for k, v in os.environ.items()
           if k not in ("CCKEY_CACHE_DIR", "XDG_CACHE_HOME", "CCKEY_REMOTE", "CCKEY_REMOTE_KEY")}
    env.update(kv)
    return env


def run(args, env=None):
    p = subprocess.run([CCKEY] + args, env=env or env_of(), capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def key_of(name):
    h = lambda b: hashlib.md5(b).hexdigest()
    return ":".join([h(b"dev"), h(name.encode()), h(b"src"), h(b"")])


class Admin(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, "cache")

    def tearDown(self):
        self.tmp.cleanup()

    def cache(self, *args, env=None):
        return run(["cache", "--cache-dir", self.dir] + list(args), env=env)

    def put(self, name, size):
        path = os.path.join(self.tmp.name, "payload")
        with open(path, "wb") as f:
            f.write(os.urandom(size))
        rc, out, err = self.cache("put", key_of(name), path)
        self.assertEqual((rc, err), (0, ""))

    def entry_files(self):
        found = {}
        for shard in os.listdir(self.dir):
            sub = os.path.join(self.dir, shard)
            if len(shard) == 2 and os.path.isdir(sub):
                for name in os.listdir(sub):
                    if not name.startswith("."):
                        found[name.replace("-", ":")] = os.path.join(sub, name)
        return found

    def conf(self):
        with open(os.path.join(self.dir, "cckey.conf")) as f:
            return f.read()

    def write_conf(self, text):
        os.makedirs(self.dir, exist_ok=True)
        with open(os.path.join(self.dir, "cckey.conf"), "w") as f:
            f.write(text)

    def stats(self):
        rc, out, err = self.cache("stats", "--format", "json")
        self.assertEqual(rc, 0, err)
        return json.loads(out)

    # ---- stats ----

    def test_stats_for_people_and_as_json(self):
        for i in range(5):
            self.put("k%d" % i, 3000 * (i + 1))
        self.assertEqual(self.cache("config", "max-size", "1M")[0], 0)
        for i in range(3):
            self.assertEqual(self.cache("get", key_of("k%d" % i))[0], 0)
        self.assertEqual(self.cache("get", key_of("absent"))[0], 1)
        files = self.entry_files()
        total = sum(os.stat(p).st_size for p in files.values())
        doc = self.stats()
        self.assertEqual(doc["cache_dir"], self.dir)
        self.assertEqual((doc["entries"], doc["bytes"], doc["max_bytes"]), (5, total, 1 << 20))
        self.assertAlmostEqual(doc["size_share"], total / (1 << 20))
        self.assertEqual((doc["hits"], doc["misses"]), (3, 1))
        self.assertAlmostEqual(doc["hit_rate"], 0.75)
        self.assertIsNone(doc["zeroed_at"])
        self.assertEqual(doc["remotes"], [])
        rc, out, err = self.cache("stats")
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"cache folder: +%s\n" % re.escape(self.dir))
        self.assertRegex(out, r"entries: +5 \(5 builds\)\n")
        self.assertIn("%.1f KiB of 1.0 MiB (%.1f%% of the limit)" % (total / 1024, 100 * total / (1 << 20)), out)
        self.assertRegex(out, r"local: +3 hits, 1 miss, 75.0% hit rate\n")
        self.assertRegex(out, r"zeroed: +never\n")

    def test_stats_json_of_a_folder_named_in_bytes_that_are_not_utf8(self):
        # A path may hold any bytes; JSON text may not. The writer puts
        # U+FFFD for each stray byte and escapes control bytes, where the
        # document used to be dropped silently (nothing printed, exit 0).
        self.dir = os.path.join(self.tmp.name, "c\udcff\x01")   # bytes 0xff, 0x01 (surrogateescape)
        self.put("k0", 100)
        for fmt in ("json", "jsonl"):
            rc, out, err = self.cache("stats", "--format", fmt)
            self.assertEqual(rc, 0, err)
            self.assertEqual(len(out.splitlines()) == 1, fmt == "jsonl", out)
            doc = json.loads(out)
            self.assertEqual(doc["cache_dir"], os.path.join(self.tmp.name, "c\ufffd\x01"))
            self.assertEqual(doc["entries"], 1)
            self.assertIn("\\u0001", out)

    def test_zero_records_when_and_clear_keeps_the_counts(self):
        self.put("a", 100)
        for _ in range(4):
            self.cache("get", key_of("a"))
        self.cache("get", key_of("b"))
        rc, out, err = self.cache("clear")
        self.assertEqual(rc, 0, err)
        self.assertEqual((self.stats()["hits"], self.stats()["misses"]), (4, 1), "clear keeps them, as ccache -C")
        before = int(time.time())
        rc, out, err = self.cache("stats", "--zero")
        self.assertEqual(rc, 0, err)
        self.assertIn("zeroed", out)
        doc = self.stats()
        self.assertEqual((doc["hits"], doc["misses"]), (0, 0))
        zeroed = time.mktime(time.strptime(doc["zeroed_at"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
        self.assertGreaterEqual(zeroed, before - 1)
        self.assertLessEqual(zeroed, time.time() + 1)
        self.assertGreaterEqual(doc["seconds_since_zeroed"], 0)
        rc, out, err = self.cache("stats")
        self.assertRegex(out, r"zeroed: +\d+ s ago \(%s\)\n" % re.escape(doc["zeroed_at"]))
        # --zero belongs to stats only.
        rc, out, err = self.cache("list", "--zero")
        self.assertEqual(rc, 2)
        self.assertIn("--zero is for cache stats only", err)

    def test_damaged_counter_files_are_a_warning(self):
        self.put("a", 100)
        self.cache("get", key_of("a"))
        stats = os.path.join(self.dir, "stats")
        for name in os.listdir(stats):
            if name.isdigit():
                with open(os.path.join(stats, name), "wb") as f:
                    f.write(b"\x00\xffgarbage")
        rc, out, err = self.cache("get", key_of("a"))
        self.assertEqual(rc, 0, err)
        rc, out, err = self.cache("stats")
        self.assertEqual(rc, 0, err)
        self.assertIn("damaged counter file", err)

    # ---- config ----

    def test_every_setting_with_its_origin(self):
        rc, out, err = self.cache("config")
        self.assertEqual(rc, 0)
        self.assertIn("no cache folder here yet", err)
        self.assertFalse(os.path.exists(self.dir), "showing creates nothing")
        want = {"cache-dir": ("command line", self.dir), "max-size": ("default", "none"),
                "max-age": ("default", "none"), "remote": ("default", "none"),
                "remote-only-read": ("default", "false"), "remote-key-file": ("default", "none"),
                "remote-max-entry": ("default", "256M"), "compression": ("default", "none"),
                "compression-level": ("default", "0")}
        got = {}
        for line in out.splitlines():
            m = re.fullmatch(r"\(([a-z. ]+)\) ([a-z-]+) = (.*)", line)
            self.assertTrue(m, line)
            got[m.group(2)] = (m.group(1), m.group(3))
        self.assertEqual(got, want)
        # Each origin: cckey.conf, the environment, the command line.
        self.write_conf("# shared\nmax_size = 2G\nremote = redis://127.0.0.1:1\n")
        rc, out, err = self.cache("config", "--format", "json")
        doc = {e["setting"]: (e["origin"], e["value"]) for e in json.loads(out)}
        self.assertEqual(doc["max-size"], ("cckey.conf", "2G"))
        self.assertEqual(doc["remote"], ("cckey.conf", ["redis://127.0.0.1:1"]))
        env = env_of(CCKEY_REMOTE="redis://127.0.0.1:2 http://127.0.0.1:3/c", CCKEY_REMOTE_KEY="hunter2")
        rc, out, err = self.cache("config", "--format", "json", env=env)
        doc = {e["setting"]: (e["origin"], e["value"]) for e in json.loads(out)}
        self.assertEqual(doc["remote"], ("environment", ["redis://127.0.0.1:2", "http://127.0.0.1:3/c"]))
        self.assertEqual(doc["remote-key-file"][0], "environment")
        self.assertNotIn("hunter2", out)
        rc, out, err = self.cache("config", "--remote", "redis://127.0.0.1:4", "--remote-only-read", env=env)
        self.assertIn("(command line) remote = redis://127.0.0.1:4\n", out)
        self.assertIn("(command line) remote-only-read = true\n", out)
        rc, out, err = run(["cache", "config", "max-size"], env=env_of(CCKEY_CACHE_DIR=self.dir))
        self.assertEqual(out, "(cckey.conf) max-size = 2G\n")
        rc, out, err = run(["cache", "config"], env=env_of(CCKEY_CACHE_DIR=self.dir))
        self.assertIn("(environment) cache-dir = %s\n" % self.dir, out)

    def test_set_and_unset_every_setting_keeping_comments(self):
        self.write_conf("# kept: a comment\n\n# another\nmax_size = 1G   # old\n")
        os.chmod(os.path.join(self.dir, "cckey.conf"), 0o600)
        good = [("max-size", "10G", "max_size = 10G"), ("max-age", "30d", "max_age = 30d"),
                ("remote-only-read", "true", "remote_only_read = true"),
                ("remote-key-file", "/etc/cckey/secret", "remote_key_file = /etc/cckey/secret"),
                ("remote-max-entry", "64M", "remote_max_entry = 64M"), ("compression", "zstd", "compression = zstd"),
                ("compression-level", "-3", "compression_level = -3"), ("compression-level", "19", "compression_level = 19")]
        for name, value, line in good:
            with self.subTest(name):
                # A negative level is no option: after "--", as getopt has it.
                rc, out, err = self.cache("config", name, *(["--"] if value.startswith("-") else []), value)
                self.assertEqual((rc, err), (0, ""))
                text = self.conf()
                self.assertIn(line + "\n", text)
                self.assertEqual(text.count(line.split(" =")[0] + " ="), 1, text)
                self.assertTrue(text.startswith("# kept: a comment\n\n# another\n"), text)
                rc, out, err = self.cache("config", name)
                self.assertEqual(out, "(cckey.conf) %s = %s\n" % (name, value))
        self.assertNotIn("1G", self.conf(), "the old max_size line is replaced where it stood")
        self.assertTrue(self.conf().startswith("# kept: a comment\n\n# another\nmax_size = 10G\n"), self.conf())
        self.assertEqual(stat.S_IMODE(os.stat(os.path.join(self.dir, "cckey.conf")).st_mode), 0o600)
        for name, _, line in good:
            rc, out, err = self.cache("config", name, "none")
            self.assertEqual(rc, 0, err)
            self.assertNotIn(line.split(" =")[0] + " =", self.conf())
        self.assertEqual(self.conf(), "# kept: a comment\n\n# another\n")
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith(".tmp")], [], "no temporary file left")

    def test_remote_list_add_remove(self):
        r1, r2, r3 = "redis://:hunter2@127.0.0.1:1/2|ttl=60", "http://127.0.0.1:2/c|bearer=hunter2", "redis://127.0.0.1:3"
        self.assertEqual(self.cache("config", "remote", r1, r2)[0], 0)
        self.assertEqual(self.conf(), "remote = %s\nremote = %s\n" % (r1, r2))
        self.assertEqual(self.cache("config", "remote", "add", r3)[0], 0)
        self.assertEqual(self.conf(), "remote = %s\nremote = %s\nremote = %s\n" % (r1, r2, r3))
        rc, out, err = self.cache("config", "remote", "add", r1)
        self.assertEqual(rc, 2)
        self.assertIn("cckey.conf:1 has this remote already", err)
        self.assertNotIn("hunter2", err)
        rc, out, err = self.cache("config", "remote")
        self.assertNotIn("hunter2", out + err)
        self.assertEqual(out, "(cckey.conf) remote = redis://:***@127.0.0.1:1/2|ttl=60\n"
                              "(cckey.conf) remote = http://127.0.0.1:2/c|bearer=***\n"
                              "(cckey.conf) remote = redis://127.0.0.1:3\n")
        self.assertEqual(self.cache("config", "remote", "remove", r2)[0], 0)
        self.assertEqual(self.conf(), "remote = %s\nremote = %s\n" % (r1, r3))
        rc, out, err = self.cache("config", "remote", "remove", r2)
        self.assertEqual(rc, 2)
        self.assertEqual(self.cache("config", "remote", "none")[0], 0)
        self.assertEqual(self.conf(), "")

    def test_bad_settings_and_values(self):
        rc, out, err = self.cache("config", "max-szie", "1G")
        self.assertEqual(rc, 2)
        self.assertIn('did you mean "max-size"', err)
        rc, out, err = self.cache("config", "compresion", "zstd")
        self.assertIn('did you mean "compression"', err)
        bad = [("max-size", "lots"), ("max-age", "30"), ("max-age", "soon"), ("remote", "ftp://:hunter2@x/y"),
               ("remote-only-read", "yes"), ("remote-max-entry", "12"), ("compression", "gzip"),
               ("compression-level", "99"), ("compression-level", "high"), ("max-size", "1G", "2G")]
        for case in bad:
            with self.subTest(case):
                rc, out, err = self.cache("config", *case)
                self.assertEqual(rc, 2, err)
                self.assertNotIn("hunter2", err)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "cckey.conf")))

    def test_damaged_conf_is_warned_about_and_never_fails_a_look_up(self):
        self.put("a", 100)
        self.write_conf("max_size = 1G\n\x01\x02 garbage\nbogus = 1\nmax_age = never\nremote_only_read = maybe\n"
                        "remote_key = hunter2\nmax_si")   # cut short
        rc, out, err = self.cache("config")
        self.assertEqual(rc, 0, err)
        self.assertIn("(cckey.conf) max-size = 1G\n", out)
        self.assertIn("(default) max-age = none\n", out)
        for line in (2, 3, 4, 5, 6, 7):
            self.assertIn("cckey.conf:%d:" % line, err)
        self.assertNotIn("hunter2", err)
        # The store's own settings skip such lines: a look-up never fails.
        rc, out, err = self.cache("get", key_of("a"), "--no-remote")
        self.assertEqual(rc, 0, err)
        # The remote settings' readers refuse them, naming the line (never the value).
        rc, out, err = self.cache("get", key_of("a"))
        self.assertEqual(rc, 2, err)
        self.assertIn("cckey.conf:", err)
        self.assertNotIn("hunter2", err)
        # Setting a value keeps the damaged lines as they were.
        self.assertEqual(self.cache("config", "max-age", "2w")[0], 0)
        self.assertIn("\x01\x02 garbage\nbogus = 1\n", self.conf())
        self.assertIn("max_age = 2w\n", self.conf())

    # ---- trim ----

    def test_trim_older_than_and_max_age(self):
        now = time.time()
        for i in range(6):
            self.put("t%d" % i, 500)
        files = self.entry_files()
        for i in range(6):
            t = now - i * 10 * 86400   # 0, 10, ..., 50 days unused
            os.utime(files[key_of("t%d" % i)], (t, t))
        rc, out, err = self.cache("trim", "--older-than", "25d")
        self.assertEqual((rc, out), (0, "removed: 3\n"), err)
        self.assertEqual(set(self.entry_files()), {key_of("t%d" % i) for i in range(3)})
        rc, out, err = self.cache("trim", "--older-than", "25")
        self.assertEqual(rc, 2)
        self.assertIn("30d", err)
        # The folder's max-age: every writer applies it, and so does trim.
        self.assertEqual(self.cache("config", "max-age", "15d")[0], 0)
        self.put("fresh", 100)
        self.assertEqual(set(self.entry_files()), {key_of("t0"), key_of("t1"), key_of("fresh")})
        os.utime(self.entry_files()[key_of("t1")], (now - 20 * 86400,) * 2)
        rc, out, err = self.cache("trim")
        self.assertEqual((rc, out), (0, "removed: 1\n"), err)
        rc, out, err = self.cache("stats")
        self.assertRegex(out, r"max age: +15 d 0 h\n")
        self.assertEqual(self.stats()["max_age_seconds"], 15 * 86400)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    CCKEY = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
