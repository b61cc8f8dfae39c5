/* In-flight claims: which process is compiling which build right now, so
 * that warms sharing one cache folder compile each build once.
 *
 * A claim is the file DIR/claims/ID, created on demand, holding the
 * owner's "host pid", and locked (an open-file-description lock, which
 * NFS carries too) for as long as the owner compiles. The lock is the
 * truth, the text only names the owner in messages: a process that dies
 * loses its lock with it, so a claim nobody holds is stale whatever its
 * file says, and the next claimer takes it over. A finished owner removes
 * the file before it lets go of the lock; a claimer that got the lock on a
 * file no longer at its path tries again. Where the folder takes no files
 * or no locks, claims are off and every process builds what it misses, as
 * before. */
#ifndef CCKEY_WARM_CLAIMS_H
#define CCKEY_WARM_CLAIMS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct warm_claims {
    char dir[PATH_MAX];   /* DIR/claims */
    char owner[300];      /* "host pid", written into each claim */
    bool off;             /* the folder takes no claims: build without them */
} warm_claims;

typedef struct warm_claim {
    int fd;               /* -1: none held */
    char path[PATH_MAX];
} warm_claim;

typedef enum { WARM_CLAIM_TAKEN, WARM_CLAIM_BUSY, WARM_CLAIM_OFF } warm_claim_result;

/* Claims under the cache folder store_dir; off (never an error) where the
 * folder cannot hold them. */
void warm_claims_init(warm_claims *c, const char *store_dir);
/* Take the claim on id (a file name: hex digits and '-') without waiting:
 * TAKEN (held in *out), BUSY (another live process holds it; its "host pid"
 * in owner), or OFF (claims do not work here: build anyway). */
warm_claim_result warm_claim_try(warm_claims *c, const char *id, warm_claim *out, char *owner, size_t owner_len);
/* The same, waiting while another process holds it: TAKEN or OFF. */
warm_claim_result warm_claim_wait(warm_claims *c, const char *id, warm_claim *out);
/* Remove the claim's file, then let the lock go. A claim not held: nothing. */
void warm_claim_release(warm_claim *cl);

#endif
