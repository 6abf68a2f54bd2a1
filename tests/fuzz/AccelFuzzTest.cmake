# accel_add_fuzz_test(NAME name SECONDS seconds SOURCES file... [WATCH file...]
#                     [FLAGS clang-arg...] [SEEDS dir...])
# One ctest test (label "fuzz") that builds SOURCES with clang++ and
# -fsanitize=fuzzer,address,undefined through tests/fuzz/run_libfuzzer.sh and
# runs it for SECONDS; rebuilt when SOURCES or WATCH change. Skipped (exit 77),
# not failed, where clang or libFuzzer is missing.
function(accel_add_fuzz_test)
  cmake_parse_arguments(FUZZ "" "NAME;SECONDS" "SOURCES;WATCH;FLAGS;SEEDS" ${ARGN})
  add_test(NAME ${FUZZ_NAME}
    COMMAND ${PROJECT_SOURCE_DIR}/tests/fuzz/run_libfuzzer.sh
      ${CMAKE_CURRENT_BINARY_DIR}/fuzz_${FUZZ_NAME} ${FUZZ_NAME} ${FUZZ_SECONDS}
      --watch ${FUZZ_SOURCES} ${FUZZ_WATCH}
      --build ${FUZZ_SOURCES} ${FUZZ_FLAGS}
      --seeds ${FUZZ_SEEDS})
  set_tests_properties(${FUZZ_NAME} PROPERTIES LABELS "fuzz" SKIP_RETURN_CODE 77 TIMEOUT 600)
endfunction()
