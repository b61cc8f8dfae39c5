/* cckey.make_keys: the tuples are converted under the GIL (pointers into the
 * Python objects, which are kept alive), then cckey_make_keys runs with the
 * GIL released. */
#include "pyck.h"

#include <string.h>

const char pyck_make_keys_doc[] =
    "make_keys(tuples, backend='auto', threads=0, verify=None, device=None) -> list[str]\n"
    "\n"
    "The keys of many (device, name, source[, options]) tuples, in order.\n"
    "\n"
    "Fields are bytes, str (hashed as UTF-8) or buffer objects; options as in\n"
    "make_key. Each distinct field value is digested once across the batch, on\n"
    "every core (threads=0) and, with backend='auto', on a GPU where that is\n"
    "faster. The GIL is released while the keys are computed; do not change a\n"
    "buffer passed in while the call runs.\n"
    "\n"
    "backend: 'auto', 'cpu', 'opencl' or 'cuda' (an explicit device backend\n"
    "that cannot run here raises cckey.Error).\n"
    "threads: worker threads; 0 means one per core.\n"
    "verify: None or False (no check), True or 'all' (every device digest is\n"
    "recomputed on the CPU), 'sample' (a random sample).\n"
    "device: which device a device backend uses: an index or a part of the\n"
    "device's or platform's name, as devices() lists them (None: the best).\n"
    "\n"
    "A device that fails in mid-batch is not an error: the rest runs on the\n"
    "CPU and a RuntimeWarning says so.";

/* The converted batch: tuples whose options are first recorded as offsets
 * into opts (which may still move as it grows), then fixed up. */
typedef struct batch {
    cckey_tuple *tuples;
    size_t *opt_start;
    size_t n;
    pyck_options opts;
    pyck_holder hold;
} batch;

static void batch_free(batch *b)
{
    PyMem_Free(b->tuples);
    PyMem_Free(b->opt_start);
    pyck_options_free(&b->opts);
    pyck_holder_release(&b->hold);
}

static int convert_tuple(batch *b, size_t i, PyObject *item)
{
    Py_ssize_t idx = (Py_ssize_t)i;
    PyObject *seq = PyTuple_Check(item) ? (Py_INCREF(item), item) : PySequence_Fast(item, "");
    if (!seq) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "tuple %zd: expected (device, name, source[, options]), not %.100s", idx,
                     Py_TYPE(item)->tp_name);
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    int rc = -1;
    if (len != 3 && len != 4) {
        PyErr_Format(PyExc_TypeError, "tuple %zd: expected (device, name, source[, options]), got %zd items", idx,
                     len);
        goto out;
    }
    PyObject **f = PySequence_Fast_ITEMS(seq);
    cckey_tuple *t = &b->tuples[i];
    if (pyck_field(f[0], &t->device, &b->hold, "device", idx) < 0 ||
        pyck_field(f[1], &t->name, &b->hold, "name", idx) < 0 ||
        pyck_field(f[2], &t->source, &b->hold, "source", idx) < 0)
        goto out;
    b->opt_start[i] = b->opts.n;
    if (len == 4 && pyck_options_add(f[3], &b->opts, &b->hold, idx) < 0) goto out;
    t->n_options = b->opts.n - b->opt_start[i];
    rc = 0;
out:
    Py_DECREF(seq);
    return rc;
}

static int convert(batch *b, PyObject *list)
{
    b->n = (size_t)PyList_GET_SIZE(list);
    if (b->n == 0) return 0;
    b->tuples = PyMem_Calloc(b->n, sizeof *b->tuples);
    b->opt_start = PyMem_Calloc(b->n, sizeof *b->opt_start);
    if (!b->tuples || !b->opt_start) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < b->n; i++)
        if (convert_tuple(b, i, PyList_GET_ITEM(list, (Py_ssize_t)i)) < 0) return -1;
    for (size_t i = 0; i < b->n; i++)
        b->tuples[i].options = b->tuples[i].n_options ? &b->opts.v[b->opt_start[i]] : NULL;
    return 0;
}

