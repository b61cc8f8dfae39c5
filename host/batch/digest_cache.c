/* The blocks' shared digests of long strings (see digest_cache.h). */
#include "digest_cache.h"

#include <stdlib.h>
#include <string.h>

int cckey_digest_cache_init(cckey_digest_cache *c)
{
    c->slots = NULL;
    return pthread_mutex_init(&c->lock, NULL) == 0 ? 0 : -1;
}

void cckey_digest_cache_free(cckey_digest_cache *c)
{
    free(c->slots);
    c->slots = NULL;
    pthread_mutex_destroy(&c->lock);
}

static inline size_t slot_of(uint64_t hash) { return (size_t)(hash >> 20) & (CCKEY_DIGEST_CACHE_SLOTS - 1); }

size_t cckey_digest_cache_find(cckey_digest_cache *c, const cckey_msg *msgs, uint8_t (*out)[CCKEY_MD5_DIGEST],
                               uint8_t *done, size_t *miss, uint64_t *hash, size_t count)
{
    size_t kept = 0;
    pthread_mutex_lock(&c->lock);   /* once a block */
    for (size_t k = 0; k < count; k++) {
        size_t i = miss[k];
        const cckey_digest_slot *s = c->slots ? &c->slots[slot_of(hash[k])] : NULL;
        if (s && s->ptr && s->hash == hash[k] && s->len == msgs[i].len &&
            (s->ptr == msgs[i].ptr || memcmp(s->ptr, msgs[i].ptr, s->len) == 0)) {
            memcpy(out[i], s->dig, CCKEY_MD5_DIGEST);
            done[i] = 1;
            continue;
        }
        miss[kept] = i;
        hash[kept++] = hash[k];
    }
    pthread_mutex_unlock(&c->lock);
    return kept;
}

void cckey_digest_cache_put(cckey_digest_cache *c, const cckey_msg *msgs, const size_t *miss, const uint64_t *hash,
                            size_t count, const uint8_t (*out)[CCKEY_MD5_DIGEST])
{
    if (!count) return;
    pthread_mutex_lock(&c->lock);
    if (!c->slots) c->slots = calloc(CCKEY_DIGEST_CACHE_SLOTS, sizeof *c->slots);
    for (size_t k = 0; c->slots && k < count; k++) {
        cckey_digest_slot *s = &c->slots[slot_of(hash[k])];
        s->ptr = msgs[miss[k]].ptr;
        s->len = msgs[miss[k]].len;
        s->hash = hash[k];
        memcpy(s->dig, out[miss[k]], CCKEY_MD5_DIGEST);
    }
    pthread_mutex_unlock(&c->lock);
}
