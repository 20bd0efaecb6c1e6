# What `cmake --install` puts down: the versioned library with its CMake package and pkg-config file, the notices,
# README and a sample config. The CUDA module, tuned tables and tools install from their own directories.
include(CMakePackageConfigHelpers)
# Executable, like the C library: `./libblasoffload.so` prints its version (Debian's CMake default drops the x bit).
set(CMAKE_INSTALL_SO_NO_EXE OFF)

install(TARGETS blasoffload EXPORT blasoffloadTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development)
# The ILP64 build (Debian's libblas64.so.3 convention): a library to load, not to link against by CMake package.
install(TARGETS blasoffload64 LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development)

# find_package(blasoffload) -> the imported target blasoffload::blasoffload.
set(BO_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/blasoffload)
install(EXPORT blasoffloadTargets NAMESPACE blasoffload:: DESTINATION ${BO_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/blasoffloadConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/blasoffloadConfig.cmake INSTALL_DESTINATION ${BO_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/blasoffloadConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/blasoffloadConfig.cmake ${PROJECT_BINARY_DIR}/blasoffloadConfigVersion.cmake
        DESTINATION ${BO_CMAKE_DIR})

# pkg-config: the prefix is found from the .pc file's own place, so the install can be moved.
file(RELATIVE_PATH BO_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" BO_PC_TO_PREFIX "${BO_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/blasoffload.pc.in ${PROJECT_BINARY_DIR}/blasoffload.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/blasoffload.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE
              ${PROJECT_SOURCE_DIR}/etc/blasoffload.conf.sample
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md")
