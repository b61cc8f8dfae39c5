/* Entry files, the one format that the store keeps in its folder and the
 * remotes move by name: the header (versions 2 to 5), the record section,
 * the checksum, the builds (variants), tuple fingerprints and signatures.
 * Nothing here knows a store folder or a remote: it reads and writes bytes
 * and file descriptors. */
#ifndef CCKEY_ENTRY_H
#define CCKEY_ENTRY_H

#include "cckey_store.h"
#include "../md5/md5.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Entry format, version 4 (uncompressed) and 5 (compressed payload). All
 * integers little-endian. An entry file is the fixed header, then the record
 * section, then the payload:
 *   0   8  magic "CCKEYBIN"
 *   8   4  format version (4)
 *   12  4  header size (CCKEY_ENTRY_HEADER, 192)
 *   16  8  payload length P
 *   24  16 checksum: MD5 of the header (this field zeroed), the records and
 *          the payload's piece digests: the MD5 of each CCKEY_ENTRY_PIECE
 *          (4096) bytes of the payload in order, the last piece shorter,
 *          none for an empty payload, 16 bytes each
 *   40  131 the key
 *   171 1  zero
 *   172 4  record section length R (at most CCKEY_ENTRY_MAX_RECORDS)
 *   176 4  the number of builds (variants) the entry holds, V (0: one build
 *          and no VARIANT records, as in version 3)
 *   180 4  version 5: the payload's encoding, 1 = zstd (one frame holding
 *          its size); version 4: zero
 *   184 8  version 5: S, the payload's length as stored (the frame);
 *          version 4: zero (S = P)
 *   192 R  records
 *   192+R S payload (version 5: compressed)
 * The checksum covers everything, so a flipped byte anywhere is caught. The
 * pieces are hashed side by side (multi-buffer MD5), several times faster
 * than one MD5 over the payload, which bounded every remote transfer.
 *
 * Variants (new in version 4; ccache's manifests): one key can have several
 * builds, each read its own headers (edit a header, warm, restore it: the
 * first build is still there). Each build is a VARIANT record followed by
 * that build's own records (toolchain, dependencies, fingerprint), newest
 * build first; the payload is the builds' binaries back to back in the same
 * order. A look-up serves the newest build whose records match. A put with
 * records (cckey_store_put_meta) adds its build in front and keeps the older
 * ones it does not replace (the same records byte for byte), at most
 * CCKEY_MAX_VARIANTS, and, under a size limit, only while the entry stays
 * within an eighth of it: the oldest go first.
 *
 * Records are typed and self-delimiting (type-length-value), back to back,
 * with no padding:
 *   0 2 type     (CCKEY_REC_*; 0 is invalid)
 *   2 2 flags    bit 0 CCKEY_REC_CRITICAL: a checked look-up that does not
 *                know this type must not serve the entry (a miss). Other
 *                bits are zero. Unknown non-critical records are skipped.
 *   4 4 length L of the value
 *   8 L value
 * A type may repeat (one DEPENDENCY record per file). Writers append records
 * and never reorder them, so a record may cover the bytes before it (e.g. an
 * authenticating record placed last covers header fields, earlier records
 * and payload). New kinds of records are new types, not a new version:
 *   1 TOOL_COMPILER  the compiler's name, UTF-8 ("NVRTC", "OpenCL")
 *   2 TOOL_VERSION   its version as it reports it, UTF-8
 *   3 TOOL_OPTIONS   the flags as passed to it, each followed by a NUL
 *   4 DEPENDENCY     a file the build read besides the source (critical):
 *                      0 4 root: index into the look-up's roots (see
 *                          cckey.h), or 0xFFFFFFFF for an absolute path
 *                      4 1 1 = the file existed with this content,
 *                          0 = it did not exist (a search-path probe that
 *                          missed: if it appears, the build would differ)
 *                      5 3 zeros
 *                      8 8 its size (0 when absent)
 *                      16 16 MD5 of its content (zeros when absent)
 *                      32 .. its path relative to the root, no NUL
 *   5 FINGERPRINT    SHA-256 of the whole tuple and the build's DEPENDENCY
 *                    records (see entry/fingerprint.h): a look-up that has
 *                    the tuple serves the build only when it matches (else
 *                    CCKEY_ERR_COLLISION)
 *   6 SIGNATURE      HMAC-SHA-256 under a remote's shared secret, always the
 *                    last record, of the entry as a whole (see entry/sign.c)
 *   7 VARIANT        starts a build (critical), 24 bytes:
 *                      0 8 where its binary starts in the payload
 *                      8 8 its length
 *                      16 8 when it was built (ns since 1970, UTC)
 *                    The first record of a version 4 entry with V > 0; the
 *                    binaries are back to back, the first at 0, the last
 *                    ending at P.
 *   8 UNVERIFIED     the build's dependency list is incomplete (critical):
 *                    an include no text scan or preprocessor resolved,
 *                    UTF-8, e.g. "k.cl:2: #include HDR". A checked look-up
 *                    never serves such a build (CCKEY_MISS_UNVERIFIED).
 *   9..  free; the next kind of record takes the next number.
 * Compression (version 5, new): a folder set to compress (cckey.conf
 * compression = zstd, compression_level; cckey_store_set_compression)
 * writes the payload as one zstd frame when that is smaller, else version 4
 * as before; uncompressed puts still write version 4, which every earlier
 * release reads. The checksum (and a signature) covers the payload as
 * served, uncompressed, so a read decompresses, then checks: a frame that
 * does not decode, or decodes to other bytes, is a corrupt entry (a miss
 * that cckey_store_verify removes). The file moves as it is: remotes and
 * bundles carry the compressed bytes, and a reader without compression set
 * reads them all the same.
 * Version 3 and 2 entries (no variants: the records and the payload are one
 * build; version 2's checksum one MD5 over the header, records and whole
 * payload) are still read, so a cache warmed by an earlier release keeps its
 * hits; a put keeps such a build as an older variant. Puts write version 4.
 * Version 1 entries (a 192-byte header with no record section) are misses: a
 * look-up removes them like any entry that fails its checks. */
