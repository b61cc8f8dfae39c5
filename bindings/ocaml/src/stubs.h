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

/* Up to this many options are passed from the stack; more are malloc'ed. */
#define CCKEY_ML_STACK_OPTIONS 16

/* The options of an OCaml (string * string) list, pointing into the OCaml
 * strings: valid only while the runtime lock is held and nothing is
 * allocated. *heap is set when the array was malloc'ed (free it). */
cckey_option *cckey_ml_options(value list, cckey_option stack[CCKEY_ML_STACK_OPTIONS], size_t *n,
                               cckey_option **heap);

static inline cckey_bytes cckey_ml_bytes(value s)
{
    cckey_bytes b = {String_val(s), caml_string_length(s)};
    return b;
}

#endif
