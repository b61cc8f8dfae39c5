"""Store(path) sees the shared cache as the cckey command does: the remotes
of the folder's cckey.conf, remote_only_read, remote_key_file, and the
remotes=, read_only=, sign_key=, sign_key_file=, no_remote= arguments.

The servers are real (redis-server, nginx WebDAV), started here on free
ports (tests/remote/servers.py, which run_tests.sh puts beside these
tests). The writer is another process, the cckey command (`cache import
--remote URL`, from a folder of its own), so an entry exists only on the
remote; the oracle for a read is `cckey cache get` on a folder configured
the same way."""
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

import cckey

sys.path.insert(0, os.environ.get("CCKEY_TEST_SERVERS", os.path.dirname(__file__)))
servers = pytest.importorskip("servers", reason="no tests/remote/servers.py (run_tests.sh puts it beside the tests)")
CLI = os.environ.get("CCKEY_TEST_CLI", "")
if not os.access(CLI, os.X_OK):
    pytest.skip("no cckey command (run_tests.sh names it in CCKEY_TEST_CLI)", allow_module_level=True)


def cli(*args: str, env: Optional[Dict[str, str]] = None) -> "subprocess.CompletedProcess[bytes]":
    e = {k: v for k, v in os.environ.items() if not k.startswith("CCKEY_")}
    e.update(env or {})
    return subprocess.run([CLI, *args], capture_output=True, env=e, timeout=120)


def key_of(i: int) -> str:
    return cckey.make_key("dev", f"kernel{i}", f"source {i}")


def remote_put(tmp_path: Path, url: str, key: str, payload: bytes, env: Optional[Dict[str, str]] = None) -> None:
    """Another process stores payload under key on the remote: `cache put`
    into a folder of its own, exported, and imported with --remote (which
    sends the entries on); both folders are then thrown away, so the entry
    is only on the remote."""
    src, bundle = tmp_path / "payload.bin", tmp_path / "one.bundle"
    src.write_bytes(payload)
    for args in (["put", key, str(src), "--cache-dir", str(tmp_path / "w1")],
                 ["export", "-o", str(bundle), "--cache-dir", str(tmp_path / "w1")],
                 ["import", str(bundle), "--cache-dir", str(tmp_path / "w2"), "--remote", url]
                 + (["--sign-unsigned"] if env else [])):
        p = cli("cache", *args, env=env)
        assert p.returncode == 0, p.stderr
    subprocess.run(["rm", "-rf", str(tmp_path / "w1"), str(tmp_path / "w2"), str(bundle)], check=True)


def folder(tmp_path: Path, name: str, conf: str) -> Path:
    d = tmp_path / name
    d.mkdir()
    (d / "cckey.conf").write_text(conf)
    return d


def temp_files(d: Path) -> List[str]:
    return [f for _, _, fs in os.walk(d) for f in fs if f.startswith(".tmp-")]


