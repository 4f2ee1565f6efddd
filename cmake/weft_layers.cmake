# Checks that every include of a weft source goes down the layer table of
# docs/ARCHITECTURE.md: a file in folder F may include headers of F and of
# folders listed before F, never of one listed after it. Run at each build
# (cmake -P, SRC= the src folder) so that a wrong-way include fails it.
set(layers util params trace data device sched comm context stf ptg devmgr exec api runtime
           collections)
file(GLOB_RECURSE files RELATIVE ${SRC} ${SRC}/*.c ${SRC}/*.h)
set(bad 0)
foreach(f IN LISTS files)
  string(REGEX MATCH "^[a-z]+" from ${f})
  list(FIND layers ${from} from_rank)
  if(from_rank LESS 0)
    message(SEND_ERROR "${f}: folder ${from} is not in the layer table")
    set(bad 1)
    continue()
  endif()
  file(STRINGS ${SRC}/${f} incs REGEX "^#include \"[a-z]+/")
  foreach(inc IN LISTS incs)
    string(REGEX REPLACE "^#include \"([a-z]+)/.*" "\\1" to "${inc}")
    list(FIND layers ${to} to_rank)
    if(to_rank GREATER from_rank)
      message(SEND_ERROR "${f} includes ${to}/, a layer above ${from}/ (docs/ARCHITECTURE.md)")
      set(bad 1)
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "weft: includes must go down the layer table")
endif()
