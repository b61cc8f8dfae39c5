#include "support.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

uint64_t cckey_test_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

size_t cckey_test_below(uint64_t *state, size_t n) { return n ? (size_t)(cckey_test_rand(state) % n) : 0; }

void cckey_test_fill(uint64_t *state, void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len) {
        uint64_t r = cckey_test_rand(state);
        size_t k = len < 8 ? len : 8;
        memcpy(p, &r, k);
        p += k;
        len -= k;
    }
}

void cckey_test_md5_hex(const void *data, size_t len, char out[CCKEY_HEX_LEN + 1])
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dl = 0;
    if (!EVP_Digest(len ? data : "", len, d, &dl, EVP_md5(), NULL) || dl != 16) abort();
    for (int i = 0; i < 16; i++) sprintf(out + 2 * i, "%02x", d[i]);
}

char *cckey_test_src_entry(const char *dir, const char *src)
{
    char key[CCKEY_KEY_LEN + 1];
    cckey_test_src_key(key, src);
    static char path[512];
    cckey_test_entry_path(path, sizeof path, dir, key);
    return path;
}

void cckey_test_entry_seal(uint8_t *file, size_t len)
{
    memset(file + 24, 0, 16);
    size_t rec = (size_t)file[172] | (size_t)file[173] << 8 | (size_t)file[174] << 16 | (size_t)file[175] << 24;
    size_t body = 192 + rec;
    if (body > len) abort();
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dl = 0;
    if (!ctx || !EVP_DigestInit_ex(ctx, EVP_md5(), NULL) || !EVP_DigestUpdate(ctx, file, body)) abort();
    if (file[8] < 3 && !EVP_DigestUpdate(ctx, file + body, len - body)) abort();
    for (size_t at = body; file[8] >= 3 && at < len; at += 4096) {
        size_t n = len - at < 4096 ? len - at : 4096;
        if (!EVP_Digest(file + at, n, d, &dl, EVP_md5(), NULL) || !EVP_DigestUpdate(ctx, d, 16)) abort();
    }
    if (!EVP_DigestFinal_ex(ctx, d, &dl) || dl != 16) abort();
    EVP_MD_CTX_free(ctx);
    memcpy(file + 24, d, 16);
}

static int ref_cmp(cckey_bytes a, cckey_bytes b)
{
    const unsigned char *x = a.ptr, *y = b.ptr;
    for (size_t i = 0; i < a.len && i < b.len; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return a.len < b.len ? -1 : a.len > b.len;
}

void cckey_test_ref_key(char out[CCKEY_KEY_LEN + 1], cckey_bytes device, cckey_bytes name,
                        cckey_bytes source, const cckey_option *options, size_t n)
{
    const cckey_option **sorted = malloc((n ? n : 1) * sizeof *sorted);
    char *canon = malloc(n * 66 + 1);
    if (!sorted || !canon) abort();
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        /* Strictly greater only: equal keys keep their order. */
        while (j && ref_cmp(sorted[j - 1]->key, options[i].key) > 0) {
            sorted[j] = sorted[j - 1];
            j--;
        }
        sorted[j] = &options[i];
    }
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        char h[33];
        if (i) canon[len++] = ',';
        cckey_test_md5_hex(sorted[i]->key.ptr, sorted[i]->key.len, h);
        memcpy(canon + len, h, 32);
        canon[len + 32] = '=';
        cckey_test_md5_hex(sorted[i]->value.ptr, sorted[i]->value.len, h);
        memcpy(canon + len + 33, h, 32);
        len += 65;
    }
    const cckey_bytes field[4] = {device, name, source, {canon, len}};
    char f[4][33];
    for (int i = 0; i < 4; i++) cckey_test_md5_hex(field[i].ptr, field[i].len, f[i]);
    snprintf(out, CCKEY_KEY_LEN + 1, "%s:%s:%s:%s", f[0], f[1], f[2], f[3]);
    free(sorted);
    free(canon);
}

void *cckey_test_alloc(cckey_test_arena *a, size_t len)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        a->blocks = realloc(a->blocks, a->cap * sizeof *a->blocks);
        if (!a->blocks) abort();
    }
    void *p = malloc(len ? len : 1);
    if (!p) abort();
    a->blocks[a->n++] = p;
    return p;
}

