/* cckey.Source: a cckey_source handle. The source is digested once, when the
 * object is made; keys for it are memoised per (device, name, options). */
#include "pyck.h"

#include <string.h>

/* Sources at least this long are digested with the GIL released. */
#define PYCK_LONG_SOURCE (64 * 1024)

typedef struct {
    PyObject_HEAD
    cckey_source *src;
    PyObject *pinned;   /* the bytes/str whose memory the handle borrows, or NULL */
} SourceObject;

static int Source_init(SourceObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"source", NULL};
    PyObject *obj;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:Source", kwlist, &obj)) return -1;
    if (self->src) {
        PyErr_SetString(PyExc_TypeError, "Source is already initialised");
        return -1;
    }
    pyck_holder h;
    pyck_holder_init(&h, 0);
    cckey_bytes b;
    if (pyck_field(obj, &b, &h, "source", -1) < 0) {
        pyck_holder_release(&h);
        return -1;
    }
    /* bytes and str never change and stay put while referenced: borrow
     * them. A buffer may change later: copy it. */
    int immutable = PyBytes_Check(obj) || PyUnicode_Check(obj);
    unsigned flags = immutable ? CCKEY_SOURCE_BORROW : CCKEY_SOURCE_COPY;
    cckey_source *src = NULL;
    cckey_status st;
    if (b.len >= PYCK_LONG_SOURCE) {
        Py_BEGIN_ALLOW_THREADS
        st = cckey_source_new(&src, b, flags);
        Py_END_ALLOW_THREADS
    } else {
        st = cckey_source_new(&src, b, flags);
    }
    pyck_holder_release(&h);
    if (st != CCKEY_OK) {
        pyck_raise(st);
        return -1;
    }
    self->src = src;
    if (immutable) {
        Py_INCREF(obj);
        self->pinned = obj;
    }
    return 0;
}

static void Source_dealloc(SourceObject *self)
{
    cckey_source_free(self->src);
    Py_XDECREF(self->pinned);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int ready(SourceObject *self)
{
    if (self->src) return 0;
    PyErr_SetString(PyExc_ValueError, "Source was not initialised");
    return -1;
}

static PyObject *Source_key(SourceObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"device", "name", "options", NULL};
    PyObject *dev, *name, *options = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O:key", kwlist, &dev, &name, &options)) return NULL;
    if (ready(self) < 0) return NULL;
    return pyck_key_of(dev, name, NULL, self->src, options);
}

static PyObject *Source_digest(SourceObject *self, void *closure)
{
    (void)closure;
    if (ready(self) < 0) return NULL;
    char hex[CCKEY_HEX_LEN + 1];
    cckey_status st = cckey_source_digest(hex, self->src);
    return st == CCKEY_OK ? PyUnicode_FromStringAndSize(hex, CCKEY_HEX_LEN) : pyck_raise(st);
}

static PyMethodDef Source_methods[] = {
    {"key", (PyCFunction)(void (*)(void))Source_key, METH_VARARGS | METH_KEYWORDS,
     "key($self, device, name, options=None)\n--\n\n"
     "The key of (device, name, this source, options), as make_key would give it.\n"
     "Memoised per (device, name, options): a repeated call computes no MD5.\n"
     "Safe to call from many threads on one Source."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Source_getset[] = {
    {"digest", (getter)Source_digest, NULL, "The hex MD5 digest of the source (32 characters).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject pyck_SourceType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cckey.Source",
    .tp_doc = "Source(source)\n--\n\n"
              "A kernel source, digested once, with a memo of its keys.\n"
              "source is bytes, str (hashed as UTF-8) or a buffer (copied). Sources of\n"
              "64 KiB and more are digested with the GIL released.",
    .tp_basicsize = sizeof(SourceObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Source_init,
    .tp_dealloc = (destructor)Source_dealloc,
    .tp_methods = Source_methods,
    .tp_getset = Source_getset,
};
