# The man page (help2man over the CLI's own --help texts, so it cannot drift
# from them) and the bash and zsh completion, all installed with the CLI.
find_program(CCKEY_HELP2MAN help2man)
if(CCKEY_HELP2MAN)
  set(_cckey_man ${CMAKE_CURRENT_BINARY_DIR}/man/cckey.1)
  add_custom_command(OUTPUT ${_cckey_man}
    COMMAND ${CMAKE_COMMAND} -DCLI=$<TARGET_FILE:cckey_cli> -DHELP2MAN=${CCKEY_HELP2MAN}
            -DVERSION=${PROJECT_VERSION} -DINCLUDE=${CMAKE_CURRENT_SOURCE_DIR}/man/cckey.h2m
            -DOUT=${_cckey_man} -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/cckey_man.cmake
    DEPENDS cckey_cli ${CMAKE_CURRENT_SOURCE_DIR}/man/cckey.h2m ${CMAKE_CURRENT_SOURCE_DIR}/cmake/cckey_man.cmake
    COMMENT "Generating the cckey(1) man page" VERBATIM)
  add_custom_target(cckey_man ALL DEPENDS ${_cckey_man})
  install(FILES ${_cckey_man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(WARNING "cckey: help2man not found; the man page is not built (scripts/install-deps.sh installs it)")
endif()
install(FILES completions/cckey.bash RENAME cckey
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES completions/_cckey DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
