// The bearer-token check of pagereel's servers: whether a request's Authorization header
// carries the server's token. Pure; safe from any thread.
#ifndef PAGEREEL_HTTP_TOKEN_H_
#define PAGEREEL_HTTP_TOKEN_H_

#include <string_view>

namespace pagereel::http {

// Whether a request whose Authorization header is `authorization` (empty when it has none)
// may pass a server guarded by `token`: true when `token` is empty (no token needed) or the
// header is "Bearer TOKEN" (the scheme in any case, one or more spaces before the token,
// nothing after it). The comparison takes the same time wherever the two
// differ, so the token does not leak through timing; only its length may.
bool IsAuthorized(std::string_view authorization, std::string_view token);

}  // namespace pagereel::http

#endif  // PAGEREEL_HTTP_TOKEN_H_