#define CCKEY_ENTRY_MAGIC "CCKEYBIN"
#define CCKEY_ENTRY_VERSION 5u        /* the newest: a compressed payload */
#define CCKEY_ENTRY_VERSION_PLAIN 4u  /* what an uncompressed put writes */
/* The versions a read accepts: 5, 4, 3 and 2. */
static inline bool cckey_entry_version_read(uint32_t v) { return v >= 2u && v <= CCKEY_ENTRY_VERSION; }
#define CCKEY_ENTRY_ENCODING_AT 180u
#define CCKEY_ENTRY_STORED_AT 184u
enum { CCKEY_ENCODING_NONE = 0, CCKEY_ENCODING_ZSTD = 1 };
static inline uint32_t cckey_get_le32(const uint8_t *p);
static inline uint64_t cckey_get_le64(const uint8_t *p);
/* A header's payload encoding: CCKEY_ENCODING_NONE before version 5. */
static inline uint32_t cckey_entry_encoding(const uint8_t *hdr)
{
    return cckey_get_le32(hdr + 8) >= 5 ? cckey_get_le32(hdr + CCKEY_ENTRY_ENCODING_AT) : CCKEY_ENCODING_NONE;
}
/* The payload's length in the file: compressed, or its own (at 16). */
static inline uint64_t cckey_entry_stored_len(const uint8_t *hdr)
{
    return cckey_entry_encoding(hdr) ? cckey_get_le64(hdr + CCKEY_ENTRY_STORED_AT) : cckey_get_le64(hdr + 16);
}
#define CCKEY_ENTRY_PIECE 4096u
#define CCKEY_ENTRY_HEADER 192u
#define CCKEY_ENTRY_SUM_AT 24u
#define CCKEY_ENTRY_KEY_AT 40u
#define CCKEY_ENTRY_RECLEN_AT 172u
#define CCKEY_ENTRY_VARIANTS_AT 176u
#define CCKEY_VARIANTS_READ_MAX 1024u   /* the most a read accepts (a later release may keep more) */
#define CCKEY_VARIANT_FIXED 24u
#define CCKEY_ENTRY_MAX_RECORDS (64u << 20)

