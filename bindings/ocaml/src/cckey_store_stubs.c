/* Cckey.Store: a custom block holding a store_box, which owns a
 * cckey_store. Disk work runs with the runtime lock released, on copies of
 * the OCaml strings. `busy` counts the calls in flight; close refuses new
 * calls and waits for those, so it never frees a handle another thread is
 * using. The box is malloc'ed (the custom block holds only its address):
 * the GC may move the block, and a mutex must stay where it is. */
#include "stubs.h"
#include "cckey_store.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct store_box {
    pthread_mutex_t mu;
    pthread_cond_t idle;   /* busy fell to 0 while closing */
    cckey_store *s;        /* NULL once closed */
    long busy;
    bool closing;
} store_box;

#define Box_val(v) (*(store_box **)Data_custom_val(v))

static void box_finalize(value v)
{
    store_box *b = Box_val(v);   /* no call is in flight: each holds the value */
    if (!b) return;
    cckey_store_close(b->s);
    pthread_cond_destroy(&b->idle);
    pthread_mutex_destroy(&b->mu);
    free(b);
    Box_val(v) = NULL;
}

static struct custom_operations box_ops = CCKEY_ML_HANDLE_OPS("cckey.store", box_finalize);

static cckey_store *enter(value v)
{
    store_box *b = Box_val(v);
    pthread_mutex_lock(&b->mu);
    cckey_store *s = b->closing ? NULL : b->s;
    if (s) b->busy++;
    pthread_mutex_unlock(&b->mu);
    if (!s) caml_invalid_argument("Cckey.Store: the store is closed");
    return s;
}

static void leave(value v)
{
    store_box *b = Box_val(v);
    pthread_mutex_lock(&b->mu);
    if (--b->busy == 0 && b->closing) pthread_cond_broadcast(&b->idle);
    pthread_mutex_unlock(&b->mu);
}

/* A key as the C API takes it; a wrong length or a NUL inside becomes an
 * invalid key the library refuses in its own words. */
static void key_arg(value v, char key[CCKEY_KEY_LEN + 2])
{
    size_t n = caml_string_length(v);
    if (n > CCKEY_KEY_LEN + 1 || !caml_string_is_c_safe(v)) n = 0;
    memcpy(key, String_val(v), n);
    key[n] = 0;
}

/* The remote layers Store.open_ was asked for, copied out of the OCaml heap
 * before the runtime lock is released: opts is (remotes : string array
 * option, read_only : bool, sign_key : string option, no_remote : bool). */
typedef struct layers {
    char **urls;   /* NULL: the folder's cckey.conf remote lines */
    size_t n;
    int read_only, none;
    char *secret;
    size_t secret_len;
} layers;

static void layers_free(layers *l)
{
    for (size_t i = 0; l->urls && i < l->n; i++) free(l->urls[i]);
    free(l->urls);
    if (l->secret) memset(l->secret, 0, l->secret_len);
    free(l->secret);
}

static int layers_of(value v_opts, layers *l)
{
    value v_remotes = Field(v_opts, 0), v_key = Field(v_opts, 2);
    l->read_only = Bool_val(Field(v_opts, 1)), l->none = Bool_val(Field(v_opts, 3));
    if (Is_block(v_remotes)) {
        value arr = Field(v_remotes, 0);
        l->n = Wosize_val(arr);
        if (!(l->urls = calloc(l->n + 1, sizeof *l->urls))) return -1;
        for (size_t i = 0; i < l->n; i++) {
            if (!caml_string_is_c_safe(Field(arr, i))) return -2;
            if (!(l->urls[i] = strdup(String_val(Field(arr, i))))) return -1;
        }
    }
    if (Is_block(v_key)) {
        value k = Field(v_key, 0);
        l->secret_len = caml_string_length(k);
        if (!l->secret_len) return -3;
        if (!(l->secret = malloc(l->secret_len))) return -1;
        memcpy(l->secret, String_val(k), l->secret_len);
    }
    return 0;
}

/* Remote warnings (unreachable, refused, a bad entry served) on stderr: the
 * OCaml runtime cannot be entered from where the library calls this. */
static void remote_warn(void *user, const char *message)
{
    (void)user;
    fprintf(stderr, "cckey remote: %s\n", message);
}

/* The store and its remotes; on failure, why holds the library's words
 * (read before closing the half-made store can change them). */
static cckey_status open_layered(cckey_store **out, const char *dir, uint64_t max, const layers *l, char why[1024])
{
    cckey_status st = l->read_only ? cckey_store_open_read_only(out, dir) : cckey_store_open(out, dir, max);
    if (st == CCKEY_OK && !l->none) {
        cckey_remote_settings set = {.read_only = l->read_only, .warn = remote_warn, .secret = l->secret,
                                     .secret_len = l->secret_len};
        st = cckey_store_add_conf_remotes(*out, (const char *const *)l->urls, l->n, &set);
    }
    if (st != CCKEY_OK) {
        snprintf(why, 1024, "%s", cckey_last_error());
        cckey_store_close(*out);
        *out = NULL;
    }
    return st;
}

