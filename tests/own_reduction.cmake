# The property suites and the audit plugin ABI used as a user would (examples/own_reduction): installs the built
# detred into a scratch prefix, then configures and builds the example against it with find_package(detred) alone and
# runs its CPU tests (ctest -LE gpu): the fixed-order sum passes the suites and its plugin audit; the chunked sum's
# failures (a shrunk counterexample; audit exit 1) are expected failures there.
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
# CPU part only here (CI has no GPU; CMAKE_CUDA_COMPILER=NOTFOUND keeps check_language from enabling CUDA).
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/own_reduction -B ${WORK_DIR}/build -G Ninja
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER=NOTFOUND)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR}/build -LE gpu --output-on-failure)
