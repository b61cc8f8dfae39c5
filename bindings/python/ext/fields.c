/* Python objects to cckey_bytes, without copying: bytes and str (whose UTF-8
 * form CPython caches in the object) are pointed into directly, buffers
 * through a held view. */
#include "pyck.h"

#include <errno.h>
#include <string.h>

void pyck_holder_init(pyck_holder *h, int keep_refs)
{
    memset(h, 0, sizeof *h);
    h->keep_refs = keep_refs;
}

void pyck_holder_release(pyck_holder *h)
{
    for (size_t i = 0; i < h->n_objs; i++) Py_DECREF(h->objs[i]);
    PyMem_Free(h->objs);
    h->objs = NULL;
    h->n_objs = h->cap_objs = 0;
    while (h->views) {
        pyck_view_block *b = h->views;
        for (int i = 0; i < b->used; i++) PyBuffer_Release(&b->view[i]);
        h->views = b->next;
        PyMem_Free(b);
    }
}

static int keep(pyck_holder *h, PyObject *o)
{
    if (!h->keep_refs) return 0;
    if (h->n_objs == h->cap_objs) {
        size_t cap = h->cap_objs ? 2 * h->cap_objs : 256;
        PyObject **v = PyMem_Realloc(h->objs, cap * sizeof *v);
        if (!v) {
            PyErr_NoMemory();
            return -1;
        }
        h->objs = v;
        h->cap_objs = cap;
    }
    Py_INCREF(o);
    h->objs[h->n_objs++] = o;
    return 0;
}

static Py_buffer *new_view(pyck_holder *h)
{
    if (!h->views || h->views->used == PYCK_VIEW_BLOCK) {
        pyck_view_block *b = PyMem_Calloc(1, sizeof *b);
        if (!b) {
            PyErr_NoMemory();
            return NULL;
        }
        b->next = h->views;
        h->views = b;
    }
    return &h->views->view[h->views->used];
}

static int type_error(PyObject *o, const char *what, Py_ssize_t index)
{
    if (index >= 0)
        PyErr_Format(PyExc_TypeError, "tuple %zd: %s must be bytes, str or a buffer, not %.100s", index,
                     what, Py_TYPE(o)->tp_name);
    else
        PyErr_Format(PyExc_TypeError, "%s must be bytes, str or a buffer, not %.100s", what,
                     Py_TYPE(o)->tp_name);
    return -1;
}

int pyck_field(PyObject *o, cckey_bytes *out, pyck_holder *h, const char *what, Py_ssize_t index)
{
    if (PyBytes_Check(o)) {
        out->ptr = PyBytes_AS_STRING(o);
        out->len = (size_t)PyBytes_GET_SIZE(o);
        return keep(h, o);
    }
    if (PyUnicode_Check(o)) {
        Py_ssize_t len;
        const char *s = PyUnicode_AsUTF8AndSize(o, &len);   /* cached in o */
        if (!s) return -1;   /* e.g. a lone surrogate: UnicodeEncodeError */
        out->ptr = s;
        out->len = (size_t)len;
        return keep(h, o);
    }
    if (!PyObject_CheckBuffer(o)) return type_error(o, what, index);
    Py_buffer *view = new_view(h);
    if (!view) return -1;
    /* PyBUF_SIMPLE: one contiguous run of bytes, or an error for a strided
     * view (whose bytes would not be the field's). */
    if (PyObject_GetBuffer(o, view, PyBUF_SIMPLE) < 0) return -1;
    h->views->used++;
    out->ptr = view->len ? view->buf : NULL;
    out->len = (size_t)view->len;
    return 0;
}

static int add_option(pyck_options *opts, PyObject *k, PyObject *v, pyck_holder *h, Py_ssize_t index)
{
    if (opts->n == opts->cap) {
        size_t cap = opts->cap ? 2 * opts->cap : 64;
        cckey_option *nv = PyMem_Realloc(opts->v, cap * sizeof *nv);
        if (!nv) {
            PyErr_NoMemory();
            return -1;
        }
        opts->v = nv;
        opts->cap = cap;
    }
    cckey_option *o = &opts->v[opts->n];
    if (pyck_field(k, &o->key, h, "option key", index) < 0) return -1;
    if (pyck_field(v, &o->value, h, "option value", index) < 0) return -1;
    opts->n++;
    return 0;
}

static int add_pair(pyck_options *opts, PyObject *pair, pyck_holder *h, Py_ssize_t index)
{
    if (PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2)
        return add_option(opts, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1), h, index);
    /* A 2-character str is a sequence too, but never meant as a pair. */
    int text = PyUnicode_Check(pair) || PyBytes_Check(pair) || PyByteArray_Check(pair);
    PyObject *seq = text ? NULL : PySequence_Fast(pair, "");
    if (!seq || PySequence_Fast_GET_SIZE(seq) != 2) {
        Py_XDECREF(seq);
        PyErr_Clear();
        if (index >= 0)
            PyErr_Format(PyExc_TypeError, "tuple %zd: each option must be a (key, value) pair, not %.100s",
                         index, Py_TYPE(pair)->tp_name);
        else
            PyErr_Format(PyExc_TypeError, "each option must be a (key, value) pair, not %.100s",
                         Py_TYPE(pair)->tp_name);
        return -1;
    }
    /* A list pair could be changed by another thread while the GIL is
     * released: keep its items, not the list. */
    int rc = add_option(opts, PySequence_Fast_GET_ITEM(seq, 0), PySequence_Fast_GET_ITEM(seq, 1), h, index);
    Py_DECREF(seq);
    return rc;
}