static int parse_verify(PyObject *o, cckey_verify_mode *out)
{
    if (o == Py_None || o == Py_False) {
        *out = CCKEY_VERIFY_NONE;
        return 0;
    }
    if (o == Py_True) {
        *out = CCKEY_VERIFY_ALL;
        return 0;
    }
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (s && strcmp(s, "all") == 0) *out = CCKEY_VERIFY_ALL;
    else if (s && strcmp(s, "sample") == 0) *out = CCKEY_VERIFY_SAMPLE;
    else if (s && strcmp(s, "none") == 0) *out = CCKEY_VERIFY_NONE;
    else {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "verify must be None, a bool, 'all', 'sample' or 'none', not %R", o);
        return -1;
    }
    return 0;
}

/* A device selector for the device backends the batch may use. */
static cckey_status set_device(cckey_batch_config *cfg, cckey_backend_kind kind, const char *device)
{
    cckey_status st = CCKEY_OK;
    if (kind == CCKEY_BACKEND_OPENCL || kind == CCKEY_BACKEND_AUTO)
        st = cckey_batch_config_set_device(cfg, CCKEY_BACKEND_OPENCL, device);
    if (st == CCKEY_OK && (kind == CCKEY_BACKEND_CUDA || kind == CCKEY_BACKEND_AUTO))
        st = cckey_batch_config_set_device(cfg, CCKEY_BACKEND_CUDA, device);
    return st;
}

static cckey_batch_config *make_config(const char *backend, long threads, PyObject *verify, const char *device)
{
    cckey_backend_kind kind;
    cckey_verify_mode mode;
    if (cckey_backend_from_name(backend, &kind) != CCKEY_OK) {
        PyErr_Format(PyExc_ValueError, "unknown backend '%s' (auto, cpu, opencl or cuda)", backend);
        return NULL;
    }
    if (threads < 0 || threads > 65536) {
        PyErr_Format(PyExc_ValueError, "threads must be between 0 (one per core) and 65536, not %ld", threads);
        return NULL;
    }
    if (parse_verify(verify, &mode) < 0) return NULL;
    if (device && kind == CCKEY_BACKEND_CPU) {
        PyErr_SetString(PyExc_ValueError, "device selects a device of the opencl or cuda backend, not of cpu");
        return NULL;
    }
    cckey_batch_config *cfg = NULL;
    cckey_status st = cckey_batch_config_new(&cfg);
    if (st == CCKEY_OK) st = cckey_batch_config_set_backend(cfg, kind);
    if (st == CCKEY_OK) st = cckey_batch_config_set_threads(cfg, (unsigned)threads);
    if (st == CCKEY_OK) st = cckey_batch_config_set_verify(cfg, mode);
    if (st == CCKEY_OK && device) st = set_device(cfg, kind, device);
    if (st != CCKEY_OK) {
        cckey_batch_config_free(cfg);
        pyck_raise(st);
        return NULL;
    }
    return cfg;
}

static PyObject *keys_list(char (*out)[CCKEY_KEY_LEN + 1], size_t n)
{
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (!list) return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *s = pyck_key_str(out[i]);
        if (!s) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, s);
    }
    return list;
}

PyObject *pyck_make_keys(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"tuples", "backend", "threads", "verify", "device", NULL};
    PyObject *tuples, *verify = Py_None;
    const char *backend = "auto", *device = NULL;
    long threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$slOz:make_keys", kwlist, &tuples, &backend, &threads,
                                     &verify, &device))
        return NULL;
    cckey_batch_config *cfg = make_config(backend, threads, verify, device);
    if (!cfg) return NULL;
    /* A private list: the caller's list may change while the GIL is out. */
    PyObject *list = PySequence_List(tuples);
    PyObject *result = NULL;
    char (*out)[CCKEY_KEY_LEN + 1] = NULL;
    batch b = {0};
    pyck_holder_init(&b.hold, 1);
    if (!list || convert(&b, list) < 0) goto done;
    if (b.n && !(out = PyMem_Malloc(b.n * sizeof *out))) {
        PyErr_NoMemory();
        goto done;
    }
    cckey_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cckey_make_keys(out, b.tuples, b.n, cfg);
    Py_END_ALLOW_THREADS
    if (st != CCKEY_OK) {
        pyck_raise(st);
        goto done;
    }
    const char *warning = cckey_batch_config_warning(cfg);
    if (warning && *warning && PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "cckey: %s", warning) < 0) goto done;
    result = keys_list(out, b.n);
done:
    PyMem_Free(out);
    batch_free(&b);
    Py_XDECREF(list);
    cckey_batch_config_free(cfg);
    return result;
}
