# Vulkan for `cckey warm` and `cckey devices` (host/cli/warm/vk_*.c,
# shader_*.c, warm_vulkan.c): the Vulkan headers for the types (the loader,
# libvulkan.so.1, is dlopen'ed at run time like libOpenCL and libcuda), and
# shaderc to compile GLSL and HLSL to SPIR-V.
#
# shaderc is LINKED, not loaded: Debian 12's libshaderc.so.1 cannot be
# dlopen'ed at all (it leaves glslang's and SPIRV-Tools' symbols undefined
# and names no library that defines them; glslang and SPIRV-Tools ship as
# static archives only), so the CLI links libshaderc_combined.a with the
# glslang and SPIRV-Tools archives. That also pins the compiler: the version
# warm records in each entry is the one inside this cckey binary. Where a
# working shared libshaderc exists (it links on its own), that is used
# instead.
#
# Sets CCKEY_VULKAN_DEFINES, CCKEY_VULKAN_INCLUDE_DIR, CCKEY_SHADERC_LIBS and
# CCKEY_SHADERC_VERSION.
option(CCKEY_WITH_VULKAN "Vulkan devices and SPIR-V for warm (loader dlopen'ed; shaderc linked)" ON)
set(CCKEY_VULKAN_DEFINES "")
set(CCKEY_SHADERC_LIBS "")
set(CCKEY_SHADERC_VERSION "")
if(CCKEY_WITH_VULKAN)
  find_path(CCKEY_VULKAN_INCLUDE_DIR vulkan/vulkan.h)
  if(NOT CCKEY_VULKAN_INCLUDE_DIR)
    message(STATUS "cckey: no Vulkan headers (libvulkan-dev); building without Vulkan")
  else()
    list(APPEND CCKEY_VULKAN_DEFINES CCKEY_WITH_VULKAN)
    find_path(CCKEY_SHADERC_INCLUDE_DIR shaderc/shaderc.h)
    include(CheckCSourceCompiles)
    set(_cckey_shaderc_probe "#include <shaderc/shaderc.h>
int main(void) { shaderc_compiler_t c = shaderc_compiler_initialize(); shaderc_compiler_release(c); return 0; }")
    if(CCKEY_SHADERC_INCLUDE_DIR)
      set(CMAKE_REQUIRED_LIBRARIES shaderc)
      check_c_source_compiles("${_cckey_shaderc_probe}" CCKEY_SHADERC_SHARED_LINKS)
      unset(CMAKE_REQUIRED_LIBRARIES)
      if(CCKEY_SHADERC_SHARED_LINKS)
        set(CCKEY_SHADERC_LIBS shaderc)
      else()
        # The archives in link order: each after those that call it.
        set(_cckey_archives shaderc_combined glslang SPIRV HLSL MachineIndependent GenericCodeGen OSDependent
            OGLCompiler SPIRV-Tools-opt SPIRV-Tools)
        set(_cckey_all_found ON)
        foreach(_a ${_cckey_archives})
          find_library(CCKEY_LIB_${_a} NAMES lib${_a}.a)
          if(CCKEY_LIB_${_a})
            list(APPEND CCKEY_SHADERC_LIBS ${CCKEY_LIB_${_a}})
          else()
            set(_cckey_all_found OFF)
            message(STATUS "cckey: lib${_a}.a not found (glslang-dev, spirv-tools)")
          endif()
        endforeach()
        if(_cckey_all_found)
          list(APPEND CCKEY_SHADERC_LIBS stdc++ m Threads::Threads)
        else()
          set(CCKEY_SHADERC_LIBS "")
        endif()
      endif()
    endif()
    if(CCKEY_SHADERC_LIBS)
      find_package(PkgConfig QUIET)
      if(PKG_CONFIG_FOUND)
        pkg_check_modules(CCKEY_SHADERC_PC QUIET shaderc)
        pkg_check_modules(CCKEY_SPIRV_TOOLS_PC QUIET SPIRV-Tools)
      endif()
      set(CCKEY_SHADERC_VERSION "shaderc ${CCKEY_SHADERC_PC_VERSION}")
      if(CCKEY_SPIRV_TOOLS_PC_VERSION)
        set(CCKEY_SHADERC_VERSION "${CCKEY_SHADERC_VERSION}, SPIRV-Tools ${CCKEY_SPIRV_TOOLS_PC_VERSION}")
      endif()
      list(APPEND CCKEY_VULKAN_DEFINES CCKEY_WITH_SHADERC "CCKEY_SHADERC_VERSION=\"${CCKEY_SHADERC_VERSION}\"")
      message(STATUS "cckey: Vulkan with ${CCKEY_SHADERC_VERSION}")
    else()
      message(STATUS "cckey: no usable shaderc (libshaderc-dev, glslang-dev, spirv-tools); "
                     "Vulkan without a shader compiler")
    endif()
  endif()
endif()
