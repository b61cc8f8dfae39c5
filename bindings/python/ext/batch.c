/* cckey.make_keys: the tuples are converted under the GIL (pointers into the
 * Python objects, which are kept alive), then cckey_make_keys runs with the
 * GIL released. */
#include "pyck.h"

#include <string.h>

const char pyck_make_keys_doc[] =
    "make_keys(tuples, *, backend='auto', threads=0, verify=None, device=None)\n--\n\n"
    "Returns list[str].\n"
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
    "CPU and a RuntimeWarning says so.\n"
    "\n"
    "A CPU batch runs in blocks of 32768 tuples, each keyed on a helper thread\n"
    "while the next is converted; tuples may be a list that another thread\n"
    "changes meanwhile, but one that changes size raises RuntimeError.\n"
    "\n"
    "The library's settings object of the last call (without device=) is kept\n"
    "for the next call with the same settings, with whatever scratch memory\n"
    "the library keeps in it for repeated batches.";

/* Options objects already converted in this batch, by address: a suite
 * passes a few option lists shared by many tuples, and those then share one
 * cckey_option run, which also lets the library skip them by address. An
 * entry holds a reference, so its address cannot be reused. An entry is
 * valid only while no Python code has run since it was made (code that
 * could change a cached list): any conversion outside the exact built-in
 * types below bumps the epoch, which empties the cache. */
#define OPT_MEMO 64

typedef struct opt_memo {
    PyObject *obj;
    size_t start, n, epoch;
} opt_memo;

/* A block of the batch: its tuples, their options and their keys. Two
 * slots take turns, so that one block is keyed while the next is
 * converted. */
typedef struct slot {
    PyObject **items;       /* references to the block's items */
    size_t n_items;
    cckey_tuple *tuples;
    char (*out)[CCKEY_KEY_LEN + 1];
    pyck_options opts;
    size_t n;               /* tuples in the block */
} slot;

/* The batch being converted, a block at a time. Each tuple's options are
 * first recorded as an offset into the block's opts (which may still move
 * as it grows), then fixed up. */
typedef struct batch {
    size_t total;           /* the list's length */
    cckey_tuple *tuples;    /* the block being converted: a slot's */
    size_t n;
    pyck_options *opts;     /* its options */
    slot slot[2];
    pyck_holder hold;
    size_t epoch;
    opt_memo memo[OPT_MEMO];
} batch;

static void release_items(slot *s)
{
    for (size_t i = 0; i < s->n_items; i++) Py_DECREF(s->items[i]);
    s->n_items = 0;
}

static void batch_free(batch *b)
{
    for (int i = 0; i < 2; i++) {
        release_items(&b->slot[i]);
        PyMem_Free(b->slot[i].items);
        PyMem_Free(b->slot[i].tuples);
        PyMem_Free(b->slot[i].out);
        pyck_options_free(&b->slot[i].opts);
    }
    for (int i = 0; i < OPT_MEMO; i++) Py_XDECREF(b->memo[i].obj);
    pyck_holder_release(&b->hold);
}

/* A field of an exact tuple, which its block keeps alive (and which
 * cannot change): exact bytes and ASCII str are pointed into without a
 * reference. Anything else takes pyck_field's general path, which keeps a
 * reference and may run Python code (a buffer's exporter). */
static inline int tuple_field(batch *b, PyObject *o, cckey_bytes *out, const char *what, Py_ssize_t idx)
{
    if (PyBytes_CheckExact(o)) {
        out->ptr = PyBytes_AS_STRING(o);
        out->len = (size_t)PyBytes_GET_SIZE(o);
        return 0;
    }
    if (PyUnicode_CheckExact(o) && PyUnicode_IS_COMPACT_ASCII(o)) {
        out->ptr = PyUnicode_DATA(o);
        out->len = (size_t)PyUnicode_GET_LENGTH(o);
        return 0;
    }
    if (!PyUnicode_CheckExact(o)) b->epoch++;
    return pyck_field(o, out, &b->hold, what, idx);
}

