# ncclk8s_find_deps(<nccl root> <cudart root> <FATAL_ERROR|WARNING>): defines the imported
# targets NcclK8s::nccl and NcclK8s::cudart. NVIDIA's wheels ship only versioned sonames
# (libnccl.so.2, libcudart.so.13), so those names are searched too. Used by the build and by
# the installed NcclK8sConfig.cmake.
function(ncclk8s_find_deps nccl_root cudart_root mode)
  find_path(NCCLK8S_NCCL_INCLUDE_DIR nccl.h HINTS ${nccl_root}/include NO_CACHE)
  find_library(NCCLK8S_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${nccl_root}/lib NO_CACHE)
  find_path(NCCLK8S_CUDART_INCLUDE_DIR cuda_runtime_api.h HINTS ${cudart_root}/include NO_CACHE)
  find_library(NCCLK8S_CUDART_LIBRARY NAMES cudart libcudart.so.13 libcudart.so.12
    HINTS ${cudart_root}/lib ${cudart_root}/lib64 NO_CACHE)
  foreach(var NCCLK8S_NCCL_INCLUDE_DIR NCCLK8S_NCCL_LIBRARY NCCLK8S_CUDART_INCLUDE_DIR NCCLK8S_CUDART_LIBRARY)
    if(NOT ${var})
      message(${mode} "nccl-k8s: ${var} not found under '${nccl_root}' / '${cudart_root}'. "
        "Run scripts/install-nvidia-wheels.sh, or set NCCLOP_NCCL_ROOT and NCCLOP_CUDART_ROOT.")
      return()
    endif()
  endforeach()
  if(NOT TARGET NcclK8s::cudart)
    add_library(NcclK8s::cudart SHARED IMPORTED GLOBAL)
    set_target_properties(NcclK8s::cudart PROPERTIES
      IMPORTED_LOCATION ${NCCLK8S_CUDART_LIBRARY}
      IMPORTED_NO_SONAME OFF
      INTERFACE_INCLUDE_DIRECTORIES ${NCCLK8S_CUDART_INCLUDE_DIR})
  endif()
  if(NOT TARGET NcclK8s::nccl)
    add_library(NcclK8s::nccl SHARED IMPORTED GLOBAL)
    set_target_properties(NcclK8s::nccl PROPERTIES
      IMPORTED_LOCATION ${NCCLK8S_NCCL_LIBRARY}
      INTERFACE_INCLUDE_DIRECTORIES ${NCCLK8S_NCCL_INCLUDE_DIR}
      INTERFACE_LINK_LIBRARIES NcclK8s::cudart)
  endif()
  set(NCCLK8S_NCCL_INCLUDE_DIR ${NCCLK8S_NCCL_INCLUDE_DIR} PARENT_SCOPE)
  set(NCCLK8S_NCCL_LIBRARY ${NCCLK8S_NCCL_LIBRARY} PARENT_SCOPE)
  set(NCCLK8S_CUDART_INCLUDE_DIR ${NCCLK8S_CUDART_INCLUDE_DIR} PARENT_SCOPE)
  set(NCCLK8S_CUDART_LIBRARY ${NCCLK8S_CUDART_LIBRARY} PARENT_SCOPE)
endfunction()