cckey_bytes cckey_test_random_bytes(cckey_test_arena *a, uint64_t *state, size_t len)
{
    if (len == 0 && (cckey_test_rand(state) & 1)) return (cckey_bytes){NULL, 0};
    void *p = cckey_test_alloc(a, len);
    cckey_test_fill(state, p, len);
    return (cckey_bytes){p, len};
}

cckey_bytes cckey_test_dup(cckey_test_arena *a, cckey_bytes b)
{
    if (!b.len) return b;
    void *p = cckey_test_alloc(a, b.len);
    memcpy(p, b.ptr, b.len);
    return (cckey_bytes){p, b.len};
}

void cckey_test_arena_free(cckey_test_arena *a)
{
    for (size_t i = 0; i < a->n; i++) free(a->blocks[i]);
    free(a->blocks);
    *a = (cckey_test_arena){0};
}

char *cckey_test_read_file(const char *path, size_t *len)
{
    if (len) *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
        if (fread(buf, 1, (size_t)n, f) == (size_t)n) {
            buf[n] = '\0';
            if (len) *len = (size_t)n;
        } else {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    return buf;
}

bool cckey_test_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

bool cckey_test_write_text(const char *dir, const char *name, const char *text)
{
    char path[512];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return false;
    return cckey_test_write_file(path, text, strlen(text));
}

bool cckey_test_make_dir(char dir[64], const char *tag)
{
    if (snprintf(dir, 64, "/tmp/cckey-%s-XXXXXX", tag) >= 64) return false;
    return mkdtemp(dir) != NULL;
}

bool cckey_test_sub_dir(char *out, size_t cap, const char *dir, const char *sub)
{
    if (snprintf(out, cap, "%s/%s", dir, sub) >= (int)cap) return false;
    struct stat st;
    return (mkdir(out, 0777) == 0 || errno == EEXIST) && stat(out, &st) == 0 && S_ISDIR(st.st_mode);
}

bool cckey_test_remove_tree(const char *path)
{
    char cmd[1100];
    if (snprintf(cmd, sizeof cmd, "rm -rf '%s'", path) >= (int)sizeof cmd) return false;
    return system(cmd) == 0;
}

cckey_test_tuple cckey_test_random_tuple(cckey_test_arena *a, uint64_t *rng, size_t max_len)
{
    cckey_test_tuple t;
    t.device = cckey_test_random_bytes(a, rng, cckey_test_below(rng, max_len + 1));
    t.name = cckey_test_random_bytes(a, rng, cckey_test_below(rng, max_len / 2 + 1));
    t.n = cckey_test_below(rng, 5);
    t.opts = cckey_test_alloc(a, (t.n ? t.n : 1) * sizeof *t.opts);
    for (size_t i = 0; i < t.n; i++) {
        uint8_t *k = cckey_test_alloc(a, 1);
        k[0] = (uint8_t)("ab"[cckey_test_below(rng, 2)]);
        t.opts[i].key = (cckey_bytes){k, cckey_test_below(rng, 2)};
        t.opts[i].value = cckey_test_random_bytes(a, rng, cckey_test_below(rng, max_len / 4 + 1));
    }
    return t;
}

void cckey_test_store_key(char key[CCKEY_KEY_LEN + 1], int i)
{
    char name[32];
    snprintf(name, sizeof name, "kernel_%d", i);
    cckey_test_ref_key(key, (cckey_bytes){"dev", 3}, (cckey_bytes){name, strlen(name)}, (cckey_bytes){"src", 3},
                       NULL, 0);
}

void cckey_test_src_key(char key[CCKEY_KEY_LEN + 1], const char *src)
{
    cckey_test_ref_key(key, (cckey_bytes){"dev", 3}, (cckey_bytes){"k", 1}, (cckey_bytes){src, strlen(src)}, NULL, 0);
}

void cckey_test_entry_path(char *out, size_t cap, const char *dir, const char *key)
{
    char h[CCKEY_HEX_LEN + 1], name[CCKEY_KEY_LEN + 1];
    cckey_test_md5_hex(key, CCKEY_KEY_LEN, h);
    for (int i = 0; i < CCKEY_KEY_LEN; i++) name[i] = key[i] == ':' ? '-' : key[i];
    name[CCKEY_KEY_LEN] = '\0';
    snprintf(out, cap, "%s/%.2s/%s", dir, h, name);
}
