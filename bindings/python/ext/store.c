/* cckey.Store: the on-disk store of compiled kernels. Every call that
 * touches the disk runs with the GIL released; `busy` (changed only under
 * the GIL) counts those calls, and close() refuses new ones and waits for
 * them, so it never frees a handle another thread is using. */
#include "pyck.h"
#include "cckey_store.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "structmember.h"

typedef struct {
    PyObject_HEAD
    cckey_store *store;
    Py_ssize_t busy;
    bool closing;
    /* close() waits on idle, the GIL released, until woken: set under mu by
     * the call that takes busy to 0 while closing (a flag, so a wake-up
     * before the wait is not lost; busy cannot rise again once closing). */
    bool sync_ready, woken;
    pthread_mutex_t mu;
    pthread_cond_t idle;
    PyObject *path;
} StoreObject;

/* max_bytes, an O& converter: an int from 0 (the folder's own limit) to
 * 2**64 - 1. PyArg's "K" takes any int modulo 2**64 (-1 became no limit,
 * 2**64 + 4096 a 4 KiB one): a value out of range is an OverflowError. */
static int max_bytes_arg(PyObject *o, void *out)
{
    PyObject *i = PyNumber_Index(o);
    if (!i) return 0;
    unsigned long long v = PyLong_AsUnsignedLongLong(i);
    Py_DECREF(i);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_OverflowError, "max_bytes must be from 0 (the folder's own limit) to 2**64 - 1, not %R", o);
        }
        return 0;
    }
    *(unsigned long long *)out = v;
    return 1;
}

/* What Store() was given about remotes: no_remote, the remotes= URLs (NULL:
 * the folder's cckey.conf) and the signing secret (sign_key= or the bytes of
 * sign_key_file=, NULL: the folder's remote_key_file). */
typedef struct remote_args {
    int none, read_only;
    PyObject *urls_obj, *key_obj, *key_file_obj;
    char **urls;
    size_t n_urls;
    Py_buffer key;
    char *file_key;
    size_t file_key_len;
} remote_args;

static void remote_args_free(remote_args *r)
{
    free(r->urls);   /* the strings belong to urls_obj's items */
    if (r->key.obj) PyBuffer_Release(&r->key);
    if (r->file_key) memset(r->file_key, 0, r->file_key_len);
    free(r->file_key);
    Py_XDECREF(r->key_file_obj);
}

static int remote_urls(remote_args *r)
{
    if (r->urls_obj == Py_None) return 0;
    if (!PyList_Check(r->urls_obj) && !PyTuple_Check(r->urls_obj)) {
        PyErr_Format(PyExc_TypeError, "remotes must be a list of URLs (str), not %.100s", Py_TYPE(r->urls_obj)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(r->urls_obj);
    if (!(r->urls = calloc((size_t)n + 1, sizeof *r->urls))) return PyErr_NoMemory(), -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *u = PySequence_Fast_GET_ITEM(r->urls_obj, i);
        Py_ssize_t len;
        const char *c = PyUnicode_Check(u) ? PyUnicode_AsUTF8AndSize(u, &len) : NULL;
        if (!c) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "remotes[%zd] must be a str URL, not %.100s", i, Py_TYPE(u)->tp_name);
            return -1;
        }
        if ((size_t)len != strlen(c)) return PyErr_Format(PyExc_ValueError, "remotes[%zd] contains a NUL byte", i), -1;
        r->urls[i] = (char *)c;
    }
    r->n_urls = (size_t)n;
    return 0;
}

/* sign_key_file=: its bytes less a final newline, as cckey.conf's
 * remote_key_file is read. */
static int remote_key_file(remote_args *r)
{
    const char *path = PyBytes_AS_STRING(r->key_file_obj);
    FILE *f = fopen(path, "rb");
    if (!f) return PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, r->key_file_obj), -1;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) n--;
    if (!n) return PyErr_Format(PyExc_ValueError, "sign_key_file %R is empty", r->key_file_obj), -1;
    if (!(r->file_key = malloc(n))) return PyErr_NoMemory(), -1;
    memcpy(r->file_key, buf, n);
    memset(buf, 0, sizeof buf);
    r->file_key_len = n;
    return 0;
}

/* sign_key_file=, an O& converter: a path (as os.fsencode), or None. */
static int key_file_arg(PyObject *o, void *out)
{
    if (o == Py_None) return 1;
    return PyUnicode_FSConverter(o, out);
}

