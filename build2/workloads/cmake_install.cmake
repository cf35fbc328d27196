# Install script for directory: /work/wt/format/workloads

# Set the install prefix
if(NOT DEFINED CMAKE_INSTALL_PREFIX)
  set(CMAKE_INSTALL_PREFIX "/usr/local")
endif()
string(REGEX REPLACE "/$" "" CMAKE_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")

# Set the install configuration name.
if(NOT DEFINED CMAKE_INSTALL_CONFIG_NAME)
  if(BUILD_TYPE)
    string(REGEX REPLACE "^[^A-Za-z0-9_]+" ""
           CMAKE_INSTALL_CONFIG_NAME "${BUILD_TYPE}")
  else()
    set(CMAKE_INSTALL_CONFIG_NAME "RelWithDebInfo")
  endif()
  message(STATUS "Install configuration: \"${CMAKE_INSTALL_CONFIG_NAME}\"")
endif()

# Set the component getting installed.
if(NOT CMAKE_INSTALL_COMPONENT)
  if(COMPONENT)
    message(STATUS "Install component: \"${COMPONENT}\"")
    set(CMAKE_INSTALL_COMPONENT "${COMPONENT}")
  else()
    set(CMAKE_INSTALL_COMPONENT)
  endif()
endif()

# Install shared libraries without execute permission?
if(NOT DEFINED CMAKE_INSTALL_SO_NO_EXE)
  set(CMAKE_INSTALL_SO_NO_EXE "1")
endif()

# Is this installation the result of a crosscompile?
if(NOT DEFINED CMAKE_CROSSCOMPILING)
  set(CMAKE_CROSSCOMPILING "FALSE")
endif()

# Set default install directory permissions.
if(NOT DEFINED CMAKE_OBJDUMP)
  set(CMAKE_OBJDUMP "/usr/bin/objdump")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-fem-temporaries" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-fem-temporaries")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-fem-temporaries"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-wl-fem-temporaries")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-wl-fem-temporaries")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-fem-temporaries" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-fem-temporaries")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-fem-temporaries")
    endif()
  endif()
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/share/workloads/fem-temporaries/mesh.h")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/share/workloads/fem-temporaries" TYPE FILE FILES "/work/wt/format/workloads/fem-temporaries/mesh.h")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/share/workloads/fem-temporaries/mesh.cc")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/share/workloads/fem-temporaries" TYPE FILE FILES "/work/wt/format/workloads/fem-temporaries/mesh.cc")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/share/workloads/fem-temporaries/kernels.h")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/share/workloads/fem-temporaries" TYPE FILE FILES "/work/wt/format/workloads/fem-temporaries/kernels.h")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/share/workloads/fem-temporaries/fem.h")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/share/workloads/fem-temporaries" TYPE FILE FILES "/work/wt/format/workloads/fem-temporaries/fem.h")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/share/workloads/fem-temporaries/anomalous.cc")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/share/workloads/fem-temporaries" TYPE FILE FILES "/work/wt/format/workloads/fem-temporaries/anomalous.cc")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/share/workloads/fem-temporaries/fixed.cc")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/share/workloads/fem-temporaries" TYPE FILE FILES "/work/wt/format/workloads/fem-temporaries/fixed.cc")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/share/workloads/fem-temporaries/main.cc")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/share/workloads/fem-temporaries" TYPE FILE FILES "/work/wt/format/workloads/fem-temporaries/main.cc")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/share/workloads/common/wl_common.h")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/share/workloads/common" TYPE FILE FILES "/work/wt/format/workloads/common/wl_common.h")
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-cxx-churn" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-cxx-churn")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-cxx-churn"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-wl-cxx-churn")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-wl-cxx-churn")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-cxx-churn" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-cxx-churn")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-cxx-churn")
    endif()
  endif()
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-map-churn" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-map-churn")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-map-churn"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-wl-map-churn")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-wl-map-churn")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-map-churn" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-map-churn")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-map-churn")
    endif()
  endif()
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-small-churn" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-small-churn")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-small-churn"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-wl-small-churn")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-wl-small-churn")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-small-churn" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-small-churn")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-small-churn")
    endif()
  endif()
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-hot-odd" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-hot-odd")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-hot-odd"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-wl-hot-odd")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-wl-hot-odd")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-hot-odd" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-hot-odd")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-hot-odd")
    endif()
  endif()
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-ghost-cells" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-ghost-cells")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-ghost-cells"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-wl-ghost-cells")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-wl-ghost-cells")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-ghost-cells" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-ghost-cells")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-ghost-cells")
    endif()
  endif()
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-prodcon" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-prodcon")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-prodcon"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-wl-prodcon")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-wl-prodcon")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-prodcon" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-prodcon")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-prodcon")
    endif()
  endif()
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-handover" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-handover")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-handover"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-wl-handover")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-wl-handover")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-handover" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-handover")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-handover")
    endif()
  endif()
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-false-sharing" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-false-sharing")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-false-sharing"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-wl-false-sharing")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-wl-false-sharing")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-false-sharing" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-false-sharing")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-false-sharing")
    endif()
  endif()
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-realloc-large" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-realloc-large")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-realloc-large"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-wl-realloc-large")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-wl-realloc-large")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-realloc-large" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-realloc-large")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-realloc-large")
    endif()
  endif()
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-thread-churn" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-thread-churn")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-thread-churn"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-wl-thread-churn")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-wl-thread-churn")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-thread-churn" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-thread-churn")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-thread-churn")
    endif()
  endif()
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mesh-refine" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mesh-refine")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mesh-refine"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-wl-mesh-refine")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-wl-mesh-refine")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mesh-refine" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mesh-refine")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mesh-refine")
    endif()
  endif()
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-measure" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-measure")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-measure"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-measure")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-measure")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-measure" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-measure")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-measure")
    endif()
  endif()
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mpi-alltoall" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mpi-alltoall")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mpi-alltoall"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-wl-mpi-alltoall")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-wl-mpi-alltoall")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mpi-alltoall" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mpi-alltoall")
    file(RPATH_CHANGE
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mpi-alltoall"
         OLD_RPATH "/usr/lib/x86_64-linux-gnu/openmpi/lib:"
         NEW_RPATH "")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mpi-alltoall")
    endif()
  endif()
endif()

if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mpi-msgrate" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mpi-msgrate")
    file(RPATH_CHECK
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mpi-msgrate"
         RPATH "")
  endif()
  list(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES
   "/usr/local/share/heapscope/native/bin/hs-wl-mpi-msgrate")
  if(CMAKE_WARN_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(WARNING "ABSOLUTE path INSTALL DESTINATION : ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  if(CMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION)
    message(FATAL_ERROR "ABSOLUTE path INSTALL DESTINATION forbidden (by caller): ${CMAKE_ABSOLUTE_DESTINATION_FILES}")
  endif()
  file(INSTALL DESTINATION "/usr/local/share/heapscope/native/bin" TYPE EXECUTABLE FILES "/work/wt/format/build2/native/bin/hs-wl-mpi-msgrate")
  if(EXISTS "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mpi-msgrate" AND
     NOT IS_SYMLINK "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mpi-msgrate")
    file(RPATH_CHANGE
         FILE "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mpi-msgrate"
         OLD_RPATH "/usr/lib/x86_64-linux-gnu/openmpi/lib:"
         NEW_RPATH "")
    if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND "/usr/bin/strip" "$ENV{DESTDIR}/usr/local/share/heapscope/native/bin/hs-wl-mpi-msgrate")
    endif()
  endif()
endif()