static inline int plain_text(PyObject *o)
{
    return PyBytes_CheckExact(o) || PyUnicode_CheckExact(o);
}

/* Whether converting options o runs no Python code: a list or tuple of
 * exact (key, value) tuples, or a dict, of bytes and str only. */
static int plain_options(PyObject *o)
{
    if (PyDict_CheckExact(o)) {
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(o, &pos, &k, &v))
            if (!plain_text(k) || !plain_text(v)) return 0;
        return 1;
    }
    if (!PyList_CheckExact(o) && !PyTuple_CheckExact(o)) return 0;
    PyObject **item = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); i++)
        if (!PyTuple_CheckExact(item[i]) || PyTuple_GET_SIZE(item[i]) != 2 ||
            !plain_text(PyTuple_GET_ITEM(item[i], 0)) || !plain_text(PyTuple_GET_ITEM(item[i], 1)))
            return 0;
    return 1;
}

static int convert_options(batch *b, PyObject *o, cckey_tuple *t, Py_ssize_t idx)
{
    t->n_options = 0;
    if (o == Py_None) return 0;
    uintptr_t a = (uintptr_t)o;
    opt_memo *m = &b->memo[(a >> 4 ^ a >> 12) % OPT_MEMO];
    if (m->obj == o && m->epoch == b->epoch) {
        t->options = (const cckey_option *)(uintptr_t)m->start;
        t->n_options = m->n;
        return 0;
    }
    size_t start = b->opts->n;
    int plain = plain_options(o);
    if (!plain) b->epoch++;
    if (pyck_options_add(o, b->opts, &b->hold, idx) < 0) return -1;
    t->options = (const cckey_option *)(uintptr_t)start;
    t->n_options = b->opts->n - start;
    if (!plain) return 0;
    Py_INCREF(o);
    Py_XDECREF(m->obj);
    m->obj = o;
    m->start = start;
    m->n = t->n_options;
    m->epoch = b->epoch;
    return 0;
}

static int bad_tuple(PyObject *item, Py_ssize_t idx, Py_ssize_t len)
{
    if (len < 0)
        PyErr_Format(PyExc_TypeError, "tuple %zd: expected (device, name, source[, options]), not %.100s", idx,
                     Py_TYPE(item)->tp_name);
    else
        PyErr_Format(PyExc_TypeError, "tuple %zd: expected (device, name, source[, options]), got %zd items",
                     idx, len);
    return -1;
}

