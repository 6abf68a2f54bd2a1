# accel_discover_test_groups(TARGET GROUP_BY regex [PROPERTIES name value...])
# Like gtest_discover_tests(TARGET DISCOVERY_MODE PRE_TEST), but one ctest test
# per group of GoogleTest cases rather than one per case: the tests whose full
# names (Suite.Case) match GROUP_BY share one process, named by the regex's
# first capture group; the others keep a ctest test of their own.
#
# Why: each ctest test is a fresh process, and a program that loads every
# plugin spends its time starting, not testing. The conformance suite's 2,749
# cases spent 0.26 s each starting under AddressSanitizer (12 of the
# sanitizer phase's 21 minutes) against milliseconds running. A group still
# names each failing case in its output (--gtest_filter lists them).
function(accel_discover_test_groups target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "GROUP_BY" "PROPERTIES")
  if(NOT arg_GROUP_BY)
    message(FATAL_ERROR "accel_discover_test_groups(${target}): GROUP_BY regex expected")
  endif()
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_test_groups.cmake")
  file(GENERATE OUTPUT "${include_file}" CONTENT
"set(accel_group_executable [==[$<TARGET_FILE:${target}>]==])
set(accel_group_regex [==[${arg_GROUP_BY}]==])
set(accel_group_properties [==[${arg_PROPERTIES}]==])
set(accel_group_working_directory [==[${CMAKE_CURRENT_BINARY_DIR}]==])
set(accel_group_output [==[${CMAKE_CURRENT_BINARY_DIR}/${target}_test_groups_list.cmake]==])
include([==[${PROJECT_SOURCE_DIR}/tests/common/AccelTestGroupsAtTestTime.cmake]==])
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
