# cmake -DREPLAY=bin -DCORPUS=dir -DCOPY=dir -P replay_corpus.cmake
file(REMOVE_RECURSE ${COPY})
file(COPY ${CORPUS}/ DESTINATION ${COPY})
execute_process(COMMAND ${REPLAY} ${COPY} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  # The replayer names each input before running it; the last name is the culprit.
  string(LENGTH "${err}" len)
  if(len GREATER 6000)
    math(EXPR start "${len} - 6000")
    string(SUBSTRING "${err}" ${start} -1 err)
  endif()
  message(FATAL_ERROR "${REPLAY} failed on the corpus copy (${rc}):\n${err}")
endif()
message(STATUS "${out}")
