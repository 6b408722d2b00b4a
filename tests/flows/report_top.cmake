# report_top(JSON REPORT TOP OUT): the index in a `capsgen synth` report.json's "tops" of the entry
# for module TOP, in OUT; a fatal error naming REPORT when there is none. Included by the -P check
# scripts of this directory.
function(report_top json report top out)
  string(JSON n LENGTH "${json}" tops)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON t GET "${json}" tops ${i} top)
    if(t STREQUAL top)
      set(${out} ${i} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "${report}: no top ${top}")
endfunction()