@pytest.fixture(params=["redis", "webdav"])
def remote(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    server: Any
    if request.param == "redis":
        if not servers.have("redis-server"):
            pytest.skip("redis-server is not installed")
        server = servers.Redis(str(tmp_path))
        url = server.url()
    else:
        if not servers.have("nginx"):
            pytest.skip("nginx is not installed")
        server = servers.Nginx(str(tmp_path / "nginx"))
        url = server.url()
    yield url
    server.stop()


def test_get_reads_the_remote_that_cckey_conf_names(tmp_path: Path, remote: str) -> None:
    key, payload = key_of(1), b"binary from the remote\x00" * 1000
    remote_put(tmp_path, remote, key, payload)
    reader = folder(tmp_path, "reader", f"# the team's cache\nremote = {remote}\n")
    oracle = folder(tmp_path, "oracle", f"remote = {remote}\n")
    p = cli("cache", "get", key, "--cache-dir", str(oracle))
    assert p.returncode == 0 and p.stdout == payload, p.stderr
    with cckey.Store(tmp_path / "alone", no_remote=True) as alone:
        assert alone.get(key) is None
    assert cckey.Store(folder(tmp_path, "noremote", f"remote = {remote}\n"), no_remote=True).get(key) is None
    with cckey.Store(reader) as store:
        assert store.stats()["entries"] == 0
        assert store.get(key) == payload
        assert store.stats()["entries"] == 1      # the hit was copied into the folder
    with cckey.Store(reader, no_remote=True) as local:
        assert local.get(key) == payload
    assert temp_files(reader) == []


def test_remotes_argument_put_and_read_only(tmp_path: Path, remote: str) -> None:
    key, payload = key_of(2), b"put through the binding"
    with cckey.Store(tmp_path / "a", remotes=[remote]) as a:
        a.put(key, payload)
    p = cli("cache", "get", key, "--cache-dir", str(folder(tmp_path, "fresh", "")), "--remote", remote)
    assert p.returncode == 0 and p.stdout == payload, p.stderr     # it reached the remote
    (tmp_path / "ro").mkdir()
    with cckey.Store(tmp_path / "ro", remotes=[remote], read_only=True) as ro:
        assert ro.get(key) == payload
        assert ro.stats()["entries"] == 0         # read-only: nothing written, not even the copy
        with pytest.raises(cckey.ArgumentError):
            ro.put(key, b"x")


def test_remote_only_read_in_cckey_conf(tmp_path: Path, remote: str) -> None:
    key = key_of(3)
    conf = f"remote_only_read = true\nremote = {remote}\n"
    with cckey.Store(folder(tmp_path, "w", conf)) as store:
        store.put(key, b"local only")
        assert store.get(key) == b"local only"
    p = cli("cache", "get", key, "--cache-dir", str(folder(tmp_path, "fresh", "")), "--remote", remote)
    assert p.returncode == 1 and p.stdout == b""   # never sent


def test_signing_key_file_and_arguments(tmp_path: Path) -> None:
    if not cckey.features()["signing"]:
        pytest.skip("this build has no libcrypto (no signing)")
    if not servers.have("redis-server"):
        pytest.skip("redis-server is not installed")
    r = servers.Redis(str(tmp_path))
    try:
        url = r.url()
        signed, unsigned = key_of(4), key_of(5)
        remote_put(tmp_path, url, signed, b"signed", env={"CCKEY_REMOTE_KEY": "team secret"})
        remote_put(tmp_path, url, unsigned, b"unsigned")
        (tmp_path / "key").write_bytes(b"team secret\n")
        conf = f"remote = {url}\nremote_key_file = {tmp_path / 'key'}\n"
        with cckey.Store(folder(tmp_path, "good", conf)) as good:
            assert good.get(signed) == b"signed"
            with pytest.warns(RuntimeWarning, match="cckey remote"):
                assert good.get(unsigned) is None         # refused: not signed
        with cckey.Store(tmp_path / "arg", remotes=[url], sign_key=b"team secret") as arg:
            assert arg.get(signed) == b"signed"
        with cckey.Store(tmp_path / "file", remotes=[url], sign_key_file=tmp_path / "key") as by_file:
            assert by_file.get(signed) == b"signed"
        with cckey.Store(folder(tmp_path, "wrong", conf), sign_key="another secret") as wrong:
            with pytest.warns(RuntimeWarning, match="cckey remote"):
                assert wrong.get(signed) is None          # the argument wins over the file: refused
            assert wrong.stats()["entries"] == 0
        for d in ("good", "arg", "file", "wrong"):
            assert temp_files(tmp_path / d) == []
        with pytest.raises(TypeError, match="not both"):
            cckey.Store(tmp_path / "both", sign_key=b"k", sign_key_file=tmp_path / "key")
        (tmp_path / "empty").write_bytes(b"\n")
        with pytest.raises(ValueError, match="empty"):
            cckey.Store(tmp_path / "e", sign_key_file=tmp_path / "empty")
        with pytest.raises(cckey.ArgumentError, match="remote_key_file"):
            cckey.Store(folder(tmp_path, "nokey", f"remote = {url}\nremote_key_file = {tmp_path / 'none'}\n"))
    finally:
        r.stop()


@pytest.mark.parametrize("conf, words", [
    ("remote = ftp://cache/x\n", "cckey.conf:1:"),
    ("remote_only_read = maybe\n", "cckey.conf:1: remote_only_read wants true or false"),
    ("\nremote_max_entry = lots\n", "cckey.conf:2: remote_max_entry wants a size"),
    ("remote_key = s3cret\n", 'unknown setting "remote_key"'),
    ("remote\n", "expected NAME = VALUE"),
])
def test_bad_cckey_conf_is_a_clear_error(tmp_path: Path, conf: str, words: str) -> None:
    d = folder(tmp_path, "bad", conf)
    with pytest.raises(cckey.ArgumentError) as info:
        cckey.Store(d)
    assert words in str(info.value) and "s3cret" not in str(info.value)
    assert isinstance(info.value, ValueError) and info.value.status == 1
    p = cli("cache", "get", key_of(6), "--cache-dir", str(d))
    assert p.returncode == 2 and words.encode() in p.stderr      # the CLI says the same
    with cckey.Store(d, no_remote=True) as local:                # and the folder itself still opens
        assert local.get(key_of(6)) is None
    assert temp_files(d) == []


def test_unreachable_remote_is_a_miss_with_a_warning(tmp_path: Path) -> None:
    d = folder(tmp_path, "d", f"remote = redis://127.0.0.1:{servers.free_port()}|connect-timeout=500\n")
    with cckey.Store(d) as store:
        with pytest.warns(RuntimeWarning, match="cckey remote"):
            assert store.get(key_of(7)) is None
        store.put(key_of(7), b"kept locally")        # the remote never makes a call fail
        assert store.get(key_of(7)) == b"kept locally"
    assert temp_files(d) == []