static int remote_args_check(remote_args *r)
{
    if (r->key_obj != Py_None && r->key_file_obj) {
        PyErr_SetString(PyExc_TypeError, "give sign_key or sign_key_file, not both");
        return -1;
    }
    if (r->key_obj != Py_None) {
        if (PyUnicode_Check(r->key_obj)) {
            Py_ssize_t len;
            const char *c = PyUnicode_AsUTF8AndSize(r->key_obj, &len);
            if (!c || PyBuffer_FillInfo(&r->key, r->key_obj, (void *)c, len, 1, PyBUF_SIMPLE) < 0) return -1;
        } else if (PyObject_GetBuffer(r->key_obj, &r->key, PyBUF_SIMPLE) < 0) {
            return -1;
        }
        if (!r->key.len) return PyErr_SetString(PyExc_ValueError, "sign_key is empty"), -1;
    }
    if (r->key_file_obj && remote_key_file(r) < 0) return -1;
    return remote_urls(r);
}

/* Warnings of the remotes (unreachable, refused, a bad entry served) as
 * RuntimeWarning; called on the thread of the store call, the GIL released. */
static void remote_warn(void *user, const char *message)
{
    (void)user;
    PyGILState_STATE g = PyGILState_Ensure();
    if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "cckey remote: %s", message) < 0) PyErr_WriteUnraisable(NULL);
    PyGILState_Release(g);
}

static cckey_status attach_remotes(cckey_store *s, remote_args *r)
{
    if (r->none) return CCKEY_OK;
    cckey_remote_settings set = {.read_only = r->read_only, .warn = remote_warn};
    if (r->key.obj) set.secret = r->key.buf, set.secret_len = (size_t)r->key.len;
    if (r->file_key) set.secret = r->file_key, set.secret_len = r->file_key_len;
    return cckey_store_add_conf_remotes(s, (const char *const *)r->urls, r->n_urls, &set);
}

static int open_store(StoreObject *self, PyObject *path_obj, unsigned long long max_bytes, remote_args *r);

static int Store_init(StoreObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"path", "max_bytes", "remotes", "read_only", "sign_key", "sign_key_file", "no_remote", NULL};
    PyObject *path_obj;
    unsigned long long max_bytes = 0;
    remote_args r = {.urls_obj = Py_None, .key_obj = Py_None};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|O&$OpOO&p:Store", kwlist, PyUnicode_FSConverter, &path_obj,
                                     max_bytes_arg, &max_bytes, &r.urls_obj, &r.read_only, &r.key_obj,
                                     key_file_arg, &r.key_file_obj, &r.none))
        return -1;
    int rc = open_store(self, path_obj, max_bytes, &r);
    remote_args_free(&r);
    Py_DECREF(path_obj);
    return rc;
}

static int open_store(StoreObject *self, PyObject *path_obj, unsigned long long max_bytes, remote_args *r)
{
    if (self->store || self->closing) {
        PyErr_SetString(PyExc_TypeError, self->store ? "Store is already open" : "Store is being closed");
        return -1;
    }
    const char *dir = PyBytes_AS_STRING(path_obj);
    if (strlen(dir) != (size_t)PyBytes_GET_SIZE(path_obj)) {
        PyErr_SetString(PyExc_ValueError, "path contains a NUL byte");
        return -1;
    }
    if (remote_args_check(r) < 0) return -1;
    if (!self->sync_ready) {
        pthread_mutex_init(&self->mu, NULL);
        pthread_cond_init(&self->idle, NULL);
        self->sync_ready = true;
    }
    cckey_store *s = NULL;
    cckey_status st;
    int err = 0;
    Py_BEGIN_ALLOW_THREADS
    errno = 0;
    st = r->read_only ? cckey_store_open_read_only(&s, dir) : cckey_store_open(&s, dir, (uint64_t)max_bytes);
    err = errno;
    if (st == CCKEY_OK) st = attach_remotes(s, r);
    Py_END_ALLOW_THREADS
    if (st != CCKEY_OK) {
        PyObject *fn = PyUnicode_DecodeFSDefault(dir);
        if (fn) pyck_raise_os(st, s ? 0 : err, fn);
        Py_XDECREF(fn);
        cckey_store_close(s);
        return -1;
    }
    self->store = s;
    Py_XSETREF(self->path, PyUnicode_DecodeFSDefault(dir));
    return self->path ? 0 : -1;
}

