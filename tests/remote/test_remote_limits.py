#!/usr/bin/env python3
"""Remote caches against what an attacker or an unlucky operator brings:
servers that drip, stall or flood their replies (a misbehaving Redis
written here), junk and oversized objects on a real redis-server and a real
nginx (WebDAV), bundles with forged signatures, secrets that must never
reach a message, and a local folder that cannot keep what the remote has.

Most tests need no compiler: entries are made with `cckey cache put` and
moved with `cache import` and `cache get`. The one `warm` test needs an
OpenCL device (PoCL) and skips without one.

Usage: test_remote_limits.py PATH/TO/cckey [unittest args]"""
import hashlib
import hmac
import json
import os
import resource
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from servers import Nginx, Redis, free_port, have  # noqa: E402
import test_remote  # noqa: E402
from test_remote import REC_SIGNATURE, build_entry, parse_entry  # noqa: E402

CCKEY = None
MiB = 1 << 20
SECRET = "team secret"
# A hang is a run still going after this long; every test here ends in a
# second or two when nothing hangs.
HANG = 30


def base_env(extra=None):
    e = dict(os.environ)
    for k in ("CCKEY_REMOTE", "CCKEY_CACHE_DIR", "CCKEY_REMOTE_KEY"):
        e.pop(k, None)
    e.update(extra or {})
    return e


def run(args, env=None, timeout=HANG, stdin=None, preexec=None):
    p = subprocess.run([CCKEY] + args, capture_output=True, timeout=timeout, env=base_env(env), stdin=stdin,
                       preexec_fn=preexec)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


