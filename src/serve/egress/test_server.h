// The egress tests' names for the shared loopback server (testing/http_server.h): a
// handler answers every request; requests() and connections() show what a "victim" saw.
#ifndef PAGEREEL_SERVE_EGRESS_TEST_SERVER_H_
#define PAGEREEL_SERVE_EGRESS_TEST_SERVER_H_

#include "testing/http_server.h"

namespace pagereel::serve::egress::testing {

using LoopbackServer = pagereel::testing::HttpServer;
using TestRequest = LoopbackServer::Request;
using TestResponse = LoopbackServer::Response;

}  // namespace pagereel::serve::egress::testing

#endif  // PAGEREEL_SERVE_EGRESS_TEST_SERVER_H_
