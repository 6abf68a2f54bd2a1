# Script tests of the conformance program itself (cmake -P), chosen by CHECK:
#   unloaded_plugins   a plugin named in ACCEL_PLUGIN_PATH or on the command line
#                      that does not load stops the run: exit 2, naming the file
#                      and the loader's reason; no case runs.
#   naive_broadcast    a plugin whose ADD broadcasts by modulo indexing passes
#                      the trailing-row case but fails the one-side size-1 axis
#                      and both-sides cases, and the closing table charges ADD.
# Inputs: CONFORMANCE (the program), FAULT_PLUGIN_DIR, NAIVE_PLUGIN.
unset(ENV{ACCEL_CONFORMANCE_REQUIRE_DEVICE})  # a GPU check may have set it for its own cases

function(run_conformance)
  cmake_parse_arguments(arg "" "PLUGIN_PATH" "ARGS" ${ARGN})
  if(DEFINED arg_PLUGIN_PATH)
    set(ENV{ACCEL_PLUGIN_PATH} "${arg_PLUGIN_PATH}")
  else()
    unset(ENV{ACCEL_PLUGIN_PATH})
  endif()
  execute_process(COMMAND ${CONFORMANCE} ${arg_ARGS}
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output TIMEOUT 120)
  set(result "${result}" PARENT_SCOPE)
  set(output "${output}" PARENT_SCOPE)
endfunction()

function(expect condition_text)
  if(${ARGN})
  else()
    message(FATAL_ERROR "expected ${condition_text}; exit status ${result}, output:\n${output}")
  endif()
endfunction()

function(expect_in_output text)
  string(FIND "${output}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected the output to contain '${text}'; exit status ${result}, output:\n${output}")
  endif()
endfunction()

function(expect_refused plugin reason)
  expect("exit status 2" result EQUAL 2)
  expect_in_output("${plugin}")
  expect_in_output("${reason}")
  string(FIND "${output}" "[ RUN      ]" ran)
  expect("no case to run" ran EQUAL -1)
endfunction()

if(CHECK STREQUAL "unloaded_plugins")
  set(init_error ${FAULT_PLUGIN_DIR}/libaccel-plugin-fault_init_error.so)
  run_conformance(PLUGIN_PATH ${init_error})
  expect_refused(${init_error} "widget driver missing")

  set(wrong_major ${FAULT_PLUGIN_DIR}/libaccel-plugin-fault_wrong_major.so)
  run_conformance(ARGS --plugin ${wrong_major})
  expect_refused(${wrong_major} "major")
  run_conformance(ARGS ${wrong_major} --gtest_filter=*Add_3x5)
  expect_refused(${wrong_major} "major")

  set(missing ${FAULT_PLUGIN_DIR}/libaccel-plugin-not_there.so)
  run_conformance(PLUGIN_PATH ${missing})
  expect_refused(${missing} "no such file")

  # A folder on ACCEL_PLUGIN_PATH: every plugin in it must load.
  run_conformance(PLUGIN_PATH ${FAULT_PLUGIN_DIR})
  expect_refused(${init_error} "widget driver missing")

  # The guard variable still applies when everything loaded.
  set(ENV{ACCEL_CONFORMANCE_REQUIRE_DEVICE} NO_SUCH_TYPE)
  run_conformance(ARGS --gtest_filter=ConformanceCoverage.*)
  unset(ENV{ACCEL_CONFORMANCE_REQUIRE_DEVICE})
  expect("a failure" NOT result EQUAL 0)
  expect_in_output("no device of type NO_SUCH_TYPE was loaded")
elseif(CHECK STREQUAL "naive_broadcast")
  run_conformance(ARGS --plugin ${NAIVE_PLUGIN} --gtest_filter=*NAIVE_BROADCAST_0_*)
  expect("a failure" result EQUAL 1)
  set(prefix "AllDevices/ConformanceTest.MatchesTheCpuPlugin/NAIVE_BROADCAST_0_")
  # What the suite tested before: equal shapes, a rank-0 side, a trailing row. All pass.
  foreach(passing Add_3x5 Add_scalar Add_0 AddBroadcast_4x5_5 AddBroadcast_6x7_scalar AddBroadcast_scalar_6x7)
    expect_in_output("[       OK ] ${prefix}${passing} (")
  endforeach()
  # A size-1 axis on one side alone, on the other, and on both sides.
  foreach(failing AddBroadcast_4x1_4x5 AddBroadcast_4x5_4x1 AddBroadcast_3x1x5_1x4x1 AddBroadcast_4x1_3x1x5)
    expect_in_output("[  FAILED  ] ${prefix}${failing}, where GetParam()")
  endforeach()
  # Ops the device lacks fall back to the CPU and pass.
  expect_in_output("[       OK ] ${prefix}SubBroadcast_3x1x5_1x4x1 (")
  # The closing table: ADD ran natively (float32) and failed, its 16-bit and
  # integer cases fell back; SUB fell back in every float dtype.
  expect_in_output("Conformance of /job:localhost/replica:0/task:0/device:NAIVE_BROADCAST:0 (plugin naive_broadcast: ")
  if(NOT output MATCHES "\n  AddV2 \\(ADD\\) +f32 +bf16 f16 i32 +AddBroadcast_")
    message(FATAL_ERROR "the table does not show Add as native and failed:\n${output}")
  endif()
  if(NOT output MATCHES "\n  Sub +- +f32 bf16 f16 +-\n")
    message(FATAL_ERROR "the table does not show Sub as fallen back to the CPU:\n${output}")
  endif()
else()
  message(FATAL_ERROR "unknown CHECK '${CHECK}'")
endif()
