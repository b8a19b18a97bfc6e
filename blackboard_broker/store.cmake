# ufo_store: the broker's durable log (ufo_wal) and blob store (ufo_blob). Only the broker
# (and its tests and bb_bench) use them; the top-level CMakeLists.txt includes this file even
# when only the unit tests are built.
add_library(ufo_store STATIC ${CMAKE_CURRENT_LIST_DIR}/ufo_wal.c ${CMAKE_CURRENT_LIST_DIR}/ufo_blob.c)
target_include_directories(ufo_store PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(ufo_store PUBLIC ufo)
