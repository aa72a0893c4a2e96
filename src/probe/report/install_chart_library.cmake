# Installs the probe report's chart library with 'npm ci' from the committed lock file (the
# source of truth for what is embedded), then writes OUT with embed_assets.cmake. Run by the
# build as:
#   cmake -DNPM=<npm or empty> -DSOURCE=<src/probe/report> -DDIR=<build folder> -DSTAMP=<file>
#         -DOUT=<report_assets.cc> -P install_chart_library.cmake
# It never fails the build for the network: when npm is missing or cannot install the library
# (no registry, no network) it removes what npm left half-installed, writes empty assets
# ('probe --report' then refuses with a clear message), leaves STAMP absent and warns. A
# missing STAMP makes the next build try again, so the charts come with the first build that
# has npm and reaches the registry.

cmake_minimum_required(VERSION 3.25)  # find_program wants an executable npm (CMP0109).

# npm runs in DIR, which the build folder does not have until now.
file(MAKE_DIRECTORY "${DIR}")
file(REMOVE "${STAMP}")
file(COPY "${SOURCE}/package.json" "${SOURCE}/package-lock.json" DESTINATION "${DIR}")

if(NOT NPM)
  # cmake did not find npm when it configured; it may have been installed since.
  find_program(npm_on_path npm)
  set(NPM "${npm_on_path}")
endif()

# Against a registry that refuses connections npm ci gives up after about 70 s (its default
# two retries with back-off; measured with npm 11.19); against one that drops packets each
# request can wait minutes. The first try gets npm's own retries, bounded by a timeout; once
# a build has seen npm fail, later builds try once, quickly, so an offline machine still
# builds in seconds.
set(failed_marker "${DIR}/npm-ci-failed")
set(npm_args ci --ignore-scripts --no-audit --no-fund --loglevel=error)
set(timeout 300)
if(EXISTS "${failed_marker}")
  list(APPEND npm_args --fetch-retries=0)
  set(timeout 30)
endif()

set(reason "")
set(remedy "make the npm registry reachable (npm's registry and proxy settings: 'npm config list')")
if(NOT NPM)
  set(reason "npm was not found")
  set(remedy "install npm (Debian: apt-get install npm; scripts/install-deps.sh does it)")
else()
  execute_process(
    COMMAND "${NPM}" ${npm_args}
    WORKING_DIRECTORY "${DIR}"
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE out
    TIMEOUT ${timeout})
  if(NOT rc STREQUAL "0")
    # npm's first lines say what went wrong ("npm error code ECONNREFUSED", then the URL and
    # the reason); a stack trace follows. Keep the line that names the request, else the code.
    string(REGEX MATCH "[^\n]*request to [^\n]*" reason "${out}")
    if(NOT reason)
      string(REGEX MATCH "npm (error|ERR!) code [^\n]*" reason "${out}")
    endif()
    string(REGEX REPLACE "^npm (error|ERR!) ([a-z]+ )?" "" reason "${reason}")
    if(NOT reason)
      set(reason "${rc}")  # The exit status, or "Process terminated due to timeout".
    endif()
    set(reason "'${NPM} ci' in ${DIR} failed: ${reason}")
  endif()
endif()

set(UPLOT "${DIR}/node_modules/uplot")
if(reason)
  file(REMOVE_RECURSE "${DIR}/node_modules")
  set(UPLOT "")
  file(TOUCH "${failed_marker}")
  message(WARNING
    "'pagereel probe --report' is built without its charts: the chart library (uPlot, from "
    "the npm registry) could not be installed (${reason}). Everything else builds and works; "
    "'probe --report' refuses until the charts are in. To get them, ${remedy} and build "
    "again: every build tries until it succeeds. Configure with -DPAGEREEL_PROBE_CHARTS=OFF to "
    "build without charts on purpose.")
endif()
include("${CMAKE_CURRENT_LIST_DIR}/embed_assets.cmake")
if(NOT reason)
  file(REMOVE "${failed_marker}")
  file(TOUCH "${STAMP}")
endif()
