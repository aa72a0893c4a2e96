# Installs the conformance pages' libraries (npm ci from package-lock.json), makes the
# test media with ffmpeg and the Rive page's animation with make_riv.py. Run as:
# cmake -DNPM=npm -DFFMPEG=ffmpeg -DPYTHON=python3 -DDIR=tests/conformance -P setup.cmake
set(stamp "${DIR}/node_modules/.package-lock.json")
if(NOT EXISTS "${stamp}" OR "${DIR}/package-lock.json" IS_NEWER_THAN "${stamp}")
  execute_process(COMMAND "${NPM}" ci --ignore-scripts --no-audit --no-fund --loglevel=error
                  WORKING_DIRECTORY "${DIR}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "npm ci in ${DIR} failed (${rc}): the conformance pages load GSAP, "
                        "anime.js, lottie-web, three.js, Chart.js and d3 from the npm registry")
  endif()
endif()

# Makes media/NAME once with ffmpeg from a lavfi source and the encoder arguments after it
# (written aside and renamed, so a stopped run leaves no half file).
function(make_media name source)
  set(out "${DIR}/media/${name}")
  if(EXISTS "${out}")
    return()
  endif()
  get_filename_component(ext "${name}" LAST_EXT)
  file(MAKE_DIRECTORY "${DIR}/media")
  execute_process(COMMAND "${FFMPEG}" -v error -y -f lavfi -i "${source}" ${ARGN} "${out}.tmp${ext}"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ffmpeg could not make ${out} (${rc})")
  endif()
  file(RENAME "${out}.tmp${ext}" "${out}")
endfunction()

# Each of its 100 frames (25 fps, 4 s) shows its own number as the pages' 20-bit code.
make_media(counter.webm
  "color=black:s=640x40:r=25:d=4,geq=lum='if(bitand(floor(N/pow(2\\,19-floor(X/32)))\\,1)\\,255\\,0)':cb=128:cr=128"
  -c:v libvpx-vp9 -pix_fmt yuv420p -g 25)

# A 0.5 s mono 16-bit WAV at 48 kHz, silent but for a 1 ms click (48 samples of +-0.885)
# at 50 ms: the sound pages play it and check_sound.py finds its onset.
make_media(click.wav
  "aevalsrc=if(between(n\\,2400\\,2447)\\,if(mod(n\\,2)\\,-0.885\\,0.885)\\,0):s=48000:d=0.5"
  -c:a pcm_s16le)

# The Rive page's animation (pages/rive): no .riv ships on npm, so make_riv.py writes one
# (python3, standard library only; written aside and renamed). Remade when the script is
# newer than the file.
set(riv "${DIR}/media/rive.riv")
if(NOT EXISTS "${riv}" OR "${DIR}/make_riv.py" IS_NEWER_THAN "${riv}")
  if(NOT PYTHON)
    set(PYTHON python3)
  endif()
  file(MAKE_DIRECTORY "${DIR}/media")
  execute_process(COMMAND "${PYTHON}" "${DIR}/make_riv.py" "${riv}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "make_riv.py could not make ${riv} (${rc})")
  endif()
endif()
