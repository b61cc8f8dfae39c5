# Fails when a release binary contains a test hook's text (CCKEY_FAULT_...),
# or when the test build lacks it (then the check itself proves nothing).
foreach(bin ${RELEASE} ${RELEASE_CLI})
  file(STRINGS ${bin} hits REGEX "CCKEY_FAULT|cckey_store_test_hook|cckey_md5_count|cckey_testing_|cckey native test engine")
  if(hits)
    message(FATAL_ERROR "${bin} contains test hooks: ${hits}")
  endif()
endforeach()
file(STRINGS ${TESTING} hits REGEX "CCKEY_FAULT_CHUNK")
if(NOT hits)
  message(FATAL_ERROR "${TESTING} lacks the fault hooks: the check above would prove nothing")
endif()
message(STATUS "no test hooks in ${RELEASE} and ${RELEASE_CLI}")