static int convert_tuple(batch *b, cckey_tuple *t, Py_ssize_t idx, PyObject *item)
{
    if (PyTuple_CheckExact(item)) {
        /* The common case: immutable, and kept alive by its block. */
        Py_ssize_t len = PyTuple_GET_SIZE(item);
        if (len != 3 && len != 4) return bad_tuple(item, idx, len);
        PyObject **f = &PyTuple_GET_ITEM(item, 0);
        if (tuple_field(b, f[0], &t->device, "device", idx) < 0 || tuple_field(b, f[1], &t->name, "name", idx) < 0 ||
            tuple_field(b, f[2], &t->source, "source", idx) < 0)
            return -1;
        return len == 4 ? convert_options(b, f[3], t, idx) : (t->n_options = 0, 0);
    }
    /* A list or another sequence: it may change once the GIL is out, so
     * every field is referenced, and converting it may run Python code. */
    b->epoch++;
    PyObject *seq = PySequence_Fast(item, "");
    if (!seq) {
        PyErr_Clear();
        return bad_tuple(item, idx, -1);
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    PyObject **f = PySequence_Fast_ITEMS(seq);
    int rc = len != 3 && len != 4 ? bad_tuple(item, idx, len)
             : pyck_field(f[0], &t->device, &b->hold, "device", idx) < 0 ||
                     pyck_field(f[1], &t->name, &b->hold, "name", idx) < 0 ||
                     pyck_field(f[2], &t->source, &b->hold, "source", idx) < 0
                 ? -1
             : len == 4 ? convert_options(b, f[3], t, idx)
                        : (t->n_options = 0, 0);
    Py_DECREF(seq);
    return rc;
}

/* Converts list[start, start + n) into slot s, which keeps a reference to
 * each item: the list may be the caller's, which another thread can change
 * while the GIL is out (as can Python code that converting a field runs). */
static int convert_block(batch *b, PyObject *list, size_t start, size_t n, slot *s)
{
    release_items(s);
    b->tuples = s->tuples;
    b->n = n;
    b->opts = &s->opts;
    b->opts->n = 0;
    b->epoch++;   /* the memo's offsets are into another block's opts */
    for (size_t i = 0; i < n; i++) {
        if ((size_t)PyList_GET_SIZE(list) != b->total) {
            PyErr_SetString(PyExc_RuntimeError, "make_keys: the list of tuples changed size during the call");
            return -1;
        }
        PyObject *item = PyList_GET_ITEM(list, (Py_ssize_t)(start + i));
        Py_INCREF(item);
        s->items[s->n_items++] = item;
        if (convert_tuple(b, &b->tuples[i], (Py_ssize_t)(start + i), item) < 0) return -1;
    }
    /* opts does not move until the next block: offsets become pointers. */
    for (size_t i = 0; i < b->n; i++) {
        cckey_tuple *t = &b->tuples[i];
        t->options = t->n_options ? &b->opts->v[(uintptr_t)t->options] : NULL;
    }
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

/* The config of the last batch, idle, for the next with the same settings
 * (no device selector): the library may keep a batch's scratch tables in
 * its config, and a reused one then touches no fresh pages. Taken and put
 * back under the GIL; a batch running meanwhile on another thread makes its
 * own, so a config's warning is always its own batch's. */
static struct {
    cckey_batch_config *cfg;
    cckey_backend_kind kind;
    long threads;
    cckey_verify_mode mode;
} idle;

static cckey_batch_config *take_idle(cckey_backend_kind kind, long threads, cckey_verify_mode mode,
                                     const char *device)
{
    if (device || !idle.cfg || idle.kind != kind || idle.threads != threads || idle.mode != mode) return NULL;
    cckey_batch_config *cfg = idle.cfg;
    idle.cfg = NULL;
    return cfg;
}

/* Ends a batch's use of cfg: kept as the idle one, or freed. */
static void put_idle(cckey_batch_config *cfg, cckey_backend_kind kind, long threads, cckey_verify_mode mode,
                     const char *device)
{
    if (device || !cfg) {
        cckey_batch_config_free(cfg);
        return;
    }
    cckey_batch_config_free(idle.cfg);
    idle.cfg = cfg;
    idle.kind = kind;
    idle.threads = threads;
    idle.mode = mode;
}

static cckey_batch_config *make_config(const char *backend, long threads, PyObject *verify, const char *device,
                                       cckey_backend_kind *kind_out, cckey_verify_mode *mode_out)
{
    cckey_backend_kind kind;
    cckey_verify_mode mode;
    if (cckey_backend_from_name(backend, &kind) != CCKEY_OK) {
        PyErr_Format(PyExc_ValueError, "unknown backend '%s' (auto, cpu, opencl or cuda)", backend);
        return NULL;
    }
    if (threads < 0 || threads > 4096) {   /* the library's limit */
        PyErr_Format(PyExc_ValueError, "threads must be between 0 (one per core) and 4096, not %ld", threads);
        return NULL;
    }
    if (parse_verify(verify, &mode) < 0) return NULL;
    if (device && kind == CCKEY_BACKEND_CPU) {
        PyErr_SetString(PyExc_ValueError, "device selects a device of the opencl or cuda backend, not of cpu");
        return NULL;
    }
    *kind_out = kind;
    *mode_out = mode;
    cckey_batch_config *cfg = take_idle(kind, threads, mode, device);
    if (cfg) return cfg;
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

/* Tuples per library call when the batch runs on the CPU. Blocks let the
 * binding's work overlap the library's (see run_blocks), and their arrays
 * are reused block after block, where one call over the whole batch would
 * fault in ~200 bytes a tuple of fresh pages on every call (a third of the
 * binding's time at 10^6 tuples). 32768 tuples are two of the library's
 * tuple blocks, so it still splits each call over two threads when the GIL's
 * thread leaves it a core. The library deduplicates within a block: shared
 * devices and option lists cost nothing per block, and a source repeated
 * only across blocks is digested once a block. */
#define CPU_BLOCK 32768

/* Whether backend kind runs on the CPU: cpu, or auto with no device that
 * auto may use (asked once per process: drivers load once). A device
 * backend keeps the whole batch in one call, which it needs to be worth
 * the transfer. */
static int runs_on_cpu(cckey_backend_kind kind)
{
    static int auto_cpu = -1;
    if (kind == CCKEY_BACKEND_CPU) return 1;
    if (kind != CCKEY_BACKEND_AUTO) return 0;
    if (auto_cpu < 0) {
        int found = 0;
        cckey_device dev[16];
        static const cckey_backend_kind kinds[] = {CCKEY_BACKEND_OPENCL, CCKEY_BACKEND_CUDA};
        for (int k = 0; k < 2 && !found; k++) {
            size_t count = 0;
            cckey_status st;
            Py_BEGIN_ALLOW_THREADS
            st = cckey_devices(NULL, kinds[k], dev, 16, &count);
            Py_END_ALLOW_THREADS
            if (st != CCKEY_OK) continue;
            /* More than 16 devices: assume one of them is usable. */
            found = count > 16;
            for (size_t i = 0; i < count && i < 16; i++) found |= dev[i].usable && dev[i].auto_ok;
        }
        auto_cpu = !found;
    }
    return auto_cpu;
}

/* Appends keys out[0, n) to result at [start, start + n) as compact ASCII
 * str objects, written in place. */
static int add_keys(PyObject *result, size_t start, char (*out)[CCKEY_KEY_LEN + 1], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        PyObject *s = PyUnicode_New(CCKEY_KEY_LEN, 127);
        if (!s) return -1;
        memcpy(PyUnicode_DATA(s), out[i], CCKEY_KEY_LEN);
        PyList_SET_ITEM(result, (Py_ssize_t)(start + i), s);
    }
    return 0;
}

/* The batch's run, a block at a time: block i is converted (GIL held)
 * while block i-1 is keyed, on the library's keyer thread when there is one
 * (cckey_keyer); then block i is handed over and block i-1's keys become str
 * objects while it runs. Without a keyer a block is keyed at hand-over. */
typedef struct run {
    batch *b;
    PyObject *list, *result, *warning;
    cckey_batch_config *cfg;
    size_t block;
    cckey_keyer *keyer;
    int inflight;   /* a block is on the keyer */
} run;

/* The block in flight has been keyed: its status, and the first warning. */
static int block_done(run *r, cckey_status st)
{
    if (st != CCKEY_OK) {
        /* cckey_last_error, on this thread, says why; a conversion error
         * raised first stays the one reported. */
        if (!PyErr_Occurred()) pyck_raise(st);
        return -1;
    }
    /* With a keyer, later blocks may have run since: its copy is this one's. */
    const char *w = r->keyer ? cckey_keyer_warning(r->keyer) : cckey_batch_config_warning(r->cfg);
    if (w && *w && !r->warning && !(r->warning = PyUnicode_FromString(w))) return -1;
    return 0;
}

static int run_wait(run *r)
{
    if (!r->inflight) return 0;
    cckey_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cckey_keyer_wait(r->keyer);
    Py_END_ALLOW_THREADS
    r->inflight = 0;
    return block_done(r, st);
}

static int run_start(run *r, slot *s)
{
    if (r->keyer) {
        cckey_keyer_submit(r->keyer, s->out, s->tuples, s->n, r->cfg);
        r->inflight = 1;
        return 0;
    }
    cckey_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cckey_make_keys(s->out, s->tuples, s->n, r->cfg);
    Py_END_ALLOW_THREADS
    return block_done(r, st);
}

/* Block i's keys into result; it has been keyed. */
static int finish_block(run *r, size_t i)
{
    slot *s = &r->b->slot[i % 2];
    return add_keys(r->result, i * r->block, s->out, s->n);
}

static int alloc_slots(batch *b, size_t block, int n_slots)
{
    for (int i = 0; i < n_slots; i++) {
        slot *s = &b->slot[i];
        s->items = PyMem_Malloc(block * sizeof *s->items);
        s->tuples = PyMem_Malloc(block * sizeof *s->tuples);
        s->out = PyMem_Malloc(block * sizeof *s->out);
        if (!s->items || !s->tuples || !s->out) {
            PyErr_NoMemory();
            return -1;
        }
    }
    return 0;
}

static int run_blocks(run *r)
{
    size_t n = r->b->total, blocks = (n + r->block - 1) / r->block;
    if (alloc_slots(r->b, r->block, blocks > 1 ? 2 : 1) < 0) return -1;
    int rc = 0;
    for (size_t i = 0; i <= blocks && rc == 0; i++) {
        slot *s = &r->b->slot[i % 2];
        size_t start = i * r->block, len = i < blocks && n - start < r->block ? n - start : r->block;
        if (i < blocks && convert_block(r->b, r->list, start, len, s) < 0) rc = -1;
        if (run_wait(r) < 0) rc = -1;   /* block i-1 */
        if (rc == 0 && i < blocks) s->n = len, rc = run_start(r, s);
        if (rc == 0 && i > 0) rc = finish_block(r, i - 1);
    }
    if (run_wait(r) < 0 && rc == 0) rc = -1;
    return rc;
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
    cckey_backend_kind kind;
    cckey_verify_mode mode;
    cckey_batch_config *cfg = make_config(backend, threads, verify, device, &kind, &mode);
    if (!cfg) return NULL;
    /* A list is used as it is (each block holds its items); any other
     * iterable becomes one. */
    PyObject *list = PyList_CheckExact(tuples) ? (Py_INCREF(tuples), tuples) : PySequence_List(tuples);
    batch b = {0};
    pyck_holder_init(&b.hold, 1);
    run r = {.b = &b, .list = list, .cfg = cfg};
    size_t n = b.total = list ? (size_t)PyList_GET_SIZE(list) : 0;
    r.result = list ? PyList_New((Py_ssize_t)n) : NULL;
    if (r.result && n) {
        int cpu = runs_on_cpu(kind);
        r.block = cpu && n > CPU_BLOCK ? CPU_BLOCK : n;
        /* The keyer thread is one more thread than threads=1 asks for. */
        if (cpu && threads != 1 && n > r.block && cckey_keyer_new(&r.keyer) != CCKEY_OK) r.keyer = NULL;
        /* A list whose slots are still NULL is safe to free. */
        if (run_blocks(&r) < 0) Py_CLEAR(r.result);
        if (r.keyer) {
            Py_BEGIN_ALLOW_THREADS
            cckey_keyer_free(r.keyer);
            Py_END_ALLOW_THREADS
        }
    }
    PyObject *result = r.result;
    if (result && r.warning && PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "cckey: %U", r.warning) < 0)
        Py_CLEAR(result);
    Py_XDECREF(r.warning);
    batch_free(&b);
    Py_XDECREF(list);
    put_idle(cfg, kind, threads, mode, device);
    return result;
}
