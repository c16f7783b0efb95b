# Every third-party dependency is found here, once. Debian packages provide Boost
# (Beast/Asio are header-only), cpp-httplib, nlohmann/json, GoogleTest and OpenSSL; libcurl is
# the lean static build of scripts/build-lean-curl.sh in .deps/curl (Debian's libcurl as fallback);
# NCCL and the CUDA runtime come from the NVIDIA wheels that scripts/setup.sh installs
# into the project-local prefix .deps/ (see runtime/CMakeLists.txt).
find_package(Threads REQUIRED)
find_package(OpenSSL REQUIRED)

# CURL::libcurl, the one name every part links for the Kubernetes API client.
#
# Debian's libcurl4 loads ~30 shared libraries (ldap, rtmp, ssh2, gssapi, gnutls, nghttp2,
# idn2, psl, zstd, brotli, ...) into the operator and the sidecar; their file-backed pages are
# most of both processes' resident memory. scripts/build-lean-curl.sh builds Debian's own curl
# source with HTTP/HTTPS over OpenSSL only, as a static library in .deps/curl; when it is
# there CURL::libcurl is that library, else Debian's libcurl with a notice.
set(NCCLOP_LEAN_CURL_DIR "${CMAKE_SOURCE_DIR}/.deps/curl" CACHE PATH
    "Prefix of the lean static libcurl that scripts/build-lean-curl.sh installs")
option(NCCLOP_LEAN_CURL "Link the lean static libcurl from NCCLOP_LEAN_CURL_DIR when it exists" ON)

if(NCCLOP_LEAN_CURL AND EXISTS "${NCCLOP_LEAN_CURL_DIR}/lib/libcurl.a"
   AND EXISTS "${NCCLOP_LEAN_CURL_DIR}/include/curl/curl.h")
  find_library(NCCLOP_LIBSSL_STATIC NAMES libssl.a HINTS "${OPENSSL_ROOT_DIR}" PATH_SUFFIXES lib)
  find_library(NCCLOP_LIBCRYPTO_STATIC NAMES libcrypto.a HINTS "${OPENSSL_ROOT_DIR}" PATH_SUFFIXES lib)
  if(NCCLOP_LIBSSL_STATIC AND NCCLOP_LIBCRYPTO_STATIC)
    set(_ncclop_static_ssl "$<BOOL:$<TARGET_PROPERTY:NCCLOP_SELF_CONTAINED>>")
  else()
    set(_ncclop_static_ssl "0")
  endif()
  add_library(CURL::libcurl STATIC IMPORTED GLOBAL)
  set_target_properties(CURL::libcurl PROPERTIES
    IMPORTED_LOCATION "${NCCLOP_LEAN_CURL_DIR}/lib/libcurl.a"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCLOP_LEAN_CURL_DIR}/include"
    INTERFACE_COMPILE_DEFINITIONS CURL_STATICLIB
    # A target marked by ncclop_link_self_contained() gets OpenSSL's static archives.
    INTERFACE_LINK_LIBRARIES
      "$<IF:${_ncclop_static_ssl},${NCCLOP_LIBSSL_STATIC},OpenSSL::SSL>;$<IF:${_ncclop_static_ssl},${NCCLOP_LIBCRYPTO_STATIC},OpenSSL::Crypto>;${CMAKE_DL_LIBS};Threads::Threads"
    # libcurl.a is built with -ffunction-sections -fdata-sections: drop what we never call.
    INTERFACE_LINK_OPTIONS "LINKER:--gc-sections")
  file(READ "${NCCLOP_LEAN_CURL_DIR}/.stamp" _ncclop_curl_stamp LIMIT 40)
  string(REGEX MATCH "^curl [^ ]+" _ncclop_curl_stamp "${_ncclop_curl_stamp}")
  message(STATUS "libcurl: lean static ${_ncclop_curl_stamp} from ${NCCLOP_LEAN_CURL_DIR}")
else()
  find_package(CURL REQUIRED)
  message(STATUS "libcurl: Debian's shared libcurl (${CURL_VERSION_STRING}); run "
                 "scripts/build-lean-curl.sh for the lean static one (several MiB less RSS)")
endif()

find_package(nlohmann_json 3.10 REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS headers)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
if(NCCLOP_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

set(NCCLOP_DEPS_PREFIX "${CMAKE_SOURCE_DIR}/.deps" CACHE PATH "Project-local prefix for the NVIDIA wheels")

# ncclop_link_self_contained(<executable>): for a binary that loads no C++ or OpenSSL shared
# library of its own (the operator; not the sidecar, whose libcpp-httplib.so brings both):
# libstdc++, libgcc and, with the lean libcurl, OpenSSL are linked statically, so only the
# pages it uses are resident instead of whole shared libraries (-1.7 MiB peak RSS measured for
# the operator at 100 NcclJobs x 8 pods). A second copy of libstdc++ or OpenSSL in one
# process would be unsafe, hence opt-in per executable.
function(ncclop_link_self_contained target)
  set_property(TARGET ${target} PROPERTY NCCLOP_SELF_CONTAINED ON)
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc LINKER:--gc-sections)
endfunction()
