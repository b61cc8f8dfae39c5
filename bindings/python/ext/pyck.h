/* The Python binding's shared pieces: turning Python objects into the
 * cckey_bytes and cckey_option arrays the C API takes, keeping those objects
 * alive while the GIL is released, and raising cckey.Error. Only the public
 * API (cckey.h) is used. */
#ifndef PYCK_H
#define PYCK_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cckey.h"

/* What a batch of conversions must keep alive until the C call returns:
 * references to the objects whose memory the cckey_bytes point into, and
 * the buffer views of buffer-protocol objects (which also pin a
 * bytearray's size). Views live in fixed blocks so they never move. */
#define PYCK_VIEW_BLOCK 32
typedef struct pyck_view_block {
    struct pyck_view_block *next;
    int used;
    Py_buffer view[PYCK_VIEW_BLOCK];
} pyck_view_block;

typedef struct pyck_holder {
    PyObject **objs;        /* owned references; NULL when the caller pins them */
    size_t n_objs, cap_objs;
    int keep_refs;          /* 1: take a reference to every str/bytes field */
    pyck_view_block *views;
} pyck_holder;

void pyck_holder_init(pyck_holder *h, int keep_refs);
void pyck_holder_release(pyck_holder *h);

/* A growable array of options shared by every tuple of a batch. */
typedef struct pyck_options {
    cckey_option *v;
    size_t n, cap;
} pyck_options;

/* One field: bytes, str (as UTF-8) or a C-contiguous buffer. what names the
 * field in a TypeError ("device", "option key", ...); index is the tuple's
 * position in a batch, or -1. Returns 0, or -1 with an exception set. */
int pyck_field(PyObject *o, cckey_bytes *out, pyck_holder *h, const char *what, Py_ssize_t index);

/* Appends the options (None, a mapping, or an iterable of (key, value)
 * pairs, in order) to opts. Returns 0, or -1 with an exception set. */
int pyck_options_add(PyObject *o, pyck_options *opts, pyck_holder *h, Py_ssize_t index);
void pyck_options_free(pyck_options *opts);
/* One key from a call's arguments (make_key, Source.key): of src's bytes, or
 * where src is NULL of the digested source. A new str, or NULL with the
 * error set. */
PyObject *pyck_key_of(PyObject *dev, PyObject *name, PyObject *src, const cckey_source *source, PyObject *options);

/* Sets cckey.Error for status, with cckey_strerror and cckey_last_error
 * (read now, on this thread). Returns NULL for `return pyck_raise(st);`. */
PyObject *pyck_raise(cckey_status status);
/* The same, with the detail given (cckey_last_error of another thread). */
PyObject *pyck_raise_detail(cckey_status status, const char *detail);
/* As pyck_raise, with the errno and the file (a str, may be NULL) an
 * OSError (cckey.StorageError, for CCKEY_ERR_IO) carries. */
PyObject *pyck_raise_os(cckey_status status, int err, PyObject *filename);

/* The module's types and error, created in module.c. */
extern PyObject *pyck_Error, *pyck_ArgumentError, *pyck_StorageError;
extern PyTypeObject pyck_SourceType;
extern PyTypeObject pyck_StoreType;

PyObject *pyck_make_keys(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char pyck_make_keys_doc[];
PyObject *pyck_devices(PyObject *self, PyObject *unused);
extern const char pyck_devices_doc[];
PyObject *pyck_backends(PyObject *self, PyObject *unused);
extern const char pyck_backends_doc[];
PyObject *pyck_features(PyObject *self, PyObject *unused);
extern const char pyck_features_doc[];

/* A key as a Python str (131 ASCII characters). */
PyObject *pyck_key_str(const char *key);

#endif
