# rnnsearch serve (docs/serve.md): the HTTP server, on cpp-httplib from Debian
# (libcpp-httplib-dev, a compiled library; its pkg-config flags, which set its SSL and
# compression options, must be used as they change its classes' layout).
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
find_package(Threads REQUIRED)
add_library(rnnsearch_serve STATIC
  src/serve/service.cpp
  src/serve/http_server.cpp
  src/serve/page.cpp
)
target_link_libraries(rnnsearch_serve PUBLIC rnnsearch_lib PkgConfig::HTTPLIB Threads::Threads)
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
  gtest_discover_tests(test_serve DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)
  # The page in Debian's chromium, headless (tests/test_page.py), with Debian's python3, for which
  # setup.sh installs python3-selenium (a python3 first on PATH, such as pyenv's, lacks it). It runs
  # in the sanitizer build too, against the instrumented server. Not in a cross build:
  # scripts/cross_arm64.sh installs no browser.
  if(NOT CMAKE_CROSSCOMPILING)
    add_test(NAME serve_page
             COMMAND ${CMAKE_COMMAND} -E env PYTHONDONTWRITEBYTECODE=1 RNNSEARCH_BINARY=$<TARGET_FILE:rnnsearch>
                     RNNSEARCH_SOURCE_DIR=${PROJECT_SOURCE_DIR}
                     RNNSEARCH_PAGE_SCREENSHOT=${PROJECT_BINARY_DIR}/serve-page.png
                     /usr/bin/python3 -m unittest -v test_page
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/tests)
    set_tests_properties(serve_page PROPERTIES TIMEOUT 600)
  endif()
endif()
