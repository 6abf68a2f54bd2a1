# Run by ctest when it reads the test list (see AccelTestGroups.cmake): lists
# the program's GoogleTest cases and adds one ctest test per group. Expects
# accel_group_executable, accel_group_regex, accel_group_properties,
# accel_group_working_directory and accel_group_output.
get_filename_component(accel_group_program "${accel_group_executable}" NAME)
if(NOT EXISTS "${accel_group_executable}")
  # Not built: one test that fails saying so, as gtest_discover_tests does.
  add_test("${accel_group_program}_NOT_BUILT" "${accel_group_program}_NOT_BUILT")
  return()
endif()
execute_process(COMMAND "${accel_group_executable}" --gtest_list_tests
  WORKING_DIRECTORY "${accel_group_working_directory}"
  OUTPUT_VARIABLE accel_group_listing RESULT_VARIABLE accel_group_result
  ERROR_VARIABLE accel_group_errors TIMEOUT 120)
if(NOT accel_group_result EQUAL 0)
  message(FATAL_ERROR "${accel_group_executable} --gtest_list_tests failed (${accel_group_result}):\n${accel_group_errors}")
endif()

# GoogleTest lists "Suite.\n  Case  # GetParam() = ...\n": suites unindented,
# cases indented, comments after two spaces and '#'.
string(REPLACE ";" "\\;" accel_group_listing "${accel_group_listing}")
string(REPLACE "\n" ";" accel_group_lines "${accel_group_listing}")
set(accel_group_suite "")
set(accel_group_keys "")
foreach(line IN LISTS accel_group_lines)
  string(REGEX REPLACE "  #.*$" "" line "${line}")
  if(line STREQUAL "")
    continue()
  endif()
  if(NOT line MATCHES "^ ")
    string(STRIP "${line}" accel_group_suite)
    continue()
  endif()
  string(STRIP "${line}" line)
  set(name "${accel_group_suite}${line}")
  if(name MATCHES "(^|\\.|/)DISABLED_")
    continue()
  endif()
  if(name MATCHES "${accel_group_regex}")
    set(key "${CMAKE_MATCH_1}")
  else()
    set(key "${name}")
  endif()
  string(MAKE_C_IDENTIFIER "${key}" variable)
  if(NOT DEFINED accel_group_cases_${variable})
    list(APPEND accel_group_keys "${key}")
    set(accel_group_cases_${variable} "${name}")
  else()
    string(APPEND accel_group_cases_${variable} ":${name}")
  endif()
endforeach()

set(accel_group_property_arguments "")
foreach(item IN LISTS accel_group_properties)
  string(APPEND accel_group_property_arguments " [==[${item}]==]")
endforeach()
set(accel_group_script "")
foreach(key IN LISTS accel_group_keys)
  string(MAKE_C_IDENTIFIER "${key}" variable)
  string(APPEND accel_group_script
    "add_test([==[${key}]==] [==[${accel_group_executable}]==] [==[--gtest_filter=${accel_group_cases_${variable}}]==])\n"
    "set_tests_properties([==[${key}]==] PROPERTIES WORKING_DIRECTORY [==[${accel_group_working_directory}]==]${accel_group_property_arguments})\n")
endforeach()
file(WRITE "${accel_group_output}" "${accel_group_script}")
include("${accel_group_output}")
