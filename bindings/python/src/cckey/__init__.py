"""Standardized compile-cache keys for GPU kernels.

A key is hex(md5(device)):hex(md5(name)):hex(md5(source)):hex(md5(canon(options))),
131 characters, byte-identical to the C library and the OCaml reference
(Spoc_framework.Compile_cache.make_key in Sarek).

    import cckey
    key = cckey.make_key("NVIDIA H200|580.159.04", "vec_add", src, [("-O", "3")])
    keys = cckey.make_keys([(dev, name, src, opts), ...])   # the GIL is released
"""
from ._cckey import (KEY_LEN, ArgumentError, Error, Source, StorageError, Store, __version__, backends, devices,
                     features, make_key, make_keys, version)

__all__ = ["KEY_LEN", "ArgumentError", "Error", "Source", "StorageError", "Store", "backends", "devices", "features",
           "make_key", "make_keys", "version"]
