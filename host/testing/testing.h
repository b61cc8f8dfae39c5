/* Test hooks: compiled only into test builds (-DCCKEY_TESTING, the
 * cckey_testing library and the cckey-testing CLI), never into the release
 * library. See CMakeLists.txt's CCKEY_HOOKED_SOURCES for the files that
 * carry hooks. */
#ifndef CCKEY_TESTING_H
#define CCKEY_TESTING_H

#ifndef CCKEY_TESTING
#error "host/testing/testing.h is for test builds only (-DCCKEY_TESTING)"
#endif

#include "cckey.h"

#include <stdbool.h>

/* Device faults for batches with cfg: fail with CCKEY_ERR_DEVICE just before
 * chunk `chunk` is launched (-1: never), flip a bit of each chunk's first
 * digest (a device that is silently wrong), fail the kernel build through
 * the backend's real build-error path. */
cckey_status cckey_testing_set_faults(cckey_batch_config *cfg, long chunk, bool corrupt, bool build);

#endif
