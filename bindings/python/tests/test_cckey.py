"""The Python binding against hashlib, an independent implementation of the
key recipe, on random tuples; and its error cases, threads and the store."""
import hashlib
import os
import random
import threading
import warnings
from pathlib import Path
from typing import Any, Callable, List, Sequence, Tuple, Type

import pytest

import cckey


def as_bytes(field: Any) -> bytes:
    return field.encode("utf-8") if isinstance(field, str) else bytes(field)


def hexmd5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def oracle(device: Any, name: Any, source: Any, options: Any = ()) -> str:
    """The recipe, written from its specification on hashlib."""
    pairs = [(as_bytes(k), as_bytes(v)) for k, v in options]
    pairs.sort(key=lambda kv: kv[0])   # stable; bytes compare as unsigned, prefix first
    canon = ",".join(hexmd5(k) + "=" + hexmd5(v) for k, v in pairs)
    return ":".join([hexmd5(as_bytes(device)), hexmd5(as_bytes(name)), hexmd5(as_bytes(source)),
                     hexmd5(canon.encode())])


# Bytes that stress the join: the separators, NUL, and non-UTF-8 bytes.
SPECIAL = [b"", b":", b",", b"=", b"\x00", b"\xff\xfe", b"a:b,c=d", b"\x80"]


def random_bytes(rng: random.Random, max_len: int) -> bytes:
    if rng.random() < 0.3:
        return rng.choice(SPECIAL)
    return bytes(rng.randrange(256) for _ in range(rng.randrange(max_len + 1)))


