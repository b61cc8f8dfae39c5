/* cckey.devices(): the devices of the device backends (cckey_devices), and
 * cckey.backends(): whether each backend can compute keys in this process,
 * found by asking it to key one tuple, so the library's own words say why
 * one cannot. */
#include "pyck.h"

#include <stdlib.h>

const char pyck_devices_doc[] =
    "devices()\n--\n\n"
    "Returns list[dict].\n"
    "The OpenCL and CUDA devices this process can see, usable or not: one dict\n"
    "per device with 'backend', 'index' (what a device selector takes), 'id'\n"
    "('name|driver': the recommended device field of a key), 'name', 'driver',\n"
    "'platform', 'type' ('gpu', 'cpu', ...), 'global_mem' (bytes),\n"
    "'compute_units', 'usable', 'selected' (the one a batch would use) and\n"
    "'auto_ok' (backend='auto' may use it). Drivers are loaded on the first\n"
    "call; the GIL is released meanwhile.";

const char pyck_backends_doc[] =
    "backends()\n--\n\n"
    "Returns list[dict].\n"
    "The backends of this build and whether each can compute keys here: one\n"
    "dict per backend with 'backend' ('cpu', 'opencl', 'cuda'), 'available'\n"
    "(bool), 'used' (what the library reported running, e.g. 'opencl') and\n"
    "'reason' (why not, from the library, or ''). Device backends are loaded\n"
    "and probed, so the first call can take a second; the GIL is released.";

static PyObject *probe(cckey_backend_kind kind)
{
    cckey_batch_config *cfg = NULL;
    cckey_status st = cckey_batch_config_new(&cfg);
    if (st == CCKEY_OK) st = cckey_batch_config_set_backend(cfg, kind);
    if (st != CCKEY_OK) {
        cckey_batch_config_free(cfg);
        return pyck_raise(st);
    }
    static const char field[] = "cckey.devices";
    cckey_tuple t = {.device = {field, sizeof field - 1}, .name = {field, sizeof field - 1},
                     .source = {field, sizeof field - 1}};
    char key[1][CCKEY_KEY_LEN + 1];
    Py_BEGIN_ALLOW_THREADS
    st = cckey_make_keys(key, &t, 1, cfg);
    Py_END_ALLOW_THREADS
    PyObject *d = Py_BuildValue("{sssOssss}", "backend", cckey_backend_name(kind), "available",
                                st == CCKEY_OK ? Py_True : Py_False, "used",
                                st == CCKEY_OK ? cckey_batch_config_used(cfg) : "", "reason",
                                st == CCKEY_OK ? "" : cckey_last_error());
    cckey_batch_config_free(cfg);
    if (d && st != CCKEY_OK && st != CCKEY_ERR_UNAVAILABLE && st != CCKEY_ERR_DEVICE) {
        Py_DECREF(d);
        return pyck_raise(st);
    }
    return d;
}

PyObject *pyck_backends(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    static const cckey_backend_kind kinds[] = {CCKEY_BACKEND_CPU, CCKEY_BACKEND_OPENCL, CCKEY_BACKEND_CUDA};
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < sizeof kinds / sizeof kinds[0]; i++) {
        PyObject *d = probe(kinds[i]);
        if (!d || PyList_Append(list, d) < 0) Py_CLEAR(list);
        Py_XDECREF(d);
    }
    return list;
}

static PyObject *device_dict(const cckey_device *d)
{
    return Py_BuildValue("{sssIsssssssssssKsIsOsOsO}", "backend", cckey_backend_name(d->backend), "index",
                         d->index, "id", d->id, "name", d->name, "driver", d->driver, "platform", d->platform,
                         "type", d->type, "global_mem", (unsigned long long)d->global_mem, "compute_units",
                         d->compute_units, "usable", d->usable ? Py_True : Py_False, "selected",
                         d->selected ? Py_True : Py_False, "auto_ok", d->auto_ok ? Py_True : Py_False);
}

/* Appends the devices of one backend; a backend that cannot run here
 * still lists the devices that exist, and one without any adds none. */
static int add_devices(PyObject *list, cckey_backend_kind kind)
{
    size_t count = 0, got = 0;
    cckey_device *v = NULL;
    cckey_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cckey_devices(NULL, kind, NULL, 0, &count);
    if ((st == CCKEY_OK || st == CCKEY_ERR_UNAVAILABLE) && count) {
        v = calloc(count, sizeof *v);
        if (v) st = cckey_devices(NULL, kind, v, count, &got);
    }
    Py_END_ALLOW_THREADS
    if (st != CCKEY_OK && st != CCKEY_ERR_UNAVAILABLE) {
        free(v);
        pyck_raise(st);
        return -1;
    }
    if (count && !v) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < got && i < count && rc == 0; i++) {
        PyObject *d = device_dict(&v[i]);
        rc = d ? PyList_Append(list, d) : -1;
        Py_XDECREF(d);
    }
    free(v);
    return rc;
}

PyObject *pyck_devices(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *list = PyList_New(0);
    if (list && (add_devices(list, CCKEY_BACKEND_OPENCL) < 0 || add_devices(list, CCKEY_BACKEND_CUDA) < 0))
        Py_CLEAR(list);
    return list;
}

const char pyck_features_doc[] =
    "features()\n--\n\n"
    "Returns dict[str, bool].\n"
    "The optional parts this build holds, found when it was built (a part whose\n"
    "headers or library were missing is left out): 'opencl' and 'cuda' (the\n"
    "device engines; backends() says whether they run here), 'redis' and 'http'\n"
    "(the Store's remote caches), 'signing' (entry fingerprints and signed\n"
    "remotes, OpenSSL's libcrypto), 'compression' (zstd entries, libzstd) and\n"
    "'tar_bundles' (bundles as tar archives, libarchive).";

/* From the library build's own CCKEY_WITH_* (CMakeLists.txt passes them). */
PyObject *pyck_features(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int opencl = 0, cuda = 0, redis = 0, http = 0, signing = 0, compression = 0, tar = 0;
#ifdef CCKEY_WITH_OPENCL
    opencl = 1;
#endif
#ifdef CCKEY_WITH_CUDA
    cuda = 1;
#endif
#ifdef CCKEY_WITH_REDIS
    redis = 1;
#endif
#ifdef CCKEY_WITH_HTTP
    http = 1;
#endif
#ifdef CCKEY_WITH_CRYPTO
    signing = 1;
#endif
#ifdef CCKEY_WITH_ZSTD
    compression = 1;
#endif
#ifdef CCKEY_WITH_ARCHIVE
    tar = 1;
#endif
    return Py_BuildValue("{sNsNsNsNsNsNsN}", "opencl", PyBool_FromLong(opencl), "cuda", PyBool_FromLong(cuda), "redis",
                         PyBool_FromLong(redis), "http", PyBool_FromLong(http), "signing", PyBool_FromLong(signing),
                         "compression", PyBool_FromLong(compression), "tar_bundles", PyBool_FromLong(tar));
}
