/* Status names and the per-thread error detail. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[1024];

const char *cckey_strerror(cckey_status status)
{
    switch (status) {
    case CCKEY_OK: return "success";
    case CCKEY_ERR_INVALID_ARG: return "invalid argument";
    case CCKEY_ERR_NO_MEMORY: return "out of memory";
    case CCKEY_ERR_IO: return "input/output error";
    case CCKEY_ERR_UNAVAILABLE: return "backend unavailable";
    case CCKEY_ERR_DEVICE: return "device error";
    case CCKEY_ERR_VERIFY: return "verification failed: a backend digest differs from the CPU reference";
    case CCKEY_ERR_INTERNAL: return "internal error";
    case CCKEY_ERR_THREAD: return "could not start a thread";
    case CCKEY_ERR_NOT_FOUND: return "not found";
    case CCKEY_ERR_CORRUPT: return "corrupt data";
    case CCKEY_ERR_CANCELLED: return "cancelled";
    case CCKEY_ERR_STALE: return "stale entry (a header or the toolchain changed)";
    case CCKEY_ERR_COLLISION: return "fingerprint mismatch (a possible MD5 collision)";
    }
    return "unknown status";
}

const char *cckey_last_error(void) { return last_error; }

const char *cckey_version(void) { return CCKEY_VERSION_STRING; }

void cckey_clear_error(void) { last_error[0] = '\0'; }

cckey_status cckey_fail(cckey_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}
