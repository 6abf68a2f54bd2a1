# Script test (cmake -P) behind the ctest sdk_install (tests/sdk/CMakeLists.txt).
# Inputs: ACCEL_BUILD_DIR, ACCEL_SOURCE_DIR, WORK_DIR, GENERATOR, LIBDIR and
# COMPILER_LAUNCHER (ccache, or empty). The consumer builds in a stable folder
# so that ccache finds its objects again.
set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/consumer)
file(REMOVE_RECURSE ${prefix} ${build})

# run(<step> <command>... [EXPECT <regex>]): fails the test on a non-zero exit
# or a missing EXPECT; prints how long the step took.
function(run step)
  cmake_parse_arguments(arg "" "EXPECT" "" ${ARGN})
  string(TIMESTAMP started "%s")
  execute_process(COMMAND ${arg_UNPARSED_ARGUMENTS} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  string(TIMESTAMP finished "%s")
  math(EXPR seconds "${finished} - ${started}")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "command failed (${result}): ${arg_UNPARSED_ARGUMENTS}\n${output}")
  endif()
  if(DEFINED arg_EXPECT AND NOT output MATCHES "${arg_EXPECT}")
    message(FATAL_ERROR "expected '${arg_EXPECT}' from: ${arg_UNPARSED_ARGUMENTS}\n${output}")
  endif()
  message(STATUS "${step}: ${seconds} s")
  set(last_output "${output}" PARENT_SCOPE)
endfunction()

run(install ${CMAKE_COMMAND} --install ${ACCEL_BUILD_DIR} --prefix ${prefix})
foreach(installed
    bin/accel bin/accel-conformance
    ${LIBDIR}/accel/plugins/libaccel-plugin-cpu.so
    share/accel/configs/tutorial_mlp.yaml share/accel/configs/models/resnet18.yaml share/accel/configs/tpu/tpu_v4.yaml
    ${LIBDIR}/cmake/Accel/AccelConfig.cmake)
  if(NOT EXISTS ${prefix}/${installed})
    message(FATAL_ERROR "the install lacks ${installed}")
  endif()
endforeach()

set(configure_arguments -S ${ACCEL_SOURCE_DIR}/tests/sdk/consumer -B ${build} -G ${GENERATOR}
  -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release -DACCEL_EXAMPLES_DIR=${ACCEL_SOURCE_DIR}/examples)
if(COMPILER_LAUNCHER)
  list(APPEND configure_arguments -DCMAKE_CXX_COMPILER_LAUNCHER=${COMPILER_LAUNCHER})
endif()
run(configure ${CMAKE_COMMAND} ${configure_arguments})
run(build ${CMAKE_COMMAND} --build ${build} -j2)

# The loss of the tutorial MLP falls; the parts work.
run(sdk_tutorial_mlp ${build}/sdk_tutorial_mlp EXPECT "the loss fell")
message(STATUS "${last_output}")
run(sdk_parts ${build}/sdk_parts)
message(STATUS "${last_output}")

# The installed conformance program proves the example plugin, built against the install.
set(plugin ${build}/libaccel-plugin-example.so)
set(ENV{ACCEL_CONFORMANCE_REQUIRE_DEVICE} EXAMPLE)
run(accel-conformance ${prefix}/bin/accel-conformance --plugin ${plugin} --gtest_filter=*EXAMPLE_0_*:ConformanceCoverage.*
    EXPECT "Conformance of /job:localhost/replica:0/task:0/device:EXAMPLE:0 \\(plugin example: ")
if(NOT last_output MATCHES "\n  MatMul +f32 +bf16 f16 +-\n")
  message(FATAL_ERROR "the conformance table does not show MatMul native on EXAMPLE:0:\n${last_output}")
endif()
string(REGEX MATCH "Conformance of [^\n]*EXAMPLE:0[^\n]*\n([^\n]*\n)*  [0-9]+ ops ran natively[^\n]*" table "${last_output}")
message(STATUS "${table}")
