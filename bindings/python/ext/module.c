/* The cckey._cckey extension module: make_key, the error type, version(),
 * and the registration of make_keys (batch.c), devices() and backends()
 * (devices.c), Source (source.c) and Store (store.c). */
#include "pyck.h"

#include <stdio.h>
#include <string.h>

PyObject *pyck_Error, *pyck_ArgumentError, *pyck_StorageError;

static PyObject *make_key(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"device", "name", "source", "options", NULL};
    PyObject *dev, *name, *src, *options = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|O:make_key", kwlist, &dev, &name, &src, &options))
        return NULL;
    return pyck_key_of(dev, name, src, NULL, options);
}

static PyObject *version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyUnicode_FromString(cckey_version());
}

static PyMethodDef methods[] = {
    {"make_key", (PyCFunction)(void (*)(void))make_key, METH_VARARGS | METH_KEYWORDS,
     "make_key(device, name, source, options=None)\n--\n\n"
     "The 131-character key of one kernel:\n"
     "hex(md5(device)):hex(md5(name)):hex(md5(source)):hex(md5(canon(options))).\n\n"
     "Fields are bytes, str (hashed as UTF-8) or buffer objects. options is an\n"
     "iterable of (key, value) pairs in any order (equal keys keep their order)\n"
     "or a mapping. For many keys of one source use Source; for batches use\n"
     "make_keys."},
    {"make_keys", (PyCFunction)(void (*)(void))pyck_make_keys, METH_VARARGS | METH_KEYWORDS, pyck_make_keys_doc},
    {"devices", pyck_devices, METH_NOARGS, pyck_devices_doc},
    {"backends", pyck_backends, METH_NOARGS, pyck_backends_doc},
    {"features", pyck_features, METH_NOARGS, pyck_features_doc},
    {"version", version, METH_NOARGS, "version()\n--\n\nThe version of the cckey library linked in (a str)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cckey._cckey",
    .m_doc = "Standardized compile-cache keys for GPU kernels (the C extension; import cckey).",
    .m_size = -1,
    .m_methods = methods,
};

static PyObject *new_error(PyObject *m, const char *name, const char *doc, PyObject *bases)
{
    PyObject *dict = Py_BuildValue("{sissss}", "status", 0, "strerror", "", "detail", "");
    if (!dict) return NULL;
    char full[64];
    snprintf(full, sizeof full, "cckey.%s", name);
    PyObject *cls = PyErr_NewExceptionWithDoc(full, doc, bases, dict);
    Py_DECREF(dict);
    if (!cls) return NULL;
    Py_INCREF(cls);
    if (PyModule_AddObject(m, name, cls) < 0) {
        Py_DECREF(cls);
        Py_DECREF(cls);
        return NULL;
    }
    return cls;
}

static int add_errors(PyObject *m)
{
    pyck_Error = new_error(m, "Error",
                           "A cckey library call failed.\n\n"
                           "status: the cckey_status code (int); strerror: cckey_strerror(status);\n"
                           "detail: cckey_last_error() at the time of the failure (may be '').\n"
                           "Subclasses: ArgumentError (also ValueError), StorageError (also OSError).",
                           NULL);
    if (!pyck_Error) return -1;
    PyObject *bases = Py_BuildValue("(OO)", pyck_Error, PyExc_ValueError);
    pyck_ArgumentError = bases ? new_error(m, "ArgumentError",
                                           "The library refused an argument: a malformed key, URL or setting\n"
                                           "(status 1, CCKEY_ERR_INVALID_ARG). Also a ValueError.",
                                           bases)
                               : NULL;
    Py_XDECREF(bases);
    bases = pyck_ArgumentError ? Py_BuildValue("(OO)", pyck_Error, PyExc_OSError) : NULL;
    pyck_StorageError = bases ? new_error(m, "StorageError",
                                          "A folder or file the library could not use: missing, not a folder,\n"
                                          "unwritable (status 3, CCKEY_ERR_IO). Also an OSError, with errno\n"
                                          "(EIO where the library's call did not say), strerror (the library's\n"
                                          "words) and filename (the store's folder, where known).",
                                          bases)
                              : NULL;
    Py_XDECREF(bases);
    return pyck_StorageError ? 0 : -1;
}

PyMODINIT_FUNC PyInit__cckey(void)
{
    if (PyType_Ready(&pyck_SourceType) < 0 || PyType_Ready(&pyck_StoreType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&pyck_SourceType);
    Py_INCREF(&pyck_StoreType);
    if (add_errors(m) < 0 || PyModule_AddObject(m, "Source", (PyObject *)&pyck_SourceType) < 0 ||
        PyModule_AddObject(m, "Store", (PyObject *)&pyck_StoreType) < 0 ||
        PyModule_AddIntConstant(m, "KEY_LEN", CCKEY_KEY_LEN) < 0 ||
        PyModule_AddStringConstant(m, "__version__", cckey_version()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
