# Third-party libraries, all from Debian packages installed by scripts/setup.sh.
find_package(Threads REQUIRED)
find_package(simdjson REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json REQUIRED)

# isa-l (streamed gzip inflate) ships no CMake config on Debian.
find_path(ISAL_INCLUDE_DIR isa-l/igzip_lib.h REQUIRED)
find_library(ISAL_LIBRARY isal REQUIRED)
add_library(isal::isal UNKNOWN IMPORTED)
set_target_properties(isal::isal PROPERTIES
  IMPORTED_LOCATION ${ISAL_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${ISAL_INCLUDE_DIR})

if(RANKSCOPE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(RANKSCOPE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

# cpp-httplib (the daemon's HTTP API and the CLI's client): Debian ships it compiled, with its
# build flags (OpenSSL, zlib, brotli) in the pkg-config file; the header must see the same ones.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET GLOBAL cpp-httplib)

# libxlsxwriter (`rankscope compare --xlsx`): Debian's libxlsxwriter-dev, found by pkg-config.
pkg_check_modules(XLSXWRITER REQUIRED IMPORTED_TARGET GLOBAL xlsxwriter)

# MPI (`rankscope analyze --mpi`, docs/scale.md): optional. Open MPI from Debian
# (libopenmpi-dev, openmpi-bin; scripts/setup.sh); without it, --mpi says the build lacks it.
option(RANKSCOPE_WITH_MPI "Build `rankscope analyze --mpi` when an MPI library is found" ON)
if(RANKSCOPE_WITH_MPI)
  set(MPI_CXX_SKIP_MPICXX ON)  # the C API only: no deprecated C++ bindings
  find_package(MPI COMPONENTS CXX)
endif()
set(RANKSCOPE_HAVE_MPI ${MPI_CXX_FOUND})
