/*
 * cckey_advanced.h — MAY CHANGE BEFORE 1.0.
 *
 * What a tool built beside the library needs and a key user does not:
 * device tuning (how a device backend runs a batch; never what key it
 * gives), doors into the drivers the library loads, the CPU features the
 * library detected, and engine checks.
 * These functions are exported and follow cckey.h's rules, but unlike
 * cckey.h and cckey_store.h their names and behaviour may change in any
 * minor release until 1.0 (xxHash fences off its unstable API the same way).
 */
#ifndef CCKEY_ADVANCED_H
#define CCKEY_ADVANCED_H

#include "cckey.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Device tuning                                                             */
/* ------------------------------------------------------------------------ */

/* Device settings. The library reads no environment variable for these
 * (the cckey CLI maps CCKEY_GPU_CHUNK_BYTES, CCKEY_GPU_LONG_BYTES,
 * CCKEY_GPU_CPU_SHARE, CCKEY_OPENCL_DEVICE and CCKEY_CUDA_DEVICE onto
 * them). They change how a device backend runs a batch, never a key. */

/** Packed bytes per device chunk, 64 to 1 GiB; 0 restores the default
 *  (64 MiB). Small chunks mean more launches: tests use them to get many
 *  chunks cheaply. */
CCKEY_API cckey_status cckey_batch_config_set_chunk_bytes(cckey_batch_config *cfg, size_t bytes);
/** The longest message a device takes, 0 to 256 MiB (default 256 KiB):
 *  longer ones are hashed on host threads, where one long message does not
 *  hold up a whole work-group. */
CCKEY_API cckey_status cckey_batch_config_set_long_bytes(cckey_batch_config *cfg, size_t bytes);
/** Whether host threads share a device batch (non-zero, the default: they
 *  hash from one end while the device takes chunks from the other), or
 *  leave the device everything but the long messages (0: for measuring
 *  the device alone). */
CCKEY_API cckey_status cckey_batch_config_set_device_share(cckey_batch_config *cfg, int share);
/** The chunk size in effect (cckey_batch_config_set_chunk_bytes); 0 for a
 *  NULL config. */
CCKEY_API size_t cckey_batch_config_chunk_bytes(const cckey_batch_config *cfg);
/** The long-message threshold in effect; 0 for a NULL config. */
CCKEY_API size_t cckey_batch_config_long_bytes(const cckey_batch_config *cfg);

/* ------------------------------------------------------------------------ */
/* Driver doors                                                              */
/* ------------------------------------------------------------------------ */

/** The function `name` (e.g. "clBuildProgram", "cuGetErrorName")
 *  of the driver this library loads for kind, for a tool that drives the
 *  runtime itself beside the library (`cckey warm` builds OpenCL programs
 *  through it) and so shares the library's one runtime, loaded from the
 *  path cckey_set_driver_library set. Loads the driver on first use, as the
 *  backend does. Cast the address to the function's own type.
 *  @return the address; NULL with the reason in cckey_last_error when kind
 *          has no driver (CCKEY_ERR_INVALID_ARG), the backend is not
 *          compiled in, the driver does not load, or it lacks the function
 *          (CCKEY_ERR_UNAVAILABLE). */
CCKEY_API void *cckey_driver_symbol(cckey_backend_kind kind, const char *name);

/** The symbolic name of an OpenCL status code, e.g. "CL_BUILD_PROGRAM_FAILURE"
 *  for -11 (OpenCL has no call that names its own codes; CUDA's driver has,
 *  cuGetErrorName). A static string; "CL_<unknown>" for a code it does not
 *  know. */
CCKEY_API const char *cckey_opencl_status_name(int status);

/* ------------------------------------------------------------------------ */
/* CPU features                                                              */
/* ------------------------------------------------------------------------ */

/* Bits of cckey_cpu_features. */
#define CCKEY_CPU_SSE2 (1u << 0)
#define CCKEY_CPU_AVX2 (1u << 1)
#define CCKEY_CPU_AVX512F (1u << 2)
#define CCKEY_CPU_AVX512BW (1u << 3)
#define CCKEY_CPU_AVX512VBMI2 (1u << 4)
#define CCKEY_CPU_BMI2 (1u << 5)
#define CCKEY_CPU_NEON (1u << 6)

/**
 * The CPU features this process may use, detected once per process: those
 * the CPU reports and the OS saves the registers of, less those the build
 * leaves out (CCKEY_NO_SSE2, CCKEY_NO_AVX2, CCKEY_NO_AVX512, CCKEY_NO_NEON),
 * narrowed to the instruction set CCKEY_FORCE_ISA names when this CPU has
 * it ("scalar": none; "sse2": SSE2 alone; "avx2": no AVX-512; "avx512": all;
 * "neon": NEON alone). For a tool's own SIMD code beside the library's (the
 * cckey CLI's manifest scanner), so that both follow one detection and one
 * switch. A CCKEY_CPU_* bit mask; 0 on a CPU with none of them.
 */
CCKEY_API unsigned cckey_cpu_features(void);

/**
 * CCKEY_FORCE_ISA as the library read it, once per process (the one place
 * it is read), so that a tool can say why it is not in effect: NULL when
 * unset or empty, else the value, which may name no instruction set or one
 * this CPU lacks (then ignored: cckey_cpu_isa gives what is in use).
 */
CCKEY_API const char *cckey_cpu_forced_isa(void);

/* ------------------------------------------------------------------------ */
/* Engine checks                                                             */
/* ------------------------------------------------------------------------ */

/**
 * The MD5 digest of each of n messages, computed on the backend cfg names
 * (CCKEY_BACKEND_CPU, _OPENCL or _CUDA, never AUTO) with cfg's threads and
 * device settings, the way cckey_make_keys digests a batch's fields, but
 * with no CPU fallback and no verification: a device failure is returned,
 * not hidden. For checking an engine against a reference (cckey selftest
 * compares with cckey_digest_*). n = 0 checks only that the backend can
 * run here.
 * @return CCKEY_OK; CCKEY_ERR_INVALID_ARG (AUTO, NULL arguments, a
 *         {NULL, len > 0} message); CCKEY_ERR_UNAVAILABLE with the reason
 *         in cckey_last_error (not compiled in, no driver, no device);
 *         CCKEY_ERR_DEVICE; CCKEY_ERR_NO_MEMORY; CCKEY_ERR_THREAD. On error
 *         the contents of out are unspecified.
 */
CCKEY_API cckey_status cckey_backend_digests(const cckey_batch_config *cfg, const cckey_bytes *msgs, size_t n,
                                             unsigned char (*out)[CCKEY_DIGEST_LEN]);

#ifdef __cplusplus
}
#endif
#endif /* CCKEY_ADVANCED_H */
