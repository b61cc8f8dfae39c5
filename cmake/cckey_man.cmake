# Writes cckey.1: help2man over `cckey --help`, with a COMMANDS section made
# of each command's own --help and the hand-written sections of INCLUDE.
# Inputs: CLI, HELP2MAN, VERSION, INCLUDE, OUT.
execute_process(COMMAND ${CLI} --help OUTPUT_VARIABLE _top RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "cckey --help failed (${_rc})")
endif()
# The commands are the indented lines between "Commands:" and the blank line.
string(REGEX MATCH "Commands:\n(([ ]+[a-z]+[^\n]*\n)+)" _block "${_top}")
string(REGEX MATCHALL "\n  [a-z]+" _names "\n${CMAKE_MATCH_1}")
get_filename_component(_dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${_dir}")
file(READ "${INCLUDE}" _include)
set(_h2m "${_include}\n[COMMANDS]\n")
foreach(_n IN LISTS _names)
  string(STRIP "${_n}" _n)
  execute_process(COMMAND ${CLI} ${_n} --help OUTPUT_VARIABLE _help RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "cckey ${_n} --help failed (${_rc})")
  endif()
  # Verbatim in roff: backslashes escaped, no line starting with a control
  # character.
  string(REPLACE "\\" "\\e" _help "${_help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" _help "${_help}")
  string(APPEND _h2m ".SS ${_n}\n.nf\n${_help}.fi\n")
endforeach()
file(WRITE "${_dir}/cckey.h2m" "${_h2m}")
execute_process(COMMAND ${HELP2MAN} --no-info --version-string=${VERSION}
                        "--name=standardized compile-cache keys for GPU kernels"
                        --include=${_dir}/cckey.h2m --output=${OUT} ${CLI}
                RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${_rc})")
endif()
