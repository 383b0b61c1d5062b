# AscendC kernel + CPU twin (issue 8). Until it exists the library links the stub.
target_sources(relugrad_objects PRIVATE ${CMAKE_CURRENT_LIST_DIR}/ascend_twin_unavailable.cc)
