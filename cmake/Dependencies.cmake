# Every third-party dependency is found here, once. Debian packages provide libcurl, Boost
# (Beast/Asio are header-only), cpp-httplib, nlohmann/json, GoogleTest and OpenSSL;
# NCCL and the CUDA runtime come from the NVIDIA wheels that scripts/setup.sh installs
# into the project-local prefix .deps/ (see runtime/CMakeLists.txt).
find_package(Threads REQUIRED)
find_package(CURL REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS headers)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
if(NCCLOP_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

set(NCCLOP_DEPS_PREFIX "${CMAKE_SOURCE_DIR}/.deps" CACHE PATH "Project-local prefix for the NVIDIA wheels")
