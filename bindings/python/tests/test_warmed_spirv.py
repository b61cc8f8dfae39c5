"""The Store reads an entry that `cckey warm` put there: SPIR-V compiled
from a GLSL compute shader for lavapipe. bindings/warm_spirv.sh (run by
run_tests.sh) warms it and writes what `cckey cache get` returned; the key
here is the binding's own, from the tuple the manifest named."""
import json
import os
import struct
from typing import Tuple

import pytest

import cckey

SPIRV_MAGIC = 0x07230203


def warmed() -> str:
    where = os.environ.get("CCKEY_TEST_SPIRV_DIR")
    if not where:
        pytest.skip("no warmed SPIR-V: run_tests.sh warms it (bindings/warm_spirv.sh)")
    if not os.path.isfile(os.path.join(where, "expected.spv")):
        with open(os.path.join(where, "skipped"), encoding="utf-8") as f:
            pytest.skip(f.read().strip())
    return where


def test_store_reads_spirv_that_warm_stored() -> None:
    where = warmed()
    with open(os.path.join(where, "device"), "rb") as f:
        device = f.read()
    with open(os.path.join(where, "double.comp"), "rb") as f:
        source = f.read()
    with open(os.path.join(where, "options.json"), encoding="utf-8") as f:
        options: list[Tuple[str, str]] = [(k, v) for k, v in json.load(f)]
    with open(os.path.join(where, "expected.spv"), "rb") as f:
        expected = f.read()
    key = cckey.make_key(device, "main", source, options)
    with cckey.Store(os.path.join(where, "store")) as store:
        got = store.get(key)
    assert got is not None, "the binding's key misses what warm stored"
    assert len(got) % 4 == 0 and len(got) >= 20          # whole words, at least the header
    assert struct.unpack_from("<I", got)[0] == SPIRV_MAGIC
    assert got == expected                                 # what `cckey cache get` returns
