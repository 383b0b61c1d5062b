# CUDA backend (issue 7). Until it exists the library links the stub.
target_sources(relugrad_objects PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cuda_unavailable.cc)