static void Store_dealloc(StoreObject *self)
{
    cckey_store_close(self->store);   /* busy is 0: a method in flight holds a reference */
    if (self->sync_ready) {
        pthread_cond_destroy(&self->idle);
        pthread_mutex_destroy(&self->mu);
    }
    Py_XDECREF(self->path);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int enter(StoreObject *self)
{
    if (!self->store || self->closing) {
        PyErr_SetString(PyExc_ValueError, "the Store is closed");
        return -1;
    }
    self->busy++;
    return 0;
}

static void leave(StoreObject *self)
{
    if (--self->busy || !self->closing) return;
    pthread_mutex_lock(&self->mu);
    self->woken = true;
    pthread_cond_broadcast(&self->idle);   /* every close() waiting */
    pthread_mutex_unlock(&self->mu);
}

/* A key as the C API takes it: a NUL-terminated string of CCKEY_KEY_LEN
 * characters. Anything else is left to cckey_store_* to refuse, so the
 * error carries the library's words. */
static int key_arg(PyObject *o, char key[CCKEY_KEY_LEN + 2])
{
    pyck_holder h;
    pyck_holder_init(&h, 0);
    cckey_bytes b;
    if (pyck_field(o, &b, &h, "key", -1) < 0) return -1;
    size_t n = b.len <= CCKEY_KEY_LEN + 1 ? b.len : CCKEY_KEY_LEN + 1;
    if (n) memcpy(key, b.ptr, n);
    key[n] = 0;
    if (n < b.len || memchr(key, 0, n)) key[0] = 0;   /* too long or a NUL inside: invalid */
    pyck_holder_release(&h);
    return 0;
}

/* The payload under key_obj: 1 with *out set, 0 for a miss, -1 raised. */
static int fetch(StoreObject *self, PyObject *key_obj, PyObject **out)
{
    char key[CCKEY_KEY_LEN + 2];
    if (key_arg(key_obj, key) < 0 || enter(self) < 0) return -1;
    void *buf = NULL;
    size_t len = 0;
    cckey_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cckey_store_get(self->store, key, &buf, &len);
    Py_END_ALLOW_THREADS
    leave(self);
    int rc = 0;
    if (st == CCKEY_OK) rc = (*out = PyBytes_FromStringAndSize(buf, (Py_ssize_t)len)) ? 1 : -1;
    else if (st != CCKEY_ERR_NOT_FOUND && st != CCKEY_ERR_CORRUPT) rc = (pyck_raise_os(st, 0, self->path), -1);
    cckey_store_free_buffer(buf);
    return rc;
}

static PyObject *Store_get(StoreObject *self, PyObject *arg)
{
    PyObject *r = NULL;
    int rc = fetch(self, arg, &r);
    if (rc == 0) Py_RETURN_NONE;
    return r;
}

static PyObject *Store_getitem(StoreObject *self, PyObject *key)
{
    PyObject *r = NULL;
    int rc = fetch(self, key, &r);
    if (rc == 0) PyErr_SetObject(PyExc_KeyError, key);
    return rc == 1 ? r : NULL;
}

static int Store_contains(StoreObject *self, PyObject *key)
{
    PyObject *r = NULL;
    int rc = fetch(self, key, &r);
    Py_XDECREF(r);
    return rc;
}

/* del store[key]: the folder's entry (the remotes keep theirs). */
static int Store_setitem(StoreObject *self, PyObject *key_obj, PyObject *value)
{
    if (value) {
        PyErr_SetString(PyExc_TypeError, "use store.put(key, data) to store; store[key] = ... is not supported");
        return -1;
    }
    char key[CCKEY_KEY_LEN + 2];
    if (key_arg(key_obj, key) < 0 || enter(self) < 0) return -1;
    cckey_status st;
    int err;
    Py_BEGIN_ALLOW_THREADS
    errno = 0;
    st = cckey_store_remove(self->store, key);
    err = errno;
    Py_END_ALLOW_THREADS
    leave(self);
    if (st == CCKEY_ERR_NOT_FOUND) PyErr_SetObject(PyExc_KeyError, key_obj);
    else if (st != CCKEY_OK) pyck_raise_os(st, err, self->path);
    return st == CCKEY_OK ? 0 : -1;
}

static int usage_of(StoreObject *self, cckey_store_usage *u)
{
    if (enter(self) < 0) return -1;
    cckey_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cckey_store_stats(self->store, u);
    Py_END_ALLOW_THREADS
    leave(self);
    return st == CCKEY_OK ? 0 : (pyck_raise_os(st, 0, self->path), -1);
}

static Py_ssize_t Store_len(StoreObject *self)
{
    cckey_store_usage u;
    if (usage_of(self, &u) < 0) return -1;
    return u.entries > PY_SSIZE_T_MAX ? PY_SSIZE_T_MAX : (Py_ssize_t)u.entries;
}

/* The folder's keys, gathered with the GIL released. */
typedef struct key_list {
    char (*v)[CCKEY_KEY_LEN + 1];
    size_t n, cap;
    int oom;
} key_list;

static int add_key(void *user, const char *key, uint64_t bytes, int64_t used)
{
    (void)bytes;
    (void)used;
    key_list *l = user;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        void *v = realloc(l->v, cap * sizeof *l->v);
        if (!v) return l->oom = 1;
        l->v = v, l->cap = cap;
    }
    memcpy(l->v[l->n++], key, CCKEY_KEY_LEN + 1);
    return 0;
}

