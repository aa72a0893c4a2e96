// The short films the render module's sound tests make (sound_render_test.cc,
// web_audio_render_test.cc): a page at `url` into `output`, 320x180 at 30 fps, in segments
// of 20 frames. Test-only.
#ifndef PAGEREEL_RENDER_SOUND_TEST_FILM_H_
#define PAGEREEL_RENDER_SOUND_TEST_FILM_H_

#include <cstdint>
#include <string>

#include "encode/film.h"
#include "render/renderer.h"

namespace pagereel::render {

inline RenderOptions SoundTestFilm(const std::string& url, const std::string& output, int lanes, int64_t frames) {
  RenderOptions o;
  o.page.url = url;
  o.page.width = 320;
  o.page.height = 180;
  o.page.fps = Rational{30, 1};
  o.frames = frames;
  o.lanes = lanes;
  o.segment_frames = 20;
  o.output = output;
  o.kind = encode::FilmKindForPath(o.output, false).value();
  return o;
}

}  // namespace pagereel::render

#endif  // PAGEREEL_RENDER_SOUND_TEST_FILM_H_
