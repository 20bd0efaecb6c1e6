# The forwarded interface: every BLAS/CBLAS/LAPACK routine blasoffload does not accelerate, exported by an x86-64
# trampoline that jumps to the CPU library's definition (src/dispatch/forwarding.cpp). Sets BO_FWD_DIR (the generated
# files: the version script includes its forward_exports.inc) and BO_FWD_SOURCES (for the library).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(BO_FWD_COMPLETE ON)
  enable_language(ASM)
  set(BO_FWD_SOURCES src/dispatch/forwarding.cpp src/dispatch/forward_trampolines.S)
else()
  set(BO_FWD_COMPLETE OFF)
  set(BO_FWD_SOURCES "")
  message(WARNING "The complete BLAS/CBLAS/LAPACK interface (the forwarding trampolines) is x86-64 only for now: "
                  "this ${CMAKE_SYSTEM_PROCESSOR} build exports the accelerated routines of abi/routines.def alone")
endif()
set(BO_FWD_DIR ${CMAKE_CURRENT_BINARY_DIR}/forward)
set(BO_FWD_OUTPUTS ${BO_FWD_DIR}/forward_list.h ${BO_FWD_DIR}/forward_families.h
                   ${BO_FWD_DIR}/forward_trampolines.inc ${BO_FWD_DIR}/forward_exports.inc)
add_custom_command(
  OUTPUT ${BO_FWD_OUTPUTS}
  COMMAND ${CMAKE_COMMAND} -DCC=${CMAKE_C_COMPILER} -DSRC=${CMAKE_CURRENT_SOURCE_DIR} -DOUT=${BO_FWD_DIR}
          -DCOMPLETE=${BO_FWD_COMPLETE} -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/forward_list.cmake
  DEPENDS cmake/forward_list.cmake abi/forward/blas.def abi/forward/cblas.def abi/forward/lapack.def
          abi/routines.def abi/families.def src/routines/routine_list.h
  COMMENT "Generating the forwarded interface from abi/forward/*.def less abi/routines.def")
add_custom_target(blasoffload_forward_list DEPENDS ${BO_FWD_OUTPUTS})