static PyObject *Store_iter(StoreObject *self)
{
    if (enter(self) < 0) return NULL;
    key_list l = {0};
    cckey_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cckey_store_list(self->store, add_key, &l);
    Py_END_ALLOW_THREADS
    leave(self);
    PyObject *list = NULL, *it = NULL;
    if (l.oom) PyErr_NoMemory();
    else if (st != CCKEY_OK) pyck_raise_os(st, 0, self->path);
    else if ((list = PyList_New((Py_ssize_t)l.n)))
        for (size_t i = 0; i < l.n && list; i++) {
            PyObject *k = pyck_key_str(l.v[i]);
            if (!k) Py_CLEAR(list);
            else PyList_SET_ITEM(list, (Py_ssize_t)i, k);
        }
    free(l.v);
    if (list) it = PyObject_GetIter(list);
    Py_XDECREF(list);
    return it;
}

static PyObject *Store_put(StoreObject *self, PyObject *args)
{
    PyObject *key_obj, *data_obj;
    if (!PyArg_ParseTuple(args, "OO:put", &key_obj, &data_obj)) return NULL;
    char key[CCKEY_KEY_LEN + 2];
    if (key_arg(key_obj, key) < 0) return NULL;
    Py_buffer data;
    if (PyObject_GetBuffer(data_obj, &data, PyBUF_SIMPLE) < 0) return NULL;
    if (enter(self) < 0) {
        PyBuffer_Release(&data);
        return NULL;
    }
    cckey_status st;
    int err;
    Py_BEGIN_ALLOW_THREADS
    errno = 0;
    st = cckey_store_put(self->store, key, data.buf, (size_t)data.len);
    err = errno;
    Py_END_ALLOW_THREADS
    leave(self);
    PyBuffer_Release(&data);
    if (st != CCKEY_OK) return pyck_raise_os(st, err, self->path);
    Py_RETURN_NONE;
}

static PyObject *Store_stats(StoreObject *self, PyObject *unused)
{
    (void)unused;
    cckey_store_usage u;
    if (usage_of(self, &u) < 0) return NULL;
    return Py_BuildValue("{sKsKsKsKsKsKsK}", "entries", (unsigned long long)u.entries, "bytes",
                         (unsigned long long)u.bytes, "max_bytes", (unsigned long long)u.max_bytes,
                         "temp_files", (unsigned long long)u.temp_files, "temp_bytes",
                         (unsigned long long)u.temp_bytes, "hits", (unsigned long long)u.hits, "misses",
                         (unsigned long long)u.misses);
}

/* A list of str as the const char * array cckey_lookup takes (pointing
 * into the str objects, which the caller's arguments keep alive). */
static int str_array(PyObject *o, const char *what, const char ***out, size_t *n)
{
    *out = NULL, *n = 0;
    if (o == Py_None) return 0;
    PyObject *seq = PySequence_Fast(o, "");
    if (!seq) return PyErr_Format(PyExc_TypeError, "%s must be a list of str", what), -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    const char **v = calloc((size_t)len + 1, sizeof *v);
    int rc = v ? 0 : (PyErr_NoMemory(), -1);
    for (Py_ssize_t i = 0; rc == 0 && i < len; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        v[i] = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
        if (!v[i]) rc = PyErr_Occurred() ? -1 : (PyErr_Format(PyExc_TypeError, "%s[%zd] must be a str", what, i), -1);
    }
    Py_DECREF(seq);   /* a list or tuple given is seq itself, so its items stay alive */
    if (rc < 0) free(v);
    else *out = v, *n = (size_t)len;
    return rc;
}