enum {
    CCKEY_REC_TOOL_COMPILER = 1,
    CCKEY_REC_TOOL_VERSION = 2,
    CCKEY_REC_TOOL_OPTIONS = 3,
    CCKEY_REC_DEPENDENCY = 4,
    CCKEY_REC_FINGERPRINT = 5,   /* SHA-256 of the tuple (entry/fingerprint.h) */
    CCKEY_REC_SIGNATURE = 6,     /* HMAC-SHA-256 for a shared remote, always last (entry/sign.c) */
    CCKEY_REC_VARIANT = 7,       /* starts one build of the key (version 4) */
    CCKEY_REC_UNVERIFIED = 8,    /* the build's dependency list is incomplete */
};
#define CCKEY_REC_CRITICAL 1u
#define CCKEY_REC_HEAD 8u
#define CCKEY_DEP_FIXED 32u

/* An entry's record section, as read (malloc'ed bytes), with the header
 * fields that say how to split it into builds. */
typedef struct cckey_records {
    uint8_t *bytes;
    uint32_t len;
    uint32_t version;    /* the entry's format version */
    uint32_t variants;   /* its header's build count (0 before version 4) */
} cckey_records;

/* Records are well formed: each fits, no type 0, no unknown flag bits. */
cckey_status cckey_records_check_form(const uint8_t *rec, uint32_t len);
/* Encode meta (may be NULL: no records) into a malloc'ed section; then an
 * UNVERIFIED record holding unverified, when that is not NULL. */
cckey_status cckey_records_encode(const cckey_entry_meta *meta, const char *unverified, uint8_t **out,
                                  uint32_t *len);
/* The record at *off: *type, *flags, its value *val and *vlen, and *off
 * moved past it; false at the end (or at a record that does not fit). */
bool cckey_record_next(const uint8_t *rec, uint32_t len, uint32_t *off, unsigned *type, unsigned *flags,
                       const uint8_t **val, uint32_t *vlen);
/* Whether a record section holds a record of type want. */
bool cckey_records_has(const uint8_t *rec, uint32_t len, unsigned want);

/* One build of an entry (entry/variants.c; choosing one is the store's). */
typedef struct cckey_variant {
    uint32_t rec_at, rec_len;   /* its records (after its VARIANT record) in the section */
    uint64_t at, len;           /* its binary in the payload */
    int64_t built_ns;           /* when it was built; 0 when not recorded (versions 2, 3) */
} cckey_variant;
/* The builds of an entry whose records r were read and whose payload is plen
 * bytes, newest first (*out malloc'ed, *n at least 1); a trailing SIGNATURE
 * belongs to the entry, not to a build. CCKEY_ERR_CORRUPT when the VARIANT
 * records do not add up. */
cckey_status cckey_variants_split(const cckey_records *r, uint64_t plen, cckey_variant **out, uint32_t *n);
/* The number of VARIANT records in a record section. */
uint32_t cckey_variants_count(const uint8_t *rec, uint32_t len);
/* Where a trailing SIGNATURE record starts in a record section (it belongs
 * to the entry as a whole, not to a build), or len when there is none. */
uint32_t cckey_records_signature_at(const uint8_t *rec, uint32_t len);

/* Entry file name: the key with ':' -> '-'. */
#define CCKEY_NAME_LEN CCKEY_KEY_LEN
/* A key as cckey_make_key writes it: lowercase hex fields joined by ':'. */
bool cckey_entry_key_ok(const char *key);
/* File name of a key (CCKEY_NAME_LEN characters and a NUL). */
void cckey_entry_name_of(char name[CCKEY_NAME_LEN + 1], const char *key);
/* The key of an entry file name; false if the name is not an entry's. */
bool cckey_entry_key_of(char key[CCKEY_KEY_LEN + 1], const char *name);
/* The shard folder name of a key: two hex digits and a NUL. */
void cckey_entry_shard_of(char shard[3], const char *key);

/* Fill a header for key, records and payload (computes the checksum). */
void cckey_entry_header(uint8_t hdr[CCKEY_ENTRY_HEADER], const char *key, const void *records, uint32_t rec_len,
                        const void *payload, uint64_t len);
