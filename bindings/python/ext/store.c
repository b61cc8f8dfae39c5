/* cckey.Store: the on-disk store of compiled kernels. Every call that
 * touches the disk runs with the GIL released; `busy` (changed only under
 * the GIL) counts those calls, and close() refuses new ones and waits for
 * them, so it never frees a handle another thread is using. */
#include "pyck.h"
#include "cckey_store.h"

#include <pthread.h>
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

static int Store_init(StoreObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"path", "max_bytes", NULL};
    PyObject *path_obj;
    unsigned long long max_bytes = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|O&:Store", kwlist, PyUnicode_FSConverter, &path_obj,
                                     max_bytes_arg, &max_bytes))
        return -1;
    if (self->store || self->closing) {
        Py_DECREF(path_obj);
        PyErr_SetString(PyExc_TypeError, self->store ? "Store is already open" : "Store is being closed");
        return -1;
    }
    if (!self->sync_ready) {
        pthread_mutex_init(&self->mu, NULL);
        pthread_cond_init(&self->idle, NULL);
        self->sync_ready = true;
    }
    const char *dir = PyBytes_AS_STRING(path_obj);
    if (strlen(dir) != (size_t)PyBytes_GET_SIZE(path_obj)) {
        Py_DECREF(path_obj);
        PyErr_SetString(PyExc_ValueError, "path contains a NUL byte");
        return -1;
    }
    cckey_store *s = NULL;
    cckey_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cckey_store_open(&s, dir, (uint64_t)max_bytes);
    Py_END_ALLOW_THREADS
    if (st != CCKEY_OK) {
        Py_DECREF(path_obj);
        pyck_raise(st);
        return -1;
    }
    self->store = s;
    self->path = PyUnicode_DecodeFSDefault(dir);
    Py_DECREF(path_obj);
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

static PyObject *Store_get(StoreObject *self, PyObject *arg)
{
    char key[CCKEY_KEY_LEN + 2];
    if (key_arg(arg, key) < 0 || enter(self) < 0) return NULL;
    void *buf = NULL;
    size_t len = 0;
    cckey_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cckey_store_get(self->store, key, &buf, &len);
    Py_END_ALLOW_THREADS
    leave(self);
    PyObject *r;
    if (st == CCKEY_OK) r = PyBytes_FromStringAndSize(buf, (Py_ssize_t)len);
    else if (st == CCKEY_ERR_NOT_FOUND || st == CCKEY_ERR_CORRUPT) r = (Py_INCREF(Py_None), Py_None);
    else r = pyck_raise(st);
    cckey_store_free_buffer(buf);
    return r;
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
    Py_BEGIN_ALLOW_THREADS
    st = cckey_store_put(self->store, key, data.buf, (size_t)data.len);
    Py_END_ALLOW_THREADS
    leave(self);
    PyBuffer_Release(&data);
    if (st != CCKEY_OK) return pyck_raise(st);
    Py_RETURN_NONE;
}

static PyObject *Store_stats(StoreObject *self, PyObject *unused)
{
    (void)unused;
    if (enter(self) < 0) return NULL;
    cckey_store_usage u;
    cckey_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cckey_store_stats(self->store, &u);
    Py_END_ALLOW_THREADS
    leave(self);
    if (st != CCKEY_OK) return pyck_raise(st);
    return Py_BuildValue("{sKsKsKsKsK}", "entries", (unsigned long long)u.entries, "bytes",
                         (unsigned long long)u.bytes, "max_bytes", (unsigned long long)u.max_bytes,
                         "temp_files", (unsigned long long)u.temp_files, "temp_bytes",
                         (unsigned long long)u.temp_bytes);
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
     "get(key) -> bytes | None\n\n"
     "The payload stored under key (a 131-character key), or None when there is\n"
     "none. An entry that fails its checks is removed and is a miss (None)."},
    {"put", (PyCFunction)Store_put, METH_VARARGS,
     "put(key, data) -> None\n\n"
     "Store data (bytes or a buffer) under key, atomically and durably; may then\n"
     "evict the least recently used entries to stay under max_bytes."},
    {"stats", (PyCFunction)Store_stats, METH_NOARGS,
     "stats() -> dict\n\n"
     "What the folder holds: entries, bytes, max_bytes, temp_files, temp_bytes."},
    {"close", (PyCFunction)Store_close, METH_NOARGS,
     "close() -> None\n\nClose the handle: calls other threads have in flight finish first (close\n"
     "waits for them), and later calls raise ValueError. Idempotent."},
    {"__enter__", (PyCFunction)Store_enter, METH_NOARGS, "Return the store itself."},
    {"__exit__", (PyCFunction)Store_exit, METH_VARARGS, "Close the store."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef Store_members[] = {
    {"path", T_OBJECT, offsetof(StoreObject, path), READONLY, "The store's folder."},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject pyck_StoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cckey.Store",
    .tp_doc = "Store(path, max_bytes=0)\n\n"
              "The on-disk store of compiled kernels in folder path (created with its\n"
              "parents), addressed by key. max_bytes (an int from 0 to 2**64 - 1, else\n"
              "OverflowError) limits the folder's size, least recently used entries\n"
              "going first; 0 means the folder's own limit (max_size in its cckey.conf),\n"
              "else none. Safe to share between threads and processes. Usable as a\n"
              "context manager.",
    .tp_basicsize = sizeof(StoreObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Store_init,
    .tp_dealloc = (destructor)Store_dealloc,
    .tp_repr = (reprfunc)Store_repr,
    .tp_methods = Store_methods,
    .tp_members = Store_members,
};