static const char *const miss_names[] = {"hit", "absent", "headers", "toolchain", "corrupt", "unknown_record",
                                         "error", "collision", "unverified"};

static PyObject *Store_explain(StoreObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"key", "compiler", "version", "options", "roots", NULL};
    PyObject *key_obj, *options = Py_None, *roots = Py_None;
    cckey_lookup lk = {0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$zzOO:explain", kwlist, &key_obj, &lk.compiler, &lk.version,
                                     &options, &roots))
        return NULL;
    if (!PyList_Check(options) && !PyTuple_Check(options) && options != Py_None)
        return PyErr_SetString(PyExc_TypeError, "options must be a list of str"), NULL;
    if (!PyList_Check(roots) && !PyTuple_Check(roots) && roots != Py_None)
        return PyErr_SetString(PyExc_TypeError, "roots must be a list of str"), NULL;
    char key[CCKEY_KEY_LEN + 2];
    const char **opts = NULL, **dirs = NULL;
    PyObject *r = NULL;
    if (key_arg(key_obj, key) < 0 || str_array(options, "options", &opts, &lk.n_options) < 0 ||
        str_array(roots, "roots", &dirs, &lk.n_roots) < 0 || enter(self) < 0)
        goto out;
    lk.options = options == Py_None ? NULL : opts, lk.roots = dirs;
    void *buf = NULL;
    size_t len = 0;
    cckey_miss why = CCKEY_MISS_ERROR;
    cckey_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cckey_store_get_explained(self->store, key, &lk, &buf, &len, &why);
    Py_END_ALLOW_THREADS
    leave(self);
    cckey_store_free_buffer(buf);
    if (why == CCKEY_MISS_ERROR || (unsigned)why >= sizeof miss_names / sizeof *miss_names) {
        pyck_raise_os(st, 0, self->path);
        goto out;
    }
    r = Py_BuildValue("{sOsssN}", "hit", st == CCKEY_OK ? Py_True : Py_False, "why", miss_names[why], "detail",
                      PyUnicode_DecodeUTF8(st == CCKEY_OK ? "" : cckey_last_error(),
                                           (Py_ssize_t)strlen(st == CCKEY_OK ? "" : cckey_last_error()), "replace"));
out:
    free(opts);
    free(dirs);
    return r;
}

/* Refuse new calls, wait (the GIL released) for those in flight on other
 * threads, then close. Idempotent; a second close() meanwhile waits too. */
static PyObject *Store_close(StoreObject *self, PyObject *unused)
{
    (void)unused;
    if (!self->store) Py_RETURN_NONE;
    if (!self->closing) {   /* the first close(): from now on busy only falls */
        pthread_mutex_lock(&self->mu);
        self->woken = false;
        pthread_mutex_unlock(&self->mu);
        self->closing = true;
    }
    if (self->busy) {
        Py_BEGIN_ALLOW_THREADS
        pthread_mutex_lock(&self->mu);
        while (!self->woken) pthread_cond_wait(&self->idle, &self->mu);
        pthread_mutex_unlock(&self->mu);
        Py_END_ALLOW_THREADS
    }
    cckey_store *s = self->store;
    self->store = NULL;
    self->closing = false;
    cckey_store_close(s);
    Py_RETURN_NONE;
}