# A small process forks the command and reports its peak resident memory:
# a child's peak includes what its parent held when it forked, and this
# test process may hold far more than the few MiB of a fresh interpreter.
MEASURE = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
sys.stderr.write("\\nmaxrss %d\\n" % usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_rss(args, env=None, timeout=HANG):
    """run, and the command's peak resident memory in MiB."""
    p = subprocess.run([sys.executable, "-c", MEASURE, CCKEY] + args, capture_output=True, timeout=timeout,
                       env=base_env(env))
    err, _, rss = p.stderr.decode().rstrip().rpartition("\nmaxrss ")
    return p.returncode, p.stdout.decode(), err, int(rss) / 1024


def zeros(path, n):
    """A file of n zero bytes, made without holding them here."""
    with open(path, "wb") as f:
        f.truncate(n)
    return path


def key_of(i):
    return ":".join(hashlib.md5(f"{i}:{f}".encode()).hexdigest() for f in "dnso")


def name_of(key):
    return key.replace(":", "-")


def warnings(err):
    return [l for l in err.splitlines() if "warning" in l]


def signed(raw, key, secret):
    """raw with its SIGNATURE record made under secret, as fingerprint.h
    documents the bytes (hmac here is the oracle)."""
    head, recs, payload = parse_entry(raw)
    recs = [r for r in recs if r[0] != REC_SIGNATURE]
    rec = b"".join(struct.pack("<HHI", t, f, len(v)) + v for t, f, v in recs)
    mac = hmac.new(secret.encode(), b"cckey-entry-mac-1\0" + key.encode() + struct.pack("<QQ", len(rec), len(payload))
                   + rec + payload, hashlib.sha256).digest()
    return build_entry(head, recs + [[REC_SIGNATURE, 0, mac]], payload)


def bundle(items):
    """A bundle as host/store/bundle.c documents it."""
    body = b"CCKEYBND" + struct.pack("<II", 1, 0)
    for key, raw in items:
        body += b"E" + key.encode() + struct.pack("<Q", len(raw)) + raw
    body += b"Z" + struct.pack("<Q", len(items))
    return body + hashlib.md5(body).digest()


class FakeRedis:
    """A Redis that misbehaves: it reads each command and answers as
    self.answer(command name, its arguments) says:
      ("send", data)            all at once
      ("drip", data, seconds)   one byte, then a pause, and so on
      ("flood", head, n)        head, then n junk bytes as fast as it can,
                                then nothing (the connection stays open)
      ("stall",)                nothing at all"""

    def __init__(self, answer):
        self.answer = answer
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.stopped = threading.Event()
        self.heard = threading.Event()   # a first command came in
        self.conns = []
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, extra=""):
        return f"redis://127.0.0.1:{self.port}{extra}"

    def _accept(self):
        while not self.stopped.is_set():
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    @staticmethod
    def _command(f):
        """One RESP command's words, or None at the end."""
        line = f.readline()
        if not line.startswith(b"*"):
            return None
        words = []
        for _ in range(int(line[1:])):
            n = int(f.readline()[1:])
            words.append(f.read(n + 2)[:-2])
        return words

    def _serve(self, c):
        f = c.makefile("rb")
        try:
            while not self.stopped.is_set():
                words = self._command(f)
                if words is None:
                    return
                self.heard.set()
                self._do(c, self.answer(words[0].decode().upper(), b" ".join(words[1:]).decode()))
        except (OSError, ValueError):
            return

    def _do(self, c, how):
        if how[0] == "send":
            c.sendall(how[1])
            return
        if how[0] == "drip":
            for i in range(len(how[1])):
                if self.stopped.wait(how[2]):
                    return
                c.sendall(how[1][i:i + 1])
        elif how[0] == "flood":
            c.sendall(how[1])
            junk = b"\x5a" * MiB
            for _ in range(how[2] // MiB):
                c.sendall(junk)
        self.stopped.wait()   # after a drip or flood, and a stall: nothing more, connection open

    def stop(self):
        self.stopped.set()
        self.sock.close()
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cckey-limits-")
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.stop()
        subprocess.run(["rm", "-rf", self.tmp])

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def fake(self, answer):
        f = FakeRedis(answer)
        self.servers.append(f)
        return f

    def redis(self, password=None):
        r = Redis(self.tmp, password=password)
        self.servers.append(r)
        return r

    def entry(self, key, payload):
        """The entry file `cache put` makes for key and payload."""
        folder = self.path("made")
        with open(self.path("payload"), "wb") as f:
            f.write(payload)
        rc, out, err = run(["cache", "put", key, self.path("payload"), "--cache-dir", folder])
        self.assertEqual(rc, 0, err)
        for shard in os.listdir(folder):
            p = os.path.join(folder, shard, name_of(key))
            if os.path.exists(p):
                with open(p, "rb") as f:
                    return f.read()
        self.fail("cache put wrote no entry")

    def set_remote(self, redis, key, value):
        """SET cckey:NAME to value (bytes, or a file's path)."""
        path = value if isinstance(value, str) else self.write("value", value)
        with open(path, "rb") as f:
            subprocess.run(["redis-cli", "-p", str(redis.port), "-x", "SET", "cckey:" + name_of(key)], stdin=f,
                           check=True, capture_output=True,
                           env=dict(os.environ, REDISCLI_AUTH=redis.password or ""))

    def get_remote(self, redis, key):
        return subprocess.run(["redis-cli", "-p", str(redis.port), "--raw", "GET", "cckey:" + name_of(key)],
                              capture_output=True, check=True).stdout[:-1]

    def cache_get(self, key, url, *extra, env=None, folder="dst"):
        os.makedirs(self.path(folder), exist_ok=True)
        return run(["cache", "get", key, "--cache-dir", self.path(folder), "-o", self.path("out"), "--remote", url]
                   + list(extra), env=env)

    def peak_over_a_miss(self, key, url):
        """cache get of key through url, and its peak memory in MiB above
        that of a look-up of a key the remote lacks (the same code, so
        sanitizer builds compare alike)."""
        os.makedirs(self.path("dst"), exist_ok=True)
        get = ["cache", "get", "--cache-dir", self.path("dst"), "-o", self.path("out"), "--remote", url]
        base = run_rss(get[:2] + [key_of("absent")] + get[2:])[3]
        rc, out, err, rss = run_rss(get[:2] + [key] + get[2:])
        return rc, err, rss - base

    def write(self, name, data):
        with open(self.path(name), "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return self.path(name)


class DripStallFloodTests(Base):
    """Finding 3 and 4 of issue 24 against a fake Redis."""

    def test_a_dripping_reply_ends_by_the_timeout(self):
        """One byte every 0.2 s keeps every socket call busy, so a per-call
        timeout never fires; the request's deadline does, in connect (AUTH),
        in GET, and in EXISTS and SET of a push."""
        drip = ("drip", b"$1048576\r\n" + b"CCKEYBIN" * 1000, 0.2)
        ok = ("send", b"+OK\r\n")
        cases = [
            ("GET", lambda c, _: drip if c == "GET" else ok, ""),
            ("AUTH", lambda c, _: ("drip", b"+" + b"O" * 50 + b"K\r\n", 0.2) if c == "AUTH" else ok, ":pw@"),
        ]
        for what, answer, auth in cases:
            with self.subTest(what):
                f = self.fake(answer)
                url = f"redis://{auth}127.0.0.1:{f.port}|timeout=1000|connect-timeout=1000"
                rc, out, err = self.cache_get(key_of(1), url)
                self.assertEqual(rc, 1, err)
                self.assertIn("timed out", err)
                self.assertEqual(len(warnings(err)), 1, err)
        # A push: EXISTS answered, SET's reply dripped.
        raw = self.entry(key_of(2), b"kernel")
        f = self.fake(lambda c, _: ("send", b":0\r\n") if c == "EXISTS" else ("drip", b"+OK\r\n" * 100, 0.2))
        b = self.write("one.bundle", bundle([(key_of(2), raw)]))
        rc, out, err = run(["cache", "import", b, "--cache-dir", self.path("imp"), "--remote",
                            f.url("|timeout=1000")])
        self.assertEqual(rc, 0, err)
        self.assertIn("timed out", err)

    def test_floods_are_refused_without_being_read(self):
        """A 512 MiB bulk (more than the 256 MiB default cap), a status line
        that never ends, an array of 2^31 elements: each is refused at once,
        memory stays small, and the look-up is a miss with one warning."""
        cases = [
            ("bulk over the cap", ("flood", b"$536870912\r\n", 512 * MiB), "more than max-entry"),
            ("endless line", ("flood", b"+", 256 * MiB), "protocol error"),
            ("huge array", ("send", b"*2147483647\r\n"), "protocol error"),
        ]
        for what, how, said in cases:
            with self.subTest(what):
                def answer(c, args, how=how):
                    if c != "GET":
                        return ("send", b"+OK\r\n")
                    return ("send", b"$-1\r\n") if name_of(key_of("absent")) in args else how
                f = self.fake(answer)
                rc, err, more = self.peak_over_a_miss(key_of(3), f.url("|timeout=3000"))
                self.assertEqual(rc, 1, err)
                self.assertIn(said, err)
                self.assertLess(more, 24, f"{what}: {more:.0f} MiB more than a miss")

    def test_a_bulk_cut_short_or_overlong_is_refused(self):
        raw = self.entry(key_of(4), b"k" * 5000)
        cases = [("cut short", b"$%d\r\n" % len(raw) + raw[:-10], "timed out"),
                 ("overlong", b"$%d\r\n" % (len(raw) + 3) + raw + b"xyz\r\n", "the remote sends")]
        for what, reply, said in cases:
            with self.subTest(what):
                f = self.fake(lambda c, _, reply=reply: ("send", reply if c == "GET" else b"+OK\r\n"))
                rc, out, err = self.cache_get(key_of(4), f.url("|timeout=800"))
                self.assertEqual(rc, 1, err)
                self.assertIn(said, err)


@unittest.skipUnless(have("redis-server"), "redis-server is not installed")
class RedisLimitTests(Base):
    def test_a_junk_object_costs_its_header_not_its_size(self):
        """Finding 4: 64 MiB of junk under a key is refused after 192 bytes."""
        r = self.redis()
        self.set_remote(r, key_of(5), zeros(self.path("junk"), 64 * MiB))
        rc, err, more = self.peak_over_a_miss(key_of(5), r.url())
        self.assertEqual(rc, 1, err)
        self.assertIn("not an entry (bad magic)", err)
        self.assertLess(more, 24, f"{more:.0f} MiB more than a miss for a 64 MiB junk object")

    def test_max_entry_and_the_folders_size_limit(self):
        r = self.redis()
        payload = os.urandom(3 * MiB)
        self.set_remote(r, key_of(6), self.entry(key_of(6), payload))
        rc, out, err = self.cache_get(key_of(6), r.url("|max-entry=1M"))
        self.assertEqual(rc, 1, err)
        self.assertIn("more than max-entry (1048576)", err)
        # The folder's own limit lowers the cap too.
        rc, out, err = run(["cache", "config", "max-size", "2M", "--cache-dir", self.path("small")])
        self.assertEqual(rc, 0, err)
        rc, out, err = self.cache_get(key_of(6), r.url(), folder="small")
        self.assertEqual(rc, 1, err)
        self.assertIn("more than max-entry (2097152)", err)
        rc, out, err = self.cache_get(key_of(6), r.url("|max-entry=8M"))
        self.assertEqual(rc, 0, err)
        with open(self.path("out"), "rb") as f:
            self.assertEqual(f.read(), payload)
        # cckey.conf's remote_max_entry, for every remote of the folder.
        os.makedirs(self.path("conf"))
        self.write("conf/cckey.conf", "remote_max_entry = 1M\n")
        rc, out, err = self.cache_get(key_of(6), r.url(), folder="conf")
        self.assertEqual(rc, 1, err)
        self.assertIn("more than max-entry (1048576)", err)

    def test_a_large_entry_streams_through_a_file(self):
        """Over 8 MiB an entry goes to a temporary file in the folder, is
        checked there and renamed into place; a spoilt one leaves nothing."""
        r = self.redis()
        payload = os.urandom(12 * MiB)
        raw = self.entry(key_of(7), payload)
        self.set_remote(r, key_of(7), raw)
        rc, out, err = self.cache_get(key_of(7), r.url())
        self.assertEqual(rc, 0, err)
        with open(self.path("out"), "rb") as f:
            self.assertEqual(f.read(), payload)
        files = [os.path.join(d, n) for d, _, ns in os.walk(self.path("dst")) for n in ns]
        self.assertEqual([os.path.basename(p) for p in files if "CACHEDIR" not in p and "stats" not in p],
                         [name_of(key_of(7))])
        self.set_remote(r, key_of(8), raw.replace(key_of(7).encode(), key_of(8).encode(), 1))
        rc, out, err = self.cache_get(key_of(8), r.url(), folder="dst2")
        self.assertEqual(rc, 1, err)
        self.assertIn("checksum mismatch", err)
        leftovers = [n for _, _, ns in os.walk(self.path("dst2")) for n in ns if n.startswith(".tmp")]
        self.assertEqual(leftovers, [])


@unittest.skipUnless(have("nginx"), "nginx is not installed")
class HttpLimitTests(Base):
    def test_junk_oversized_and_large_files(self):
        n = Nginx(self.tmp)
        self.servers.append(n)

        def place(key, data=None):
            d = os.path.join(n.dir, "dav", "cache", self.shard(key))
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, name_of(key)), "wb") as f:
                f.write(data) if data else f.truncate(64 * MiB)

        place(key_of(9))
        rc, err, more = self.peak_over_a_miss(key_of(9), n.url())
        self.assertEqual(rc, 1, err)
        self.assertIn("bad magic", err)
        self.assertLess(more, 24, f"{more:.0f} MiB more than a miss for a 64 MiB junk file")
        payload = os.urandom(12 * MiB)
        place(key_of(10), self.entry(key_of(10), payload))
        rc, out, err = self.cache_get(key_of(10), n.url("cache") + "|max-entry=4M")
        self.assertEqual(rc, 1, err)
        self.assertIn("max-entry", err)
        rc, out, err = self.cache_get(key_of(10), n.url())
        self.assertEqual(rc, 0, err)
        with open(self.path("out"), "rb") as f:
            self.assertEqual(f.read(), payload)

    def shard(self, key):
        return hashlib.md5(key.encode()).hexdigest()[:2]


