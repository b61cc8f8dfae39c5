/* Shared by the OCaml stubs: raising Cckey.Error and reading option lists.
 * Only the public API (cckey.h) is used. */
#ifndef CCKEY_ML_STUBS_H
#define CCKEY_ML_STUBS_H

#define CAML_NAME_SPACE
#include <caml/alloc.h>
#include <caml/callback.h>
#include <caml/custom.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>
#include <caml/threads.h>

#include "cckey.h"

/* Raises Cckey.Error {status; strerror; detail} with cckey_last_error() as
 * read now, on this thread. */
void cckey_ml_raise(cckey_status status) __attribute__((noreturn));
/* The same with the detail given: cckey_last_error of another thread. */
void cckey_ml_raise_detail(cckey_status status, const char *detail) __attribute__((noreturn));

/* Up to this many options are passed from the stack; more are malloc'ed. */
#define CCKEY_ML_STACK_OPTIONS 16

/* The options of an OCaml (string * string) list, pointing into the OCaml
 * strings: valid only while the runtime lock is held and nothing is
 * allocated. *heap is set when the array was malloc'ed (free it). */
cckey_option *cckey_ml_options(value list, cckey_option stack[CCKEY_ML_STACK_OPTIONS], size_t *n,
                               cckey_option **heap);

/* Cckey.make_keys' settings (cckey_batch_config_stubs.c): a config for
 * (backend, threads, verify), the last batch's when those match, with the
 * settings recorded for cckey_ml_batch_config_done, which keeps it idle
 * for the next batch (or frees it). */
cckey_status cckey_ml_batch_config(cckey_batch_config **cfg, long settings[3], value v_backend, value v_threads,
                                   value v_verify);
void cckey_ml_batch_config_done(cckey_batch_config *cfg, const long settings[3]);
/* Whether a batch with this backend code runs on the CPU: cpu, or auto
 * with no device that auto may use (asked once per process). */
int cckey_ml_runs_on_cpu(long backend);

/* The custom block operations of a handle: finalised by fin (which frees
 * the C object), never compared, hashed or serialised (the defaults). */
#define CCKEY_ML_HANDLE_OPS(id, fin)                                                                         \
    {                                                                                                        \
        id, fin, custom_compare_default, custom_hash_default, custom_serialize_default,                      \
            custom_deserialize_default, custom_compare_ext_default, custom_fixed_length_default              \
    }

static inline cckey_bytes cckey_ml_bytes(value s)
{
    cckey_bytes b = {String_val(s), caml_string_length(s)};
    return b;
}

#endif