value cckey_ml_store_open(value v_dir, value v_max, value v_opts)
{
    CAMLparam3(v_dir, v_max, v_opts);
    CAMLlocal1(v);
    if (!caml_string_is_c_safe(v_dir)) caml_invalid_argument("Cckey.Store.open_: the path contains a NUL byte");
    if (Long_val(v_max) < 0) caml_invalid_argument("Cckey.Store.open_: max_bytes < 0");
    layers l = {0};
    int lr = layers_of(v_opts, &l);
    if (lr < 0) {
        layers_free(&l);
        if (lr == -1) caml_raise_out_of_memory();
        caml_invalid_argument(lr == -2 ? "Cckey.Store.open_: a remote URL contains a NUL byte"
                                       : "Cckey.Store.open_: sign_key is empty");
    }
    char *dir = strdup(String_val(v_dir));
    store_box *b = calloc(1, sizeof *b);
    if (!dir || !b) {
        free(dir), free(b), layers_free(&l);
        caml_raise_out_of_memory();
    }
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->idle, NULL);
    caml_release_runtime_system();
    char why[1024] = "";
    cckey_status st = open_layered(&b->s, dir, (uint64_t)Long_val(v_max), &l, why);
    caml_acquire_runtime_system();
    free(dir);
    layers_free(&l);
    if (st != CCKEY_OK) {
        pthread_cond_destroy(&b->idle);
        pthread_mutex_destroy(&b->mu);
        free(b);
        cckey_ml_raise_detail(st, why);
    }
    v = caml_alloc_custom(&box_ops, sizeof(store_box *), 0, 1);
    Box_val(v) = b;
    CAMLreturn(v);
}

/* Refuse new calls, wait (runtime lock released) for those in flight on
 * other threads, then close. Idempotent. */
value cckey_ml_store_close(value v)
{
    CAMLparam1(v);
    store_box *b = Box_val(v);
    pthread_mutex_lock(&b->mu);
    b->closing = true;
    bool wait = b->busy > 0;
    pthread_mutex_unlock(&b->mu);
    if (wait) {
        caml_release_runtime_system();
        pthread_mutex_lock(&b->mu);
        while (b->busy) pthread_cond_wait(&b->idle, &b->mu);
        pthread_mutex_unlock(&b->mu);
        caml_acquire_runtime_system();
    }
    pthread_mutex_lock(&b->mu);
    cckey_store *s = b->s;
    b->s = NULL;
    pthread_mutex_unlock(&b->mu);
    cckey_store_close(s);
    CAMLreturn(Val_unit);
}

/* Some payload, or None on a miss (no entry, or one that failed its checks
 * and was removed). */
value cckey_ml_store_get(value v, value v_key)
{
    CAMLparam2(v, v_key);
    CAMLlocal2(data, some);
    char key[CCKEY_KEY_LEN + 2];
    key_arg(v_key, key);
    cckey_store *s = enter(v);
    void *buf = NULL;
    size_t len = 0;
    caml_release_runtime_system();
    cckey_status st = cckey_store_get(s, key, &buf, &len);
    caml_acquire_runtime_system();
    leave(v);
    if (st == CCKEY_ERR_NOT_FOUND || st == CCKEY_ERR_CORRUPT) CAMLreturn(Val_none);
    if (st != CCKEY_OK) cckey_ml_raise(st);
    data = caml_alloc_initialized_string(len, buf);
    cckey_store_free_buffer(buf);
    some = caml_alloc_some(data);
    CAMLreturn(some);
}

value cckey_ml_store_put(value v, value v_key, value v_data)
{
    CAMLparam3(v, v_key, v_data);
    char key[CCKEY_KEY_LEN + 2];
    key_arg(v_key, key);
    size_t len = caml_string_length(v_data);
    void *copy = malloc(len ? len : 1);
    if (!copy) caml_raise_out_of_memory();
    memcpy(copy, String_val(v_data), len);
    cckey_store *s = enter(v);
    caml_release_runtime_system();
    cckey_status st = cckey_store_put(s, key, copy, len);
    caml_acquire_runtime_system();
    leave(v);
    free(copy);
    if (st != CCKEY_OK) cckey_ml_raise(st);
    CAMLreturn(Val_unit);
}

value cckey_ml_store_stats(value v)
{
    CAMLparam1(v);
    CAMLlocal1(r);
    cckey_store *s = enter(v);
    cckey_store_usage u;
    caml_release_runtime_system();
    cckey_status st = cckey_store_stats(s, &u);
    caml_acquire_runtime_system();
    leave(v);
    if (st != CCKEY_OK) cckey_ml_raise(st);
    r = caml_alloc_tuple(5);
    Store_field(r, 0, Val_long(u.entries));
    Store_field(r, 1, Val_long(u.bytes));
    /* A folder's limit from cckey.conf may pass max_int (2^62 - 1). */
    Store_field(r, 2, Val_long(u.max_bytes > (uint64_t)Max_long ? (uint64_t)Max_long : u.max_bytes));
    Store_field(r, 3, Val_long(u.temp_files));
    Store_field(r, 4, Val_long(u.temp_bytes));
    CAMLreturn(r);
}
