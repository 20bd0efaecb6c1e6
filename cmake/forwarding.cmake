# The forwarded interface: every BLAS/CBLAS/LAPACK routine blasoffload does not accelerate, exported by an x86-64
# trampoline that jumps to the CPU library's definition (src/dispatch/forwarding.cpp). Defines bo_forward_list (the generated
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
# bo_forward_list(<target> <dir> [defines...]): the generated files in <dir> for the library <target>, made with the
# C preprocessor definitions given (-DBLASOFFLOAD_ILP64: the ILP64 build's families), and a target <target>_forward_list.
function(bo_forward_list target dir)
  set(outputs ${dir}/forward_list.h ${dir}/forward_families.h ${dir}/forward_trampolines.inc
              ${dir}/forward_exports.inc)
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${CMAKE_COMMAND} -DCC=${CMAKE_C_COMPILER} -DSRC=${CMAKE_CURRENT_SOURCE_DIR} -DOUT=${dir}
            -DCOMPLETE=${BO_FWD_COMPLETE} "-DEXTRA_DEFINES=${ARGN}" -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/forward_list.cmake
    DEPENDS cmake/forward_list.cmake abi/forward/blas.def abi/forward/cblas.def abi/forward/lapack.def
            abi/routines.def abi/families.def src/routines/routine_list.h
    COMMENT "Generating ${target}'s forwarded interface from abi/forward/*.def less abi/routines.def")
  add_custom_target(${target}_forward_list DEPENDS ${outputs})
endfunction()
