# rnnsearch serve (docs/serve.md): the HTTP server, on cpp-httplib from Debian
# (libcpp-httplib-dev, a compiled library, found by ../CMakeLists.txt with pkg-config). Its
# pkg-config flags set its SSL and compression options and must be used, as they change its
# classes' layout. Debian 13's build has OpenSSL, brotli and zlib, and its cpp-httplib.pc
# defines CPPHTTPLIB_OPENSSL_SUPPORT in Cflags but names OpenSSL only in Requires.private:
# the inline code of its header then calls OpenSSL from our objects, so those libraries are
# linked too: the shared libraries of the modules in Requires.private (none on Debian 12).
find_package(Threads REQUIRED)
execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --print-requires-private cpp-httplib
                OUTPUT_VARIABLE httplib_requires OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REPLACE " " "" httplib_requires "${httplib_requires}")  # "openssl >= 3.0.0" as "openssl>=3.0.0"
string(REPLACE "\n" ";" httplib_requires "${httplib_requires}")
if(httplib_requires)
  pkg_check_modules(HTTPLIB_REQUIRES REQUIRED IMPORTED_TARGET ${httplib_requires})
  target_link_libraries(PkgConfig::HTTPLIB INTERFACE PkgConfig::HTTPLIB_REQUIRES)
endif()
set(RNNSEARCH_WITH_HTTP 1)
rnnsearch_feature("serve: cpp-httplib ${HTTPLIB_VERSION}")
add_library(rnnsearch_serve STATIC
  src/serve/request.cpp
  src/serve/service.cpp
  src/serve/response.cpp
  src/serve/metrics.cpp
  src/serve/http_server.cpp
  src/serve/page.cpp
)
target_link_libraries(rnnsearch_serve PUBLIC rnnsearch_lib PkgConfig::HTTPLIB Threads::Threads)
target_compile_definitions(rnnsearch_serve PUBLIC RNNSEARCH_HAVE_HTTP)  # main.cpp, cli/serve_command.cpp
target_sources(rnnsearch_cli PRIVATE src/cli/serve_command.cpp)
target_link_libraries(rnnsearch_cli PUBLIC rnnsearch_serve)

# The load generator of docs/serve.md's table (scripts/serve_load.py), on httplib's client.
add_executable(serve_bench src/tools/serve_bench.cpp)
target_link_libraries(serve_bench PRIVATE rnnsearch_lib PkgConfig::HTTPLIB Threads::Threads Boost::program_options)

if(RNNSEARCH_BUILD_TESTS)
  # The server run as the binary on a free loopback port (tests/test_serve.cpp), and
  # serve_bench against it (through the emulator in a cross build, as rnnsearch).
  string(REPLACE "$<TARGET_FILE:rnnsearch>" "$<TARGET_FILE:serve_bench>" serve_bench_command "${rnnsearch_command}")
  add_executable(test_serve tests/test_serve.cpp)
  target_link_libraries(test_serve PRIVATE rnnsearch_lib PkgConfig::HTTPLIB Threads::Threads GTest::gtest_main)
  target_compile_definitions(test_serve PRIVATE RNNSEARCH_BINARY="${rnnsearch_command}"
                                                SERVE_BENCH_BINARY="${serve_bench_command}")
  add_dependencies(test_serve rnnsearch serve_bench)
  gtest_discover_tests(test_serve DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600 ENVIRONMENT OMP_NUM_THREADS=1)  # (CMakeLists.txt: test_cli_*)
  # Requests that must cost no more than their limits, steering refused with a 4xx
  # (tests/test_serve_limits.cpp); the server run as test_serve runs it (tests/support/serve_process.h).
  add_executable(test_serve_limits tests/test_serve_limits.cpp)
  target_link_libraries(test_serve_limits PRIVATE rnnsearch_lib PkgConfig::HTTPLIB Threads::Threads GTest::gtest_main)
  target_compile_definitions(test_serve_limits PRIVATE RNNSEARCH_BINARY="${rnnsearch_command}")
  add_dependencies(test_serve_limits rnnsearch)
  gtest_discover_tests(test_serve_limits DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300 ENVIRONMENT OMP_NUM_THREADS=1)
  # The scheduler without HTTP (tests/test_service.cpp): TranslationService called directly.
  add_executable(test_service tests/test_service.cpp)
  target_link_libraries(test_service PRIVATE rnnsearch_serve GTest::gtest_main)
  target_compile_options(test_service PRIVATE $<$<CONFIG:Release>:-O1>)
  gtest_discover_tests(test_service DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
  # The page in Debian's chromium, headless (tests/test_page.py), with Debian's python3, for which
  # setup.sh installs python3-selenium (a python3 first on PATH, such as pyenv's, lacks it). It runs
  # in the sanitizer build too, against the instrumented server. Skipped, saying so, where the
  # browser is not installed, and in a cross build (scripts/cross_arm64.sh installs no browser).
  execute_process(COMMAND /usr/bin/python3 -c "import selenium" RESULT_VARIABLE no_selenium OUTPUT_QUIET ERROR_QUIET)
  if(CMAKE_CROSSCOMPILING)
    rnnsearch_skipped_test(serve_page "a cross build (no browser for the target)")
  elseif(NOT EXISTS /usr/bin/chromium OR NOT EXISTS /usr/bin/chromedriver OR no_selenium)
    rnnsearch_skipped_test(serve_page "needs chromium, chromium-driver and python3-selenium")
  else()
    add_test(NAME serve_page
             COMMAND ${CMAKE_COMMAND} -E env PYTHONDONTWRITEBYTECODE=1 RNNSEARCH_BINARY=$<TARGET_FILE:rnnsearch>
                     RNNSEARCH_SOURCE_DIR=${PROJECT_SOURCE_DIR}
                     RNNSEARCH_PAGE_SCREENSHOT=${PROJECT_BINARY_DIR}/serve-page.png
                     /usr/bin/python3 -m unittest -v test_page
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/tests)
    set_tests_properties(serve_page PROPERTIES TIMEOUT 600 COST 45)  # (COST: CMakeLists.txt, mpi_two_ranks)
  endif()
endif()
