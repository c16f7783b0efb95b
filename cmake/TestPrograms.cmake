# The test programs' own sources compile without optimisation (-O0, debug info kept), whatever
# the build type; the code they test lives in the project's libraries and keeps the build type's
# flags (RelWithDebInfo: -O2 -g), as do the programs that ship. Optimising test bodies, mostly
# GoogleTest macros and JSON literals, was a third of a cold build's compile time and bought no
# coverage. -DNCCLOP_OPTIMISE_TESTS=ON compiles them like the rest.
option(NCCLOP_OPTIMISE_TESTS "Compile the test programs' own sources with the build type's optimisation" OFF)

# ncclop_unoptimised_tests(<directory>): every executable target in <directory> and below that
# links GoogleTest gets -O0 for its own sources.
function(ncclop_unoptimised_tests directory)
  get_property(targets DIRECTORY ${directory} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    get_target_property(libraries ${target} LINK_LIBRARIES)
    if(type STREQUAL "EXECUTABLE" AND "${libraries}" MATCHES "(^|;)(GTest::|gtest|gmock)")
      target_compile_options(${target} PRIVATE -O0)
    endif()
  endforeach()
  get_property(subdirectories DIRECTORY ${directory} PROPERTY SUBDIRECTORIES)
  foreach(subdirectory IN LISTS subdirectories)
    ncclop_unoptimised_tests(${subdirectory})
  endforeach()
endfunction()
