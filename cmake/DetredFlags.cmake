# The numerics rules, applied to every target detred builds: IEEE arithmetic exactly as written.
# No fast-math option of any compiler, ever; no flush-to-zero; no contraction of a*b+c into an FMA on the host.
include_guard(GLOBAL)

function(detred_numerics_flags target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off -fno-fast-math -Wall -Wextra -Wpedantic>
    $<$<COMPILE_LANGUAGE:CUDA>:-std=c++20 --fmad=false -Xcompiler=-ffp-contract=off>)
  if(DETRED_SANITIZE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${DETRED_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all>)
    target_link_options(${target} PRIVATE -fsanitize=${DETRED_SANITIZE})
  endif()
endfunction()