@unittest.skipUnless(have("redis-server"), "redis-server is not installed")
class ImportSigningTests(Base):
    """Finding 2: with a signing secret, import never launders an entry."""

    def test_foreign_signed_refused_unsigned_held_or_signed_on_request(self):
        r = self.redis()
        env = {"CCKEY_REMOTE_KEY": SECRET}
        good = self.entry(key_of(11), b"honest kernel")
        forged = signed(self.entry(key_of(12), b"EVIL kernel"), key_of(12), "another secret")
        ours = signed(self.entry(key_of(13), b"signed kernel"), key_of(13), SECRET)
        b = self.write("mixed.bundle", bundle([(key_of(11), good), (key_of(12), forged), (key_of(13), ours)]))
        rc, out, err = run(["cache", "import", b, "--cache-dir", self.path("a"), "--remote", r.url()], env=env)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("imported: 2", out)
        self.assertIn("refused (signed, but not with this secret): 1", out)
        self.assertIn("not sent to signing remotes (unsigned): 1", out)
        self.assertIn("--sign-unsigned", err)
        # Only the entry the secret signed went to the remote, byte for byte.
        self.assertEqual(int(r.cli("DBSIZE")), 1)
        self.assertEqual(self.get_remote(r, key_of(13)), ours)
        # The forged one is nowhere: a reader with the secret misses it.
        rc, out, err = self.cache_get(key_of(12), r.url(), env=env, folder="reader")
        self.assertEqual(rc, 1, err)
        self.assertFalse(any(name_of(key_of(12)) in ns for _, _, ns in os.walk(self.path("a"))))
        # --sign-unsigned: the unsigned one is signed with the secret and sent.
        rc, out, err = run(["cache", "import", self.write("good.bundle", bundle([(key_of(11), good)])),
                            "--cache-dir", self.path("b"), "--remote", r.url(), "--sign-unsigned"], env=env)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(self.get_remote(r, key_of(11)), signed(good, key_of(11), SECRET))
        rc, out, err = self.cache_get(key_of(11), r.url(), env=env, folder="reader")
        self.assertEqual(rc, 0, err)
        with open(self.path("out"), "rb") as f:
            self.assertEqual(f.read(), b"honest kernel")
        # A forged entry with --sign-unsigned is still refused.
        rc, out, err = run(["cache", "import", self.write("forged.bundle", bundle([(key_of(12), forged)])),
                            "--cache-dir", self.path("c"), "--remote", r.url(), "--sign-unsigned"], env=env)
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(int(r.cli("DBSIZE")), 2)
        # Without a secret nothing is checked or signed: entries go as they are.
        r2 = self.redis()
        rc, out, err = run(["cache", "import", b, "--cache-dir", self.path("d"), "--remote", r2.url()])
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(self.get_remote(r2, key_of(12)), forged)