int pyck_options_add(PyObject *o, pyck_options *opts, pyck_holder *h, Py_ssize_t index)
{
    if (o == Py_None) return 0;
    if (PyDict_Check(o)) {
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(o, &pos, &k, &v))
            if (add_option(opts, k, v, h, index) < 0) return -1;
        return 0;
    }
    if (PyBytes_Check(o) || PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "options must be (key, value) pairs or a mapping, not %.100s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    /* Lists and tuples first: asking them for .items() would cost an
     * AttributeError on every call. */
    PyObject *items = !PyList_Check(o) && !PyTuple_Check(o) && PyMapping_Check(o) &&
                              PyObject_HasAttrString(o, "items")
                          ? PyObject_CallMethod(o, "items", NULL)
                          : (Py_INCREF(o), o);
    if (!items) return -1;
    PyObject *seq = PySequence_Fast(items, "options must be (key, value) pairs or a mapping");
    Py_DECREF(items);
    if (!seq) return -1;
    int rc = 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) rc = add_pair(opts, PySequence_Fast_GET_ITEM(seq, i), h, index);
    Py_DECREF(seq);
    return rc;
}

void pyck_options_free(pyck_options *opts)
{
    PyMem_Free(opts->v);
    memset(opts, 0, sizeof *opts);
}

PyObject *pyck_raise(cckey_status status)
{
    return pyck_raise_detail(status, cckey_last_error());
}

/* The class of a failure: an argument the library refused is also a
 * ValueError, a folder or file it could not use also an OSError. */
static PyObject *error_class(cckey_status status)
{
    if (status == CCKEY_ERR_INVALID_ARG) return pyck_ArgumentError;
    if (status == CCKEY_ERR_IO) return pyck_StorageError;
    return pyck_Error;
}

static int set_fields(PyObject *exc, cckey_status status, const char *detail, int set_strerror)
{
    PyObject *st = PyLong_FromLong((long)status);
    PyObject *se = PyUnicode_FromString(cckey_strerror(status));
    PyObject *de = PyUnicode_DecodeUTF8(detail, (Py_ssize_t)strlen(detail), "replace");
    int rc = st && se && de && PyObject_SetAttrString(exc, "status", st) == 0 &&
                     (!set_strerror || PyObject_SetAttrString(exc, "strerror", se) == 0) &&
                     PyObject_SetAttrString(exc, "detail", de) == 0
                 ? 0
                 : -1;
    Py_XDECREF(st);
    Py_XDECREF(se);
    Py_XDECREF(de);
    return rc;
}

/* An OSError's own fields: errno (err, else EIO), strerror (the library's
 * words) and filename (a str, or NULL). */
static PyObject *new_os_error(PyObject *cls, PyObject *msg, int err, PyObject *filename)
{
    return PyObject_CallFunction(cls, "iOO", err ? err : EIO, msg, filename ? filename : Py_None);
}

static PyObject *raise_with(cckey_status status, const char *detail, int err, PyObject *filename)
{
    const char *name = cckey_strerror(status);
    PyObject *msg = *detail ? PyUnicode_FromFormat("%s: %s", name, detail) : PyUnicode_FromString(name);
    if (!msg) return NULL;
    PyObject *cls = error_class(status);
    PyObject *exc = cls == pyck_StorageError ? new_os_error(cls, msg, err, filename) : PyObject_CallOneArg(cls, msg);
    Py_DECREF(msg);
    if (exc && set_fields(exc, status, detail, cls != pyck_StorageError) == 0) PyErr_SetObject(cls, exc);
    Py_XDECREF(exc);
    return NULL;
}

PyObject *pyck_raise_os(cckey_status status, int err, PyObject *filename)
{
    return raise_with(status, cckey_last_error(), err, filename);
}

PyObject *pyck_raise_detail(cckey_status status, const char *detail)
{
    return raise_with(status, detail, 0, NULL);
}

PyObject *pyck_key_str(const char *key)
{
    PyObject *s = PyUnicode_New(CCKEY_KEY_LEN, 127);
    if (s) memcpy(PyUnicode_DATA(s), key, CCKEY_KEY_LEN);
    return s;
}

PyObject *pyck_key_of(PyObject *dev, PyObject *name, PyObject *src, const cckey_source *source, PyObject *options)
{
    pyck_holder h;
    pyck_holder_init(&h, 0);   /* the arguments pin their objects */
    pyck_options opts = {0};
    cckey_bytes d, n, s = {0};
    PyObject *result = NULL;
    if (pyck_field(dev, &d, &h, "device", -1) < 0 || pyck_field(name, &n, &h, "name", -1) < 0 ||
        (src && pyck_field(src, &s, &h, "source", -1) < 0) || pyck_options_add(options, &opts, &h, -1) < 0)
        goto out;
    char key[CCKEY_KEY_LEN + 1];
    cckey_status st = src ? cckey_make_key(key, d, n, s, opts.v, opts.n)
                          : cckey_source_key(key, source, d, n, opts.v, opts.n);
    result = st == CCKEY_OK ? pyck_key_str(key) : pyck_raise(st);
out:
    pyck_options_free(&opts);
    pyck_holder_release(&h);
    return result;
}
