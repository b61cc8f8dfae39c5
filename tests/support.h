/* Helpers shared by the Criterion suites: a seeded generator (so a failure
 * reproduces) and a reference key made with OpenSSL, which shares no code
 * with the library. */
#ifndef CCKEY_TEST_SUPPORT_H
#define CCKEY_TEST_SUPPORT_H

#include "cckey.h"
#include "cckey_store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* splitmix64: tiny, and good enough to spread lengths and bytes. */
uint64_t cckey_test_rand(uint64_t *state);
/* A value in [0, n). */
size_t cckey_test_below(uint64_t *state, size_t n);
void cckey_test_fill(uint64_t *state, void *buf, size_t len);

/* hex(md5(data)) by OpenSSL, NUL-terminated. */
void cckey_test_md5_hex(const void *data, size_t len, char out[CCKEY_HEX_LEN + 1]);

/* The key recipe from its definition, on OpenSSL's MD5 and a plain stable
 * insertion sort: the oracle for the suites that do not use the Python
 * vectors. */
void cckey_test_ref_key(char out[CCKEY_KEY_LEN + 1], cckey_bytes device, cckey_bytes name,
                        cckey_bytes source, const cckey_option *options, size_t n);

/* The store suites' stock tuple i: the reference key of device "dev",
 * name "kernel_<i>", source "src" and no options. */
void cckey_test_store_key(char key[CCKEY_KEY_LEN + 1], int i);
/* The reference key of device "dev", name "k", the given source and no
 * options: the tuple of the suites whose sources include headers. */
void cckey_test_src_key(char key[CCKEY_KEY_LEN + 1], const char *src);
/* Where a store in dir keeps key's entry, from the documented layout
 * (shard = first two hex digits of md5(key), ':' written as '-'), with
 * OpenSSL's MD5: the suites check the layout, not the library's idea of it. */
void cckey_test_entry_path(char *out, size_t cap, const char *dir, const char *key);

/* cckey_test_entry_path of cckey_test_src_key(src) in dir, in a static
 * buffer that the next call overwrites. */
char *cckey_test_src_entry(const char *dir, const char *src);

/* An entry file's checksum as the documented format defines it for the
 * version at file + 8, computed with OpenSSL's MD5 (the independent oracle):
 * MD5 over the 192-byte header with the checksum field (24..40) zeroed, the
 * records (length at 172), then for version 3 the MD5 of each 4096-byte piece
 * of the payload, for earlier versions the payload itself. Writes it at
 * file + 24. */
void cckey_test_entry_seal(uint8_t *file, size_t len);

/* A pool of heap blocks freed together, for random tuples' fields. */
typedef struct cckey_test_arena {
    void **blocks;
    size_t n, cap;
} cckey_test_arena;
void *cckey_test_alloc(cckey_test_arena *a, size_t len);
/* len random bytes in a fresh block. For len 0 it gives {NULL, 0} half of
 * the time and a non-NULL empty string otherwise: both forms are legal. */
cckey_bytes cckey_test_random_bytes(cckey_test_arena *a, uint64_t *state, size_t len);
/* A copy of b at a fresh address. */
cckey_bytes cckey_test_dup(cckey_test_arena *a, cckey_bytes b);
void cckey_test_arena_free(cckey_test_arena *a);

/* The whole file at path with a NUL after it (so text reads as a string),
 * or NULL when it cannot be read; *len gets its length (when len is not
 * NULL). */
char *cckey_test_read_file(const char *path, size_t *len);

/* Writes len bytes to path (created or truncated); whether all of it
 * reached the file. */
bool cckey_test_write_file(const char *path, const void *data, size_t len);

/* Writes text to dir/name (created or truncated); whether all of it reached
 * the file. */
bool cckey_test_write_text(const char *dir, const char *name, const char *text);

/* A fresh folder /tmp/cckey-TAG-XXXXXX, its name in dir; false when it
 * cannot be made. */
bool cckey_test_make_dir(char dir[64], const char *tag);
/* dir/sub in out (cap bytes), made as a folder; whether it is one now. */
bool cckey_test_sub_dir(char *out, size_t cap, const char *dir, const char *sub);
/* Removes path and everything below it; whether that worked. */
bool cckey_test_remove_tree(const char *path);

/* A key's fields but the source, random: fields up to max_len bytes (the
 * name half that, option values a quarter), up to 4 options whose keys are
 * "", "a" or "b", so that equal keys, whose order matters, come up. */
typedef struct cckey_test_tuple {
    cckey_bytes device, name;
    cckey_option *opts;
    size_t n;
} cckey_test_tuple;
cckey_test_tuple cckey_test_random_tuple(cckey_test_arena *a, uint64_t *rng, size_t max_len);

/* ---- in support_store.c: these call the library ---- */

/* One process's look-ups in the store in dir: hits of present, then misses
 * of absent. 0 when each gave what it should, 1 when the store did not
 * open, 2 when a look-up gave another answer (an exit status for a child). */
int cckey_test_look(const char *dir, const char *present, const char *absent, int hits, int misses);

/* cckey_test_look in a forked child, whose exit status is its result; the
 * child's pid, or -1 when fork failed. */
pid_t cckey_test_spawn_look(const char *dir, const char *present, const char *absent, int hits, int misses);
/* Waits for n children: whether each was there and exited 0 (the status of
 * one that did not goes to stderr). */
bool cckey_test_reap(int n);

/* The store in dir, opened, when verify removes nothing and no temporary
 * file is left (what a crash or a race must never leave); *ok gets the
 * count of sound entries. NULL otherwise, with the reason on stderr. */
cckey_store *cckey_test_open_sound(const char *dir, uint64_t *ok);

#endif
