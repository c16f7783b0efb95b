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

# CURL::libcurl_mbedtls, the sidecar's libcurl: the same lean curl over mbedTLS
# (scripts/build-lean-curl.sh --tls mbedtls, .deps/curl-mbedtls; Debian's libmbedtls-dev
# static archives). A TLS handshake with static OpenSSL makes ~3.8 MB of its code resident in
# every sidecar; mbedTLS's whole code is ~0.6 MB (sidecar/README.md, Memory). When the library
# is missing it is an alias of CURL::libcurl, so the sidecar still builds (larger RSS).
set(NCCLOP_LEAN_CURL_MBEDTLS_DIR "${CMAKE_SOURCE_DIR}/.deps/curl-mbedtls" CACHE PATH
    "Prefix of the lean static libcurl over mbedTLS (scripts/build-lean-curl.sh --tls mbedtls)")
find_library(NCCLOP_LIBMBEDTLS_STATIC NAMES libmbedtls.a)
find_library(NCCLOP_LIBMBEDX509_STATIC NAMES libmbedx509.a)
find_library(NCCLOP_LIBMBEDCRYPTO_STATIC NAMES libmbedcrypto.a)
if(NCCLOP_LEAN_CURL AND EXISTS "${NCCLOP_LEAN_CURL_MBEDTLS_DIR}/lib/libcurl.a"
   AND EXISTS "${NCCLOP_LEAN_CURL_MBEDTLS_DIR}/include/curl/curl.h"
   AND NCCLOP_LIBMBEDTLS_STATIC AND NCCLOP_LIBMBEDX509_STATIC AND NCCLOP_LIBMBEDCRYPTO_STATIC)
  add_library(CURL::libcurl_mbedtls STATIC IMPORTED GLOBAL)
  set_target_properties(CURL::libcurl_mbedtls PROPERTIES
    IMPORTED_LOCATION "${NCCLOP_LEAN_CURL_MBEDTLS_DIR}/lib/libcurl.a"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCLOP_LEAN_CURL_MBEDTLS_DIR}/include"
    INTERFACE_COMPILE_DEFINITIONS CURL_STATICLIB
    # mbedTLS has no global state shared with OpenSSL, so static archives are safe in any binary.
    INTERFACE_LINK_LIBRARIES
      "${NCCLOP_LIBMBEDTLS_STATIC};${NCCLOP_LIBMBEDX509_STATIC};${NCCLOP_LIBMBEDCRYPTO_STATIC};Threads::Threads"
    INTERFACE_LINK_OPTIONS "LINKER:--gc-sections")
  set(NCCLOP_CURL_HAS_MBEDTLS ON)
  message(STATUS "libcurl (sidecar): lean static over mbedTLS from ${NCCLOP_LEAN_CURL_MBEDTLS_DIR}")
else()
  add_library(CURL::libcurl_mbedtls INTERFACE IMPORTED GLOBAL)
  set_target_properties(CURL::libcurl_mbedtls PROPERTIES INTERFACE_LINK_LIBRARIES CURL::libcurl)
  set(NCCLOP_CURL_HAS_MBEDTLS OFF)
  message(STATUS "libcurl (sidecar): same as the operator's; install libmbedtls-dev and run "
                 "scripts/build-lean-curl.sh --tls mbedtls for the mbedTLS one (~3 MB less RSS)")
endif()

find_package(nlohmann_json 3.10 REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS headers)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)

# ncclop::httplib, the one name the sidecar links for cpp-httplib.
#
# Debian's cpp-httplib is split (declarations-only header + libcpp-httplib.so built with
# OpenSSL, zlib and brotli): it loads libssl/libcrypto/libz/libbrotli* and libstdc++.so into
# the sidecar, which then cannot link libstdc++/OpenSSL statically. The sidecar serves plain
# HTTP on loopback, so scripts/fetch-httplib-header.sh puts the single header (implementation
# included) of Debian's own cpp-httplib source into .deps/httplib; when it is there it is
# compiled in without TLS or compression, else Debian's split build with a notice.
set(NCCLOP_HTTPLIB_HEADER_DIR "${CMAKE_SOURCE_DIR}/.deps/httplib" CACHE PATH
    "Prefix of the single-header cpp-httplib that scripts/fetch-httplib-header.sh installs")
option(NCCLOP_HTTPLIB_HEADER_ONLY
       "Compile cpp-httplib in from NCCLOP_HTTPLIB_HEADER_DIR when it exists" ON)
add_library(ncclop_httplib INTERFACE)
add_library(ncclop::httplib ALIAS ncclop_httplib)
if(NCCLOP_HTTPLIB_HEADER_ONLY AND EXISTS "${NCCLOP_HTTPLIB_HEADER_DIR}/include/httplib.h")
  # -isystem dirs come before /usr/include: Debian's declarations-only httplib.h is never found.
  target_include_directories(ncclop_httplib SYSTEM BEFORE INTERFACE "${NCCLOP_HTTPLIB_HEADER_DIR}/include")
  target_link_libraries(ncclop_httplib INTERFACE Threads::Threads)
  set(NCCLOP_HTTPLIB_IS_HEADER_ONLY ON)
  file(READ "${NCCLOP_HTTPLIB_HEADER_DIR}/.stamp" _ncclop_httplib_stamp LIMIT 60)
  message(STATUS "cpp-httplib: header-only, plain HTTP (${_ncclop_httplib_stamp}) from "
                 "${NCCLOP_HTTPLIB_HEADER_DIR}")
else()
  target_link_libraries(ncclop_httplib INTERFACE PkgConfig::HTTPLIB)
  set(NCCLOP_HTTPLIB_IS_HEADER_ONLY OFF)
  message(STATUS "cpp-httplib: Debian's libcpp-httplib.so (${HTTPLIB_VERSION}); run "
                 "scripts/fetch-httplib-header.sh for the header-only one (~4 MB less sidecar RSS)")
endif()
if(NCCLOP_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

set(NCCLOP_DEPS_PREFIX "${CMAKE_SOURCE_DIR}/.deps" CACHE PATH "Project-local prefix for the NVIDIA wheels")

# ncclop_link_self_contained(<executable>): for a binary that loads no C++ or OpenSSL shared
# library of its own (the operator; the sidecar only when ncclop::httplib is header-only, as
# Debian's libcpp-httplib.so brings both):
# libstdc++, libgcc and, with the lean libcurl, OpenSSL are linked statically, so only the
# pages it uses are resident instead of whole shared libraries (-1.7 MiB peak RSS measured for
# the operator at 100 NcclJobs x 8 pods). A second copy of libstdc++ or OpenSSL in one
# process would be unsafe, hence opt-in per executable.
function(ncclop_link_self_contained target)
  set_property(TARGET ${target} PROPERTY NCCLOP_SELF_CONTAINED ON)
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc LINKER:--gc-sections)
endfunction()