/* The same for a payload stored compressed: encoding (CCKEY_ENCODING_*)
 * and the stored length, the checksum over the len bytes at payload
 * (uncompressed). CCKEY_ENCODING_NONE is cckey_entry_header. */
void cckey_entry_header_stored(uint8_t hdr[CCKEY_ENTRY_HEADER], const char *key, const void *records,
                               uint32_t rec_len, const void *payload, uint64_t len, uint32_t encoding,
                               uint64_t stored);
/* An entry's bytes in memory made uncompressed (version 4, the same
 * records and payload), in place: *entry realloc'ed, *n updated. Checked
 * first as cckey_entry_check; an uncompressed entry is left as it is. */
cckey_status cckey_entry_make_plain(uint8_t **entry, size_t *n, const char *key);

/* Compression (compress.c): the payload as one zstd frame at level, when
 * that is smaller (*out malloc'ed, *out_len); false when it is not, or
 * cannot be (no memory: the put writes it uncompressed). */
bool cckey_compress(int level, const void *data, size_t len, uint8_t **out, size_t *out_len);
/* The frame at in (n bytes) decoded into exactly len bytes at out;
 * CCKEY_ERR_CORRUPT when it does not decode to that many. */
cckey_status cckey_decompress(const uint8_t *in, size_t n, uint8_t *out, size_t len);
/* Whether zstd has this level (false when built without libzstd). */
bool cckey_compress_level_ok(int level);

/* Read and check the entry open on fd, which must be named for key. On
 * CCKEY_OK *payload (malloc'ed, non-NULL) and *len hold the payload, and
 * *rec (when rec is not NULL; free rec->bytes) the record section; when
 * payload is NULL only the checks run. CCKEY_ERR_CORRUPT says why in
 * cckey_last_error(). */
cckey_status cckey_entry_read(int fd, const char *key, void **payload, size_t *len, cckey_records *rec);

/* The same checks on an entry file's n bytes held in memory (what a remote
 * sent): CCKEY_OK and *payload_at (may be NULL), where the payload starts;
 * the record section is entry[CCKEY_ENTRY_HEADER, *payload_at). */
cckey_status cckey_entry_check(const uint8_t *entry, size_t n, const char *key, size_t *payload_at);
/* An entry received in two buffers (cckey_entry_got, below): the same
 * checks, and where its parts are. */
typedef struct cckey_entry_view {
    const uint8_t *rec;
    uint32_t rec_len;
    const uint8_t *payload;       /* uncompressed */
    size_t len;
    uint32_t version, variants;   /* as cckey_records */
    uint8_t *owned;               /* the payload, when decompressed here (malloc'ed: free it), else NULL */
} cckey_entry_view;
/* An entry as a remote's get receives it, each byte read once into its
 * final place: the header and records in front, the payload in a buffer of
 * its own that a look-up hands over as it is. Both malloc'ed (payload may
 * be NULL when len is 0). A receiver splits where cckey_entry_front_len
 * says; one that cannot (no length known in advance) puts all in front. */
typedef struct cckey_entry_got {
    uint8_t *front;
    size_t front_len;
    uint8_t *payload;
    size_t len;
} cckey_entry_got;
cckey_status cckey_entry_check_parts(const cckey_entry_got *e, const char *key, cckey_entry_view *out);
/* The checks an entry's fixed header alone allows (magic, version, key,
 * padding, lengths), before its body is read: CCKEY_OK and *total, the
 * size of the whole entry file it announces. */
cckey_status cckey_entry_check_head(const uint8_t hdr[CCKEY_ENTRY_HEADER], const char *key, uint64_t *total);
/* How many of an entry's total bytes a receiver puts in front (header and
 * records), from its first min(total, CCKEY_ENTRY_HEADER) bytes at head. */
size_t cckey_entry_front_len(const uint8_t *head, size_t total);
void cckey_entry_got_free(cckey_entry_got *e);

/* Write all len bytes at data to fd (EINTR retried); false with errno. */
bool cckey_entry_write_all(int fd, const void *data, size_t len);

/* Little-endian helpers. */
static inline void cckey_put_le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static inline uint16_t cckey_get_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline void cckey_put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void cckey_put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t cckey_get_le32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static inline uint64_t cckey_get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

#endif
