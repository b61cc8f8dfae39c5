"""The binding follows Python's conventions: exceptions in the standard
hierarchy, signatures inspect can read, a Store that is a mapping of keys
to payloads, and no call on a closed Store. Typed: mypy --strict checks
this file against the stubs (run_tests.sh)."""
import errno
import inspect
import os
from pathlib import Path
from typing import Callable

import pytest

import cckey


def key_of(i: int) -> str:
    return cckey.make_key("dev", f"k{i}", f"src{i}")


PUBLIC: list[Callable[..., object]] = [
    cckey.make_key, cckey.make_keys, cckey.devices, cckey.backends, cckey.features, cckey.version, cckey.Source,
    cckey.Source.key, cckey.Store, cckey.Store.get, cckey.Store.put, cckey.Store.stats, cckey.Store.explain,
    cckey.Store.close,
]


@pytest.mark.parametrize("fn", PUBLIC, ids=lambda f: getattr(f, "__qualname__", str(f)))
def test_signatures(fn: Callable[..., object]) -> None:
    sig = inspect.signature(fn)
    assert fn.__doc__ and "--" not in fn.__doc__.splitlines()[0]   # the signature line is not in __doc__
    if fn is cckey.Store:
        assert list(sig.parameters)[:2] == ["path", "max_bytes"]
        assert sig.parameters["remotes"].kind is inspect.Parameter.KEYWORD_ONLY
        assert sig.parameters["no_remote"].default is False
    if fn is cckey.make_keys:
        assert sig.parameters["backend"].default == "auto"


def test_error_hierarchy(tmp_path: Path) -> None:
    assert issubclass(cckey.ArgumentError, cckey.Error) and issubclass(cckey.ArgumentError, ValueError)
    assert issubclass(cckey.StorageError, cckey.Error) and issubclass(cckey.StorageError, OSError)
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(cckey.StorageError) as os_info:
        cckey.Store(tmp_path / "file" / "store")          # a folder under a file
    err = os_info.value
    assert isinstance(err, OSError) and err.errno == errno.ENOTDIR and err.status == 3
    assert err.filename == str(tmp_path / "file" / "store")
    with pytest.raises(OSError):
        cckey.Store(tmp_path / "file")                     # a file where the folder would be
    with pytest.raises(ValueError) as value_info:
        cckey.Store(tmp_path / "s").get("not a key")
    assert isinstance(value_info.value, cckey.ArgumentError) and value_info.value.strerror == "invalid argument"
    with pytest.raises(TypeError):                         # misuse stays TypeError
        cckey.make_key(1, "n", "s")                        # type: ignore[arg-type]
    with pytest.raises(TypeError):
        cckey.Store(tmp_path / "s", remotes="redis://one-url-not-a-list")   # a str is no list of URLs


def test_store_is_a_mapping(tmp_path: Path) -> None:
    with cckey.Store(tmp_path) as store:
        keys = [key_of(i) for i in range(5)]
        assert len(store) == 0 and list(store) == [] and keys[0] not in store
        for i, k in enumerate(keys):
            store.put(k, b"payload %d" % i)
        assert len(store) == 5 and sorted(store) == sorted(keys)
        assert keys[3] in store and store[keys[3]] == b"payload 3"
        del store[keys[3]]
        assert keys[3] not in store and len(store) == 4
        with pytest.raises(KeyError):
            store[keys[3]]
        with pytest.raises(KeyError):
            del store[keys[3]]
        with pytest.raises(cckey.ArgumentError):
            del store["not a key"]
        with pytest.raises(TypeError, match="put"):
            store[keys[0]] = b"x"                          # type: ignore[index]
        stats = store.stats()
        assert stats["entries"] == 4 and stats["temp_files"] == 0 and stats["hits"] >= 2


def test_explain_says_why(tmp_path: Path) -> None:
    with cckey.Store(tmp_path) as store:
        k = key_of(1)
        miss = store.explain(k)
        assert miss["hit"] is False and miss["why"] == "absent" and miss["detail"]
        store.put(k, b"x")
        assert store.explain(k) == {"hit": True, "why": "hit", "detail": ""}
        with pytest.raises(TypeError):
            store.explain(k, options="-O3")                # a str is no list of flags


def test_calls_after_close_raise_value_error(tmp_path: Path) -> None:
    store = cckey.Store(tmp_path)
    store.close()
    k = key_of(2)
    calls: list[Callable[[], object]] = [
        lambda: store.get(k), lambda: store.put(k, b"x"), lambda: store.stats(), lambda: store.explain(k),
        lambda: len(store), lambda: k in store, lambda: store[k], lambda: list(store), lambda: store.__enter__(),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="closed"):
            call()
    with pytest.raises(ValueError, match="closed"):
        del store[k]
    store.close()


def test_features_are_what_the_build_found() -> None:
    features = cckey.features()
    assert set(features) == {"opencl", "cuda", "redis", "http", "signing", "compression", "tar_bundles"}
    backends = {b["backend"]: b for b in cckey.backends()}
    for engine in ("opencl", "cuda"):
        if not features[engine]:
            assert not backends[engine]["available"]
            assert "not compiled" in backends[engine]["reason"]
    assert os.path.isdir(os.path.dirname(cckey.__file__))
