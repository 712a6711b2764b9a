# cmake -DREPLAY=bin -DTARGET=name -DSEEDS=ci/seeds.py -DPYTHON=python3 -DCOPY=dir -P replay_corpus.cmake
# The seeds are assembled afresh from the corpora (as a campaign does) into COPY.
file(REMOVE_RECURSE ${COPY})
execute_process(COMMAND ${PYTHON} ${SEEDS} ${TARGET} ${COPY} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SEEDS} ${TARGET} ${COPY} failed (${rc}):\n${err}")
endif()
execute_process(COMMAND ${REPLAY} ${COPY} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  # The replayer names each input before running it; the last name is the culprit.
  string(LENGTH "${err}" len)
  if(len GREATER 6000)
    math(EXPR start "${len} - 6000")
    string(SUBSTRING "${err}" ${start} -1 err)
  endif()
  message(FATAL_ERROR "${REPLAY} failed on the seeds of ${TARGET} (${rc}):\n${err}")
endif()
message(STATUS "${out}")