static PyObject *Store_enter(StoreObject *self, PyObject *unused)
{
    (void)unused;
    if (!self->store) {
        PyErr_SetString(PyExc_ValueError, "the Store is closed");
        return NULL;
    }
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *Store_exit(StoreObject *self, PyObject *args)
{
    (void)args;
    return Store_close(self, NULL);
}

static PyObject *Store_repr(StoreObject *self)
{
    return PyUnicode_FromFormat("<cckey.Store %R%s>", self->path ? self->path : Py_None,
                                self->store ? "" : " (closed)");
}

static PyMethodDef Store_methods[] = {
    {"get", (PyCFunction)Store_get, METH_O,
     "get($self, key, /)\n--\n\n"
     "The payload stored under key (a 131-character key), or None when there is\n"
     "none here or on a remote (a remote's hit is kept in the folder). An entry\n"
     "that fails its checks is removed and is a miss (None)."},
    {"put", (PyCFunction)Store_put, METH_VARARGS,
     "put($self, key, data, /)\n--\n\n"
     "Store data (bytes or a buffer) under key, atomically and durably, in the\n"
     "folder and on every remote that is not read-only; may then evict the least\n"
     "recently used entries to stay under max_bytes."},
    {"explain", (PyCFunction)(void (*)(void))Store_explain, METH_VARARGS | METH_KEYWORDS,
     "explain($self, key, /, *, compiler=None, version=None, options=None, roots=None)\n--\n\n"
     "Look key up as a compiler would, and say why it would miss: a dict with\n"
     "'hit' (bool), 'why' ('hit', 'absent', 'headers', 'toolchain', 'corrupt',\n"
     "'unknown_record', 'collision', 'unverified') and 'detail' (the library's\n"
     "words: which header changed, which flag differs, ...). compiler and\n"
     "version: the toolchain here; options: the flags that would be passed;\n"
     "roots: the include folders, in search order (None: not checked)."},
    {"stats", (PyCFunction)Store_stats, METH_NOARGS,
     "stats($self, /)\n--\n\n"
     "What the folder holds: entries, bytes, max_bytes, temp_files, temp_bytes,\n"
     "and the look-ups of every process that hit and missed (hits, misses)."},
    {"close", (PyCFunction)Store_close, METH_NOARGS,
     "close($self, /)\n--\n\nClose the handle: calls other threads have in flight finish first (close\n"
     "waits for them), and later calls raise ValueError. Idempotent."},
    {"__enter__", (PyCFunction)Store_enter, METH_NOARGS, "__enter__($self, /)\n--\n\nReturn the store itself."},
    {"__exit__", (PyCFunction)Store_exit, METH_VARARGS, "__exit__($self, *exc_info)\n--\n\nClose the store."},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods Store_mapping = {
    .mp_length = (lenfunc)Store_len,
    .mp_subscript = (binaryfunc)Store_getitem,
    .mp_ass_subscript = (objobjargproc)Store_setitem,
};

static PySequenceMethods Store_sequence = {
    .sq_contains = (objobjproc)Store_contains,
};

static PyMemberDef Store_members[] = {
    {"path", T_OBJECT, offsetof(StoreObject, path), READONLY, "The store's folder."},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject pyck_StoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cckey.Store",
    .tp_doc = "Store(path, max_bytes=0, *, remotes=None, read_only=False, sign_key=None, sign_key_file=None,\n"
              "      no_remote=False)\n--\n\n"
              "The store of compiled kernels in folder path (created with its parents),\n"
              "addressed by key, with the remote caches under it that the cckey command\n"
              "would use for this folder: the remote = lines of path/cckey.conf, with its\n"
              "remote_only_read, remote_key_file and remote_max_entry (read by the\n"
              "library, as the command reads them). get asks the folder, then each remote\n"
              "in order, and keeps a remote's hit in the folder; put writes the folder and\n"
              "every remote that is not read-only.\n\n"
              "max_bytes (an int from 0 to 2**64 - 1, else OverflowError) limits the\n"
              "folder's size, least recently used entries going first; 0 means the\n"
              "folder's own limit (max_size in its cckey.conf), else none.\n"
              "remotes: URLs (redis://..., http(s)://...) in place of cckey.conf's remote\n"
              "lines (its key file and entry cap still apply, as with cckey --remote).\n"
              "read_only: never write, the folder or a remote (put raises ArgumentError;\n"
              "a missing folder is an empty store; remote hits are checked in memory).\n"
              "sign_key (bytes or str) or sign_key_file (its bytes less a final newline):\n"
              "the remotes' signing secret, in place of remote_key_file.\n"
              "no_remote: the folder alone, whatever cckey.conf says.\n\n"
              "A bad cckey.conf line or URL raises ArgumentError (naming the file and\n"
              "line, never a value); a folder that cannot be used StorageError. A remote\n"
              "never makes a call fail: one that cannot be reached, or serves an entry\n"
              "that fails its checks or its signature, is a miss and a RuntimeWarning.\n"
              "Safe to share between threads and processes. Usable as a context manager.",
    .tp_basicsize = sizeof(StoreObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Store_init,
    .tp_dealloc = (destructor)Store_dealloc,
    .tp_repr = (reprfunc)Store_repr,
    .tp_methods = Store_methods,
    .tp_members = Store_members,
    .tp_as_mapping = &Store_mapping,
    .tp_as_sequence = &Store_sequence,
    .tp_iter = (getiterfunc)Store_iter,
};
