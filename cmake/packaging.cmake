# How other projects use tensorgl (docs/building.md):
#   find_package(tensorgl CONFIG)  <prefix>/<libdir>/cmake/tensorgl/: targets tensorgl::tensorgl
#                                  (libtensorgl and its headers: loader.h, tensorgl.hpp,
#                                  plugin_api.h) and tensorgl::plugin_api (plugin_api.h alone);
#                                  variables TENSORGL_PLUGIN_DIR, TENSORGL_PLUGINS, tensorgl_VERSION
#   pkg-config tensorgl            <prefix>/<libdir>/pkgconfig/tensorgl.pc: Cflags, Libs, and the
#                                  variables plugindir and plugins
#   add_subdirectory / FetchContent the same targets (ALIAS) and variables, set in the caller.
# Everything installed is found relative to its own location (the config through
# PACKAGE_PREFIX_DIR, the .pc through ${pcfiledir}, the plugins next to libtensorgl), so a prefix
# moved elsewhere, or installed with `cmake --install --prefix`, keeps working.
include(CMakePackageConfigHelpers)

set(TGL_INSTALLED_PLUGINS cpu)
if(TGL_BUILD_GLES)
  list(APPEND TGL_INSTALLED_PLUGINS gles)
endif()
set(TGL_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/tensorgl")

install(EXPORT tensorglTargets NAMESPACE tensorgl:: DESTINATION "${TGL_CMAKE_INSTALL_DIR}")
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/tensorglConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cmake/tensorglConfig.cmake"
  INSTALL_DESTINATION "${TGL_CMAKE_INSTALL_DIR}"
  PATH_VARS TGL_PLUGIN_INSTALL_DIR)
# 0.x: a minor release may change what a consumer builds against, so only the same minor matches.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/cmake/tensorglConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/cmake/tensorglConfig.cmake"
              "${PROJECT_BINARY_DIR}/cmake/tensorglConfigVersion.cmake"
        DESTINATION "${TGL_CMAKE_INSTALL_DIR}")

# tensorgl.pc: paths relative to the .pc file's own directory (pkg-config's ${pcfiledir}).
set(TGL_PC_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
foreach(_kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_kind}}")
    message(FATAL_ERROR "tensorgl: CMAKE_INSTALL_${_kind} (${CMAKE_INSTALL_${_kind}}) must be relative "
                        "to the prefix, so that the installed package can be moved")
  endif()
endforeach()
file(RELATIVE_PATH TGL_PC_TO_PREFIX "${CMAKE_INSTALL_PREFIX}/${TGL_PC_DIR}" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" TGL_PC_TO_PREFIX "${TGL_PC_TO_PREFIX}")
string(REPLACE ";" " " TGL_PC_PLUGINS "${TGL_INSTALLED_PLUGINS}")
configure_file("${CMAKE_CURRENT_LIST_DIR}/tensorgl.pc.in" "${PROJECT_BINARY_DIR}/tensorgl.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/tensorgl.pc" DESTINATION "${TGL_PC_DIR}")

# Under add_subdirectory / FetchContent: what find_package would set, for the build tree (where
# the plugins sit next to libtensorgl).
if(NOT PROJECT_IS_TOP_LEVEL)
  set(TENSORGL_PLUGIN_DIR "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}" PARENT_SCOPE)
  set(TENSORGL_PLUGINS "${TGL_INSTALLED_PLUGINS}" PARENT_SCOPE)
endif()
