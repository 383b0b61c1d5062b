# install/export so that find_package(relugrad) gives relugrad::relugrad.
include(CMakePackageConfigHelpers)
install(TARGETS relugrad EXPORT relugradTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/relugrad DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT relugradTargets NAMESPACE relugrad:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/relugrad)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/relugradConfig.cmake.in
  ${PROJECT_BINARY_DIR}/relugradConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/relugrad)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/relugradConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/relugradConfig.cmake ${PROJECT_BINARY_DIR}/relugradConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/relugrad)
if(RELUGRAD_BUILD_TOOLS)
  install(TARGETS relugrad_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
