/* cckey.devices(): which backends can compute keys in this process. The
 * public API has no device listing yet, so each backend is asked to key one
 * tuple, explicitly; the library's own words say why one cannot. */
#include "pyck.h"

const char pyck_devices_doc[] =
    "devices() -> list[dict]\n"
    "\n"
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

PyObject *pyck_devices(PyObject *self, PyObject *unused)
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