def random_field(rng: random.Random, max_len: int = 40) -> Any:
    """A field as the caller might pass it: bytes, str, bytearray or memoryview."""
    kind = rng.randrange(4)
    if kind == 1:
        return "".join(chr(rng.choice([0, 0x3A, 0x41, 0xE9, 0x4E2D, 0x1F600]))
                       for _ in range(rng.randrange(max_len // 4 + 1)))
    data = random_bytes(rng, max_len)
    return {0: data, 2: bytearray(data), 3: memoryview(data)}[kind]


def random_options(rng: random.Random) -> List[Tuple[Any, Any]]:
    keys = [random_field(rng, 8) for _ in range(3)]
    # Draws from three keys, so duplicate keys are common.
    return [(rng.choice(keys), random_field(rng, 8)) for _ in range(rng.randrange(6))]


def random_tuples(seed: int, n: int) -> List[Any]:
    rng = random.Random(seed)
    return [(random_field(rng), random_field(rng), random_field(rng, 200), random_options(rng))
            for _ in range(n)]


def test_known_key() -> None:
    key = cckey.make_key("dev", "k", "src", [("-O", "3")])
    assert key == oracle(b"dev", b"k", b"src", [(b"-O", b"3")])
    assert len(key) == cckey.KEY_LEN == 131


def test_make_key_matches_hashlib() -> None:
    for t in random_tuples(1, 3000):
        assert cckey.make_key(*t) == oracle(*t)


def test_make_keys_matches_hashlib_every_backend_setting() -> None:
    tuples = random_tuples(2, 5000)
    want = [oracle(*t) for t in tuples]
    assert cckey.make_keys(tuples) == want
    assert cckey.make_keys(tuples, backend="cpu", threads=1) == want
    assert cckey.make_keys(tuples, backend="cpu", threads=3) == want


def test_make_keys_on_opencl_with_verify() -> None:
    avail = {d["backend"]: d for d in cckey.backends()}
    if not avail["opencl"]["available"]:
        pytest.skip("no OpenCL device: " + avail["opencl"]["reason"])
    tuples = random_tuples(3, 2000)
    want = [oracle(*t) for t in tuples]
    assert cckey.make_keys(tuples, backend="opencl", verify=True) == want
    dev = next(d for d in cckey.devices() if d["backend"] == "opencl" and d["usable"])
    assert cckey.make_keys(tuples, backend="opencl", device=str(dev["index"])) == want
    with pytest.raises(cckey.Error) as info:      # a selector that matches nothing
        cckey.make_keys(tuples, backend="opencl", device="no such device anywhere")
    assert info.value.status == 4 and info.value.detail
    # make_keys reuses its last config for the same settings: a sampled
    # verify's warning must not outlive its batch.
    big = [(b"d", b"k%d" % i, b"s%d" % i) for i in range(50_000)]
    with pytest.warns(RuntimeWarning, match="verify=sample"):
        cckey.make_keys(big, backend="opencl", verify="sample")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cckey.make_keys(tuples, backend="opencl", verify="sample") == want


def test_source_handle_matches_hashlib() -> None:
    rng = random.Random(4)
    for _ in range(50):
        source = random_field(rng, 300)
        src = cckey.Source(source)
        assert src.digest == hexmd5(as_bytes(source))
        for _ in range(20):   # repeated calls exercise the memo
            device, name, options = random_field(rng, 6), random_field(rng, 6), random_options(rng)
            want = oracle(device, name, source, options)
            assert src.key(device, name, options) == want
            assert src.key(device, name, options=options) == want


def test_long_source_and_buffer_copied() -> None:
    data = bytearray(os.urandom(200_000))
    src = cckey.Source(data)          # a buffer is copied ...
    want = oracle(b"d", b"n", bytes(data))
    data[0] ^= 1                       # ... so changing it later does not change keys
    assert src.key(b"d", b"n") == want
    assert cckey.make_key(b"d", b"n", data) == oracle(b"d", b"n", bytes(data))


def test_input_shapes() -> None:
    want = oracle(b"d", b"n", b"s", [(b"k", b"v")])
    assert cckey.make_key("d", "n", "s", {"k": "v"}) == want
    assert cckey.make_key("d", "n", "s", [["k", "v"]]) == want
    assert cckey.make_key("d", "n", "s", (p for p in [("k", "v")])) == want
    gen = (t for t in [("d", "n", "s", [("k", "v")]), ["d", "n", "s"]])
    assert cckey.make_keys(gen) == [want, oracle(b"d", b"n", b"s")]
    assert cckey.make_keys([]) == []
    assert cckey.make_key("d", "n", "s", None) == oracle(b"d", b"n", b"s")


def test_shared_options_converted_once_but_never_stale() -> None:
    """make_keys converts a shared options list once per batch; Python code
    that runs during the conversion (a sequence's __iter__) and changes the
    list must not leave later tuples with the old options."""
    opts: List[Tuple[bytes, Any]] = [(b"-O", b"3")]
    shared: dict[str, Any] = dict(O=b"2")

    class Growing:
        def __iter__(self) -> Any:
            opts.append((b"-arch", "sm_90"))
            shared["arch"] = "sm_80"
            return iter((b"d", b"n", b"s", opts))

    tuples: List[object] = [(b"d", b"n", b"s", opts), (b"d", "n", b"s", shared), Growing(), (b"d", b"n", b"s", opts),
              (b"d", b"n", b"s", shared), (b"e", b"n", b"s", opts)]
    want = [oracle(b"d", b"n", b"s", [(b"-O", b"3")]), oracle(b"d", b"n", b"s", [(b"O", b"2")])]
    grown = [(b"-O", b"3"), (b"-arch", b"sm_90")]
    want += [oracle(b"d", b"n", b"s", grown)] * 2
    want += [oracle(b"d", b"n", b"s", [(b"O", b"2"), (b"arch", b"sm_80")]), oracle(b"e", b"n", b"s", grown)]
    assert cckey.make_keys(tuples, backend="cpu") == want  # type: ignore[arg-type]
    # Many tuples sharing a few option objects, in every order.
    rng = random.Random(5)
    sets = [[], [(b"-O", b"3")], ((b"-arch", b"sm_90"), (b"-O", b"2")), {"k": "v", "a": b"b"}]
    batch = [(b"dev", b"k%d" % i, b"src", rng.choice(sets)) for i in range(5000)]
    pairs = [list(o.items()) if isinstance(o, dict) else o for o in (t[3] for t in batch)]
    assert cckey.make_keys(batch, backend="cpu") == [oracle(*t[:3], p) for t, p in zip(batch, pairs)]


def test_make_keys_over_many_blocks() -> None:
    """A CPU batch runs in blocks of 32768 tuples, keyed on a helper thread
    while the next block is converted: every block's keys, in order, and a
    bad tuple's index counted from the start of the batch."""
    tuples = random_tuples(20, 70000)
    want = [oracle(*t) for t in tuples]
    for kw in ({}, {"backend": "cpu"}, {"backend": "cpu", "threads": 1}, {"backend": "cpu", "threads": 2}):
        assert cckey.make_keys(tuples, **kw) == want, kw
    assert cckey.make_keys(iter(tuples), backend="cpu") == want
    bad = [(b"d", b"n%d" % i, b"s") for i in range(70000)] + [(b"d", None, b"s")]
    with pytest.raises(TypeError, match="tuple 70000: name"):
        cckey.make_keys(bad, backend="cpu")


def test_make_keys_list_changed_during_the_call() -> None:
    """The caller's list is not copied: Python code that runs in mid-batch
    (a mapping's items()) and empties it must raise, not crash or return
    keys of freed tuples."""
    tuples: List[Tuple[object, ...]] = [(b"d", b"k%d" % i, b"s%d" % i) for i in range(80000)]

    class Emptying:
        def __getitem__(self, key: Any) -> Any:
            raise KeyError(key)

        def items(self) -> Any:
            tuples.clear()
            return [(b"-O", b"3")]

    tuples[40000] = (b"d", b"n", b"s", Emptying())
    with pytest.raises(RuntimeError, match="changed size"):
        cckey.make_keys(tuples, backend="cpu")
    assert tuples == []


def test_utf8_is_what_str_hashes() -> None:
    assert cckey.make_key("é", "名", "😀") == cckey.make_key("é".encode(), "名".encode(), "😀".encode())


@pytest.mark.parametrize("call, exc, words", [
    (lambda: cckey.make_key(1, "n", "s"), TypeError, "device must be bytes, str or a buffer, not int"),  # type: ignore[arg-type]
    (lambda: cckey.make_key("d", "n", "s", [("k",)]), TypeError, "(key, value) pair"),
    (lambda: cckey.make_key("d", "n", "s", "k=v"), TypeError, "options must be"),
    (lambda: cckey.make_key("d", "n", "s", ["kv"]), TypeError, "(key, value) pair, not str"),
    (lambda: cckey.make_key("d", "\ud800", "s"), UnicodeEncodeError, "surrogate"),
    (lambda: cckey.make_key("d", "n", memoryview(b"abcd")[::2]), BufferError, ""),
    (lambda: cckey.make_keys([("d", "n")]), TypeError, "tuple 0: expected (device, name, source[, options]), got 2"),
    (lambda: cckey.make_keys([("d", "n", "s"), ("d", None, "s")]), TypeError, "tuple 1: name"),
    (lambda: cckey.make_keys([("d", "n", "s", [(1, "v")])]), TypeError, "tuple 0: option key"),
    (lambda: cckey.make_keys([5]), TypeError, "tuple 0: expected"),  # type: ignore[list-item]
    (lambda: cckey.make_keys(5), TypeError, "not iterable"),  # type: ignore[arg-type]
    (lambda: cckey.make_keys([], backend="gpu"), ValueError, "unknown backend 'gpu'"),  # type: ignore[arg-type]
    (lambda: cckey.make_keys([], threads=-1), ValueError, "threads must be"),
    (lambda: cckey.make_keys([], verify="most"), ValueError, "verify must be"),  # type: ignore[arg-type]
    (lambda: cckey.make_keys([], backend="cpu", device="0"), ValueError, "not of cpu"),
])
def test_bad_arguments(call: Callable[[], object], exc: Type[BaseException], words: str) -> None:
    with pytest.raises(exc) as info:
        call()
    assert words in str(info.value)


def test_unavailable_backend_raises_library_error() -> None:
    avail = {d["backend"]: d for d in cckey.backends()}
    assert avail["cpu"]["available"] and avail["cpu"]["used"] == "cpu"
    if avail["cuda"]["available"]:
        pytest.skip("CUDA is available here; nothing to refuse")
    with pytest.raises(cckey.Error) as info:
        cckey.make_keys([("d", "n", "s")], backend="cuda")
    err = info.value
    assert err.status == 4                         # CCKEY_ERR_UNAVAILABLE
    assert err.strerror == "backend unavailable"   # cckey_strerror
    assert err.detail == avail["cuda"]["reason"] and err.detail
    assert str(err) == f"{err.strerror}: {err.detail}"


def test_store_round_trip(tmp_path: Path) -> None:
    key = cckey.make_key("d", "n", "s")
    with cckey.Store(tmp_path / "store") as store:
        assert store.get(key) is None
        store.put(key, b"binary\x00payload")
        assert store.get(key) == b"binary\x00payload"
        store.put(key.encode(), bytearray(b""))          # replace; 0 bytes is a payload
        assert store.get(key) == b""
        stats = store.stats()
        assert stats["entries"] == 1 and stats["bytes"] > 0 and stats["temp_files"] == 0
    with pytest.raises(ValueError, match="closed"):
        store.get(key)


def test_store_serves_no_corrupt_entry(tmp_path: Path) -> None:
    key = cckey.make_key("d", "n", "s")
    store = cckey.Store(str(tmp_path))
    store.put(key, b"x" * 100)
    name = key.replace(":", "-")   # the store's entry name
    entry = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path) for f in fs if f == name]
    assert len(entry) == 1
    with open(entry[0], "r+b") as f:
        f.seek(-1, os.SEEK_END)
        f.write(b"y")
    assert store.get(key) is None                  # a miss, and the entry is gone
    assert store.stats()["entries"] == 0


def test_store_errors(tmp_path: Path) -> None:
    store = cckey.Store(tmp_path)
    with pytest.raises(cckey.Error) as info:
        store.put("not a key", b"x")
    assert info.value.status == 1 and info.value.strerror == "invalid argument"
    with pytest.raises(cckey.Error):
        store.get(cckey.make_key("d", "n", "s")[:-1])
    with pytest.raises(cckey.Error):
        store.get(cckey.make_key("d", "n", "s") + "0")
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(cckey.Error) as info:
        cckey.Store(tmp_path / "file")
    assert info.value.status == 3                  # CCKEY_ERR_IO
    small = cckey.Store(tmp_path / "small", max_bytes=1000)
    with pytest.raises(cckey.Error):
        small.put(cckey.make_key("d", "n", "s"), b"x" * 5000)


@pytest.mark.parametrize("value, exc", [
    (-1, OverflowError),            # was taken as 2**64 - 1: no limit at all
    (2**64, OverflowError),         # was taken modulo 2**64: 0, the folder's limit
    (2**64 + 4096, OverflowError),  # was a 4 KiB limit that evicted nearly everything
    (-(2**64) + 1, OverflowError),
    (1.5, TypeError),
    ("4096", TypeError),
])
def test_store_max_bytes_out_of_range_is_refused(tmp_path: Path, value: Any, exc: Type[BaseException]) -> None:
    with pytest.raises(exc, match="max_bytes|integer|int"):
        cckey.Store(tmp_path / "s", max_bytes=value)
    assert not (tmp_path / "s").exists(), "a refused Store() still created its folder"


def test_store_max_bytes_in_range(tmp_path: Path) -> None:
    # The limit in effect is the one given: 2**64 - 1 stays (no wrap), and an
    # object with __index__ is an int.
    class Four:
        def __index__(self) -> int:
            return 4096
    for value, want in ((2**64 - 1, 2**64 - 1), (Four(), 4096), (0, 0)):
        with cckey.Store(tmp_path / str(want), max_bytes=value) as store:
            assert store.stats()["max_bytes"] == want


@pytest.mark.parametrize("value, exc", [
    (-1, ValueError), (4097, ValueError), (2**63, OverflowError), (2**64 + 2, OverflowError),
    (-(2**64), OverflowError), (2.0, TypeError),
])
def test_make_keys_threads_out_of_range_is_refused(value: Any, exc: Type[BaseException]) -> None:
    # Every integer argument of the binding: make_keys(threads=) is the other.
    with pytest.raises(exc):
        cckey.make_keys([("d", "n", "s")], threads=value)


def test_store_close_waits_for_calls_in_flight(tmp_path: Path) -> None:
    # A worker reads a 64 MiB entry over and over (each get spends most of
    # its time with the GIL released); close() from this thread waits for
    # the get in flight instead of raising RuntimeError, and every later
    # call is refused with ValueError. Whatever the interleaving, each get
    # returns the whole payload or is refused: never a freed handle.
    key = cckey.make_key("d", "big", "s")
    payload = b"p" * (64 << 20)
    store = cckey.Store(tmp_path)
    store.put(key, payload)
    started, stop = threading.Event(), threading.Event()
    results: List[object] = []

    def worker() -> None:
        while not stop.is_set():
            try:
                got = store.get(key)
            except ValueError as e:
                results.append(str(e))
                return
            results.append(got == payload)
            started.set()

    t = threading.Thread(target=worker)
    t.start()
    started.wait()
    try:
        store.close()        # 6f74adb: RuntimeError "in use by another thread"
    except BaseException:
        stop.set()           # or the worker would read on for ever
        t.join()
        raise
    t.join()
    assert results[-1] == "the Store is closed"
    assert all(r is True for r in results[:-1]) and len(results) >= 2
    with pytest.raises(ValueError, match="closed"):
        store.get(key)
    store.close()            # idempotent


def test_make_keys_from_four_threads() -> None:
    batches = [random_tuples(10 + i, 4000) for i in range(4)]
    wants = [[oracle(*t) for t in b] for b in batches]
    shared = cckey.Source(b"one source for all threads")
    results: List[Any] = [None] * 4
    errors: List[BaseException] = []
    start = threading.Barrier(4)

    def work(i: int) -> None:
        try:
            start.wait()
            got = []
            for _ in range(5):
                got = cckey.make_keys(batches[i], threads=2)
            results[i] = got
            assert shared.key(b"dev", str(i)) == oracle(b"dev", str(i), b"one source for all threads")
        except BaseException as e:   # reported below, in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert results == wants


def test_devices_name_themselves() -> None:
    backends = {b["backend"]: b for b in cckey.backends()}
    devices = cckey.devices()
    for d in devices:
        assert d["id"] == d["name"] + "|" + d["driver"]
        assert d["backend"] in ("opencl", "cuda") and d["type"] in ("gpu", "cpu", "accelerator", "other")
    for kind in ("opencl", "cuda"):
        usable = [d for d in devices if d["backend"] == kind and d["usable"]]
        # A backend that can key a tuple has a usable device, and the other way round.
        assert bool(usable) == backends[kind]["available"], (kind, backends[kind], usable)
        if usable:
            assert sum(d["selected"] for d in devices if d["backend"] == kind) == 1


def test_docstrings_and_version() -> None:
    for obj in (cckey.make_key, cckey.make_keys, cckey.devices, cckey.backends, cckey.version, cckey.Source,
                cckey.Source.key, cckey.Store, cckey.Store.get, cckey.Store.put, cckey.Store.stats,
                cckey.Error):
        assert obj.__doc__ and len(obj.__doc__) > 20, obj
    assert cckey.version() == cckey.__version__
