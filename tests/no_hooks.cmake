# Fails when a release binary contains the testing library's code: a test
# hook's text (CCKEY_FAULT_..., the native engine's name) or a symbol of
# host/testing/ (cckey_testing_..., cckey_md5_count, cckey_native_...); or
# when the test build lacks them (then the check itself proves nothing). The
# release sources' hook tables are data (NULL slots, named *_hooks), which
# the testing library fills in: their names are no hook code.
set(_hook_text "CCKEY_FAULT|cckey_md5_count|cckey_testing_|cckey_native_|cckey native test engine")
foreach(bin ${RELEASE} ${RELEASE_CLI})
  file(STRINGS ${bin} hits REGEX "${_hook_text}")
  if(hits)
    message(FATAL_ERROR "${bin} contains test hooks: ${hits}")
  endif()
endforeach()
foreach(want CCKEY_FAULT_CHUNK cckey_testing_set_faults cckey native test engine)
  file(STRINGS ${TESTING} hits REGEX "${want}")
  if(NOT hits)
    message(FATAL_ERROR "${TESTING} lacks '${want}': the check above would prove nothing")
  endif()
endforeach()
message(STATUS "no test hooks in ${RELEASE} and ${RELEASE_CLI}")
