/* Source handles for OCaml: a custom block owning a cckey_source, freed by
 * the GC. Cckey.make_key keeps one per physical source string in an
 * ephemeron table (cckey.ml), so the handle dies with its string. */
#include "stubs.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Sources at least this long are copied and digested with the runtime lock
 * released, so other OCaml threads run meanwhile. */
#define LONG_SOURCE (64 * 1024)
/* What a handle costs besides its source: the memo the library allocates
 * on first use (CCKEY_MEMO_ENTRIES entries of about 640 bytes). Told to the
 * GC so that many dead handles are collected promptly. */
#define MEMO_BYTES (CCKEY_MEMO_ENTRIES * 640)

void cckey_ml_raise(cckey_status status)
{
    /* Read the detail before anything else can call into cckey. */
    cckey_ml_raise_detail(status, cckey_last_error());
}

void cckey_ml_raise_detail(cckey_status status, const char *detail_text)
{
    CAMLparam0();
    CAMLlocal3(rec, strerror, detail);
    const value *exn = caml_named_value("Cckey.Error");
    detail = caml_copy_string(detail_text);
    strerror = caml_copy_string(cckey_strerror(status));
    if (!exn) caml_failwith(String_val(detail));
    rec = caml_alloc_small(3, 0);
    Field(rec, 0) = Val_int(status);
    Field(rec, 1) = strerror;
    Field(rec, 2) = detail;
    caml_raise_with_arg(*exn, rec);
    CAMLnoreturn;
}

cckey_option *cckey_ml_options(value list, cckey_option stack[CCKEY_ML_STACK_OPTIONS], size_t *n,
                               cckey_option **heap)
{
    size_t count = 0;
    for (value l = list; l != Val_emptylist; l = Field(l, 1)) count++;
    *n = count;
    *heap = NULL;
    cckey_option *v = stack;
    if (count > CCKEY_ML_STACK_OPTIONS) {
        v = *heap = malloc(count * sizeof *v);
        if (!v) caml_raise_out_of_memory();
    }
    size_t i = 0;
    for (value l = list; l != Val_emptylist; l = Field(l, 1), i++) {
        value pair = Field(l, 0);
        v[i].key = cckey_ml_bytes(Field(pair, 0));
        v[i].value = cckey_ml_bytes(Field(pair, 1));
    }
    return v;
}

/* ---- source handles ------------------------------------------------------ */

typedef struct handle {
    cckey_source *src;
    void *copy;   /* the bytes a long source's handle borrows, or NULL */
} handle;

#define Handle_val(v) ((handle *)Data_custom_val(v))

/* Handles alive, for Cckey.Debug.live_sources: how a test sees that a memo
 * entry died with its string. */
static atomic_long live_handles;

static void handle_finalize(value v)
{
    handle *h = Handle_val(v);
    cckey_source_free(h->src);
    free(h->copy);
    if (h->src) atomic_fetch_sub(&live_handles, 1);
    h->src = NULL;
    h->copy = NULL;
}

static struct custom_operations handle_ops = CCKEY_ML_HANDLE_OPS("cckey.source", handle_finalize);

value cckey_ml_source_new(value v_src)
{
    CAMLparam1(v_src);
    CAMLlocal1(v);
    size_t len = caml_string_length(v_src);
    cckey_source *src = NULL;
    void *copy = NULL;
    cckey_status st;
    if (len >= LONG_SOURCE) {
        /* The string may move while the lock is out: digest a copy, which
         * the handle then borrows instead of copying again. */
        copy = malloc(len);
        if (!copy) caml_raise_out_of_memory();
        memcpy(copy, String_val(v_src), len);
        caml_release_runtime_system();
        st = cckey_source_new(&src, (cckey_bytes){copy, len}, CCKEY_SOURCE_BORROW);
        caml_acquire_runtime_system();
    } else {
        st = cckey_source_new(&src, cckey_ml_bytes(v_src), CCKEY_SOURCE_COPY);
    }
    if (st != CCKEY_OK) {
        free(copy);
        cckey_ml_raise(st);
    }
    v = caml_alloc_custom_mem(&handle_ops, sizeof(handle), len + MEMO_BYTES);
    Handle_val(v)->src = src;
    Handle_val(v)->copy = copy;
    atomic_fetch_add(&live_handles, 1);
    CAMLreturn(v);
}

value cckey_ml_source_key(value v_h, value v_dev, value v_name, value v_opts)
{
    CAMLparam4(v_h, v_dev, v_name, v_opts);
    cckey_option stack[CCKEY_ML_STACK_OPTIONS], *heap;
    size_t n;
    cckey_option *opts = cckey_ml_options(v_opts, stack, &n, &heap);
    char key[CCKEY_KEY_LEN + 1];
    /* A memo hit costs less than releasing the lock would; device, name
     * and options are short, so the lock is kept. */
    cckey_status st =
        cckey_source_key(key, Handle_val(v_h)->src, cckey_ml_bytes(v_dev), cckey_ml_bytes(v_name), opts, n);
    free(heap);
    if (st != CCKEY_OK) cckey_ml_raise(st);
    CAMLreturn(caml_alloc_initialized_string(CCKEY_KEY_LEN, key));
}

value cckey_ml_source_digest(value v_h)
{
    CAMLparam1(v_h);
    char hex[CCKEY_HEX_LEN + 1];
    cckey_status st = cckey_source_digest(hex, Handle_val(v_h)->src);
    if (st != CCKEY_OK) cckey_ml_raise(st);
    CAMLreturn(caml_alloc_initialized_string(CCKEY_HEX_LEN, hex));
}

value cckey_ml_live_sources(value unit)
{
    (void)unit;
    return Val_long(atomic_load(&live_handles));
}

value cckey_ml_version(value unit)
{
    CAMLparam1(unit);
    CAMLreturn(caml_copy_string(cckey_version()));
}

value cckey_ml_strerror(value v_status)
{
    CAMLparam1(v_status);
    CAMLreturn(caml_copy_string(cckey_strerror((cckey_status)Int_val(v_status))));
}