class RedactionTests(Base):
    """Finding 5: no password, token or secret in any message."""

    def assert_hidden(self, rc, out, err, *secrets):
        self.assertNotEqual(rc, 0)
        for s in secrets:
            self.assertNotIn(s, out + err)

    def test_http_urls_libcurl_cannot_use_are_refused_when_given(self):
        # Parsed by libcurl's curl_url() as it would at the first request,
        # with its reason; nothing is asked of any server (exit 2: usage).
        key = key_of(16)
        os.makedirs(self.path("curl"), exist_ok=True)
        for url, why in (("http://cache:80x/p", "Port number"), ("http://:9/p", "No host"),
                         ("http://cache:0/p", "the port must be a number from 1 to 65535"),
                         ("https://h/p q", "http URL"), ("http://u:hunter2@:9/p", "No host")):
            with self.subTest(url):
                rc, out, err = run(["cache", "get", key, "--cache-dir", self.path("curl"), "--remote", url])
                self.assertEqual(rc, 2, err)
                self.assertIn("http URL: ", err)
                self.assertIn(why, err)
                self.assertNotIn("hunter2", err)
        # libcurl's spelling of a good one: the scheme in lower case, no
        # trailing '/', the rest as given.
        rc, out, err = run(["cache", "get", key, "--cache-dir", self.path("curl"), "--remote",
                            "HTTP://127.0.0.1:1/Ca/che/|connect-timeout=200"])
        self.assertEqual(rc, 1, err)
        self.assertIn("remote http://127.0.0.1:1/Ca/che: GET", err)

    def test_refused_urls_from_every_source(self):
        key = key_of(14)
        urls = ["rediss://:hunter2@cache:6380", "ftp://u:hunter2@cache/x", "redis://:hun|ter2@cache:x",
                "redis://:hun/ter2@cache", "redis://cache|bearr=hunter2", "http://cache/p|bearer=hunter2|tll=3",
                "redis://:hunter2%zz@cache", "http://u:hun/ter2@127.0.0.1:1/cache|connect-timeout=200"]
        os.makedirs(self.path("dst"))
        for url in urls:
            with self.subTest(url):
                rc, out, err = run(["cache", "get", key, "--cache-dir", self.path("dst"), "--remote", url])
                self.assert_hidden(rc, out, err, "hunter2", "hun", "ter2")
                self.assertIn("***", err)
                rc, out, err = run(["cache", "get", key, "--cache-dir", self.path("dst")], env={"CCKEY_REMOTE": url})
                self.assert_hidden(rc, out, err, "hunter2", "hun", "ter2")
                self.write("dst/cckey.conf", f"remote = {url}\n")
                rc, out, err = run(["cache", "get", key, "--cache-dir", self.path("dst")])
                self.assert_hidden(rc, out, err, "hunter2", "hun", "ter2")
                # The last one is refused by libcurl's parser (curl_url: the
                # '/' ends the host, "hun" is no port), redacted all the same.
                self.assertIn("cckey.conf:1:", err)
        # A mistyped signing-secret line, and a bad value of a real setting.
        for line in ("remote_key = hunter2", "remote_only_read = hunter2", "remote_max_entry = hunter2"):
            with self.subTest(line):
                self.write("dst/cckey.conf", line + "\n")
                rc, out, err = run(["cache", "get", key, "--cache-dir", self.path("dst")])
                self.assert_hidden(rc, out, err, "hunter2")
                self.assertIn("cckey.conf:1:", err)

    def test_ps_does_not_show_a_password_given_on_the_command_line(self):
        f = self.fake(lambda c, _: ("stall",) if c == "GET" else ("send", b"+OK\r\n"))
        os.makedirs(self.path("dst"))
        p = subprocess.Popen([CCKEY, "cache", "get", key_of(17), "--cache-dir", self.path("dst"), "--remote",
                              f"redis://:hunter2@127.0.0.1:{f.port}|timeout=20000"], env=base_env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.assertTrue(f.heard.wait(HANG))   # AUTH came: the options are read
            with open(f"/proc/{p.pid}/cmdline", "rb") as c:
                cmdline = c.read()
        finally:
            p.kill()
            p.wait()
        self.assertIn(b"127.0.0.1", cmdline)
        self.assertNotIn(b"hunter2", cmdline)

    @unittest.skipUnless(have("redis-server"), "redis-server is not installed")
    def test_percent_encoded_and_file_passwords(self):
        """A password with '|', '/', '@' and '%' works percent-encoded, and
        from password_file= (which ps cannot see)."""
        password = "p|a/s@s%w:rd"
        r = self.redis(password=password)
        raw = self.entry(key_of(15), b"kernel")
        b = self.write("one.bundle", bundle([(key_of(15), raw)]))
        enc = "p%7Ca%2Fs%40s%25w%3Ard"
        rc, out, err = run(["cache", "import", b, "--cache-dir", self.path("a"), "--remote",
                            f"redis://:{enc}@127.0.0.1:{r.port}"])
        self.assertEqual(rc, 0, out + err)
        self.assertIn("1 written", out)
        pw = self.write("pw", password + "\n")
        rc, out, err = self.cache_get(key_of(15), f"redis://127.0.0.1:{r.port}|password_file={pw}")
        self.assertEqual(rc, 0, err)
        self.assertEqual(warnings(err), [])
        # A wrong one is one warning that shows neither.
        rc, out, err = self.cache_get(key_of(15), f"redis://:p%7Cwrong@127.0.0.1:{r.port}", folder="c")
        self.assertEqual(rc, 1, err)
        self.assertNotIn("wrong", err.replace("WRONGPASS", ""))
        self.assertNotIn("p%7C", err)


@unittest.skipUnless(have("redis-server"), "redis-server is not installed")
class LocalFolderTests(Base):
    """Finding 7: a folder that cannot keep a hit is a local problem."""

    @staticmethod
    def small_files():
        # A "full" folder, as root too (permissions do not stop root): files
        # may not grow past 1 KiB, and the signal for it is ignored, so a
        # write past it fails with EFBIG.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    def test_a_hit_the_folder_cannot_keep_is_served(self):
        r = self.redis()
        raw = self.entry(key_of(16), b"k" * 4096)
        self.set_remote(r, key_of(16), raw)
        os.makedirs(self.path("full"))
        rc, out, err = run(["cache", "get", key_of(16), "--cache-dir", self.path("full"), "-o", "-", "--remote",
                            r.url()], preexec=self.small_files)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "k" * 4096)
        self.assertIn("local cache folder cannot keep remote hits", err)
        self.assertEqual(len(warnings(err)), 1, err)
        # Over 8 MiB, where the folder cannot take even a temporary file:
        # received through an unnamed one in /tmp, and served.
        payload = os.urandom(9 * MiB)
        self.set_remote(r, key_of(18), self.entry(key_of(18), payload))
        self.blocked("blocked")
        rc, out, err = self.cache_get(key_of(18), r.url(), folder="blocked")
        self.assertEqual(rc, 0, err)
        with open(self.path("out"), "rb") as f:
            self.assertEqual(f.read(), payload)
        self.assertIn("no temporary file could be made in it", err)

    def blocked(self, name):
        """A folder whose shard folders cannot be made: a file stands in
        each one's place, so every entry write fails (ENOTDIR), as root too."""
        os.makedirs(self.path(name))
        for i in range(256):
            self.write(f"{name}/{i:02x}", "")

    def test_warm_keeps_using_the_remote(self):
        device = test_remote.opencl_device()
        if not device:
            self.skipTest("no OpenCL device")
        r = self.redis()
        manifest = self.path("many.jsonl")
        n = 10   # more than the 8 failures in a row that drop a remote
        # One source with n entry points: n entries from one build.
        src = "".join(f"__kernel void k{i}(__global int *p) {{ p[get_global_id(0)] = {i} * p[0]; }}\n"
                      for i in range(n))
        with open(manifest, "w") as f:
            for i in range(n):
                f.write(json.dumps({"device": device, "name": f"k{i}", "source": src}) + "\n")
        rc, out, err = run(["warm", manifest, "--cache-dir", self.path("a"), "--remote", r.url()], timeout=300)
        self.assertEqual(rc, 0, err)
        # Not RLIMIT_FSIZE here: PoCL's LLVM installs a SIGXFSZ handler that
        # kills the process.
        self.blocked("full")
        rc, out, err = run(["warm", manifest, "--cache-dir", self.path("full"), "--remote", r.url()], timeout=300)
        self.assertEqual(rc, 0, out + err)
        self.assertIn(f"{n} hits, 0 misses, 0 errors", out)
        self.assertIn(f"0 compiled in 0 builds, {n} already cached, 0 failed", out)
        self.assertEqual(len(warnings(err)), 1, err)
        self.assertIn("local cache folder cannot keep remote hits", err)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    CCKEY = test_remote.CCKEY = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
