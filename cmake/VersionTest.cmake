# ncclop_add_version_test(<test> <target>): `<target> --version` exits 0 and prints exactly one
# line, "<target> <version>", where the version is that of VERSION at the repository root
# (NCCLOP_VERSION, read by the top-level CMakeLists.txt and by runtime/ on its own).
function(ncclop_add_version_test test target)
  add_test(NAME ${test}
           COMMAND sh -c [[out=$("$0" --version) || { echo "exit status $?"; exit 1; }
                           test "$out" = "$1" || { echo "printed '$out', want '$1'"; exit 1; }]]
                   $<TARGET_FILE:${target}> "${target} ${NCCLOP_VERSION}")
  set_tests_properties(${test} PROPERTIES TIMEOUT 30 LABELS unit)
endfunction()
