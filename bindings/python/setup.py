"""Builds the cckey extension against the cckey C library built by CMake.

The library is linked statically (libcckey.a, compiled with -fPIC) so the
installed module does not depend on where the build folder was, and its
symbols are kept out of the module's exports (--exclude-libs) so another
copy of libcckey.so in the process cannot clash with it.

The static library's own dependencies (libcurl, hiredis, ...) come from
BUILD/cckey-static-deps.txt, which CMake writes, or from pkg-config --static
for an installed cckey.

Where the library comes from, first match wins:
  1. CCKEY_BUILD_DIR: a CMake build folder of cckey (libcckey.a); the header
     comes from the source tree that build was configured from;
  2. CCKEY_PREFIX: an installed cckey (PREFIX/include, PREFIX/lib*/);
  3. ../../build next to this folder (the repository's default build).
"""
import os
import re
import subprocess
import sys

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def _fail(msg):
    sys.exit("cckey: " + msg)


def _source_dir_of(build):
    """The source folder a CMake build was configured from."""
    try:
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"cckey_SOURCE_DIR:STATIC=(.*)", line)
                if m:
                    return m.group(1).strip()
    except OSError:
        pass
    return None


def _from_build(build):
    lib = os.path.join(build, "libcckey.a")
    if not os.path.isfile(lib):
        _fail(f"{lib} not found: build the library first "
              f"(cmake -S . -B build && cmake --build build --target cckey_static)")
    src = _source_dir_of(build) or os.path.join(HERE, "..", "..")
    include = os.path.join(src, "include")
    if not os.path.isfile(os.path.join(include, "cckey.h")):
        _fail(f"cckey.h not found in {include}")
    deps_file = os.path.join(build, "cckey-static-deps.txt")
    if not os.path.isfile(deps_file):
        _fail(f"{deps_file} not found: reconfigure {build} with this version's CMakeLists.txt")
    with open(deps_file, encoding="utf-8") as f:
        deps = [line.strip() for line in f if line.strip()]
    return include, lib, deps


def _from_prefix(prefix):
    include = os.path.join(prefix, "include")
    for libdir in ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu"):
        lib = os.path.join(prefix, libdir, "libcckey.a")
        if os.path.isfile(lib):
            env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, libdir, "pkgconfig"))
            try:
                flags = subprocess.run(["pkg-config", "--static", "--libs", "cckey"], env=env, check=True,
                                       capture_output=True, text=True).stdout.split()
            except (OSError, subprocess.CalledProcessError) as e:
                _fail(f"pkg-config --static --libs cckey failed for {prefix}: {e}")
            return include, lib, [f for f in flags if f != "-lcckey" and not f.startswith("-L")]
    _fail(f"no libcckey.a under {prefix}/lib*")


def _library():
    if os.environ.get("CCKEY_BUILD_DIR"):
        return _from_build(os.path.abspath(os.environ["CCKEY_BUILD_DIR"]))
    if os.environ.get("CCKEY_PREFIX"):
        return _from_prefix(os.path.abspath(os.environ["CCKEY_PREFIX"]))
    default = os.path.normpath(os.path.join(HERE, "..", "..", "build"))
    if os.path.isfile(os.path.join(default, "libcckey.a")):
        return _from_build(default)
    _fail("no cckey library found: build it (cmake -S . -B build && cmake --build build "
          "--target cckey_static) or set CCKEY_BUILD_DIR or CCKEY_PREFIX")


include, lib, deps = _library()
sources = [os.path.join("ext", f) for f in
           ("module.c", "fields.c", "batch.c", "source.c", "store.c", "devices.c")]
setup(
    package_dir={"": "src"},
    packages=["cckey"],
    package_data={"cckey": ["py.typed", "*.pyi"]},
    ext_modules=[Extension(
        "cckey._cckey",
        sources=sources,
        include_dirs=[include],
        extra_objects=[lib],
        libraries=["pthread", "dl"],
        extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
                            "-Wno-cast-function-type", "-fvisibility=hidden"],
        extra_link_args=deps + ["-Wl,--exclude-libs,ALL"],
        depends=[os.path.join("ext", "pyck.h"), lib],
    )],
)
