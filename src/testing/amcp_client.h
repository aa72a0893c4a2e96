// AmcpClient: a test's client of AMCP over loopback (Boost.Asio, header-only): sends a line
// and reads one reply as casparcg-connection does (201 and 400: one line of data; 200:
// lines up to an empty one). Reads give up after a timeout. One thread.
#ifndef PAGEREEL_TESTING_AMCP_CLIENT_H_
#define PAGEREEL_TESTING_AMCP_CLIENT_H_

#include <array>
#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace pagereel::testing {

class AmcpClient {
 public:
  explicit AmcpClient(uint16_t port) {
    boost::system::error_code ec;
    socket_.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port), ec);
    connected_ = !ec;
  }
  bool connected() const { return connected_; }

  void Send(const std::string& bytes) {
    boost::system::error_code ignored;
    boost::asio::write(socket_, boost::asio::buffer(bytes), ignored);
  }

  // The next line, or nullopt when the server closed the connection or nothing came.
  std::optional<std::string> Line(std::chrono::milliseconds timeout = std::chrono::milliseconds(30'000)) {
    for (;;) {
      const size_t end = pending_.find("\r\n");
      if (end != std::string::npos) {
        std::string line = pending_.substr(0, end);
        pending_.erase(0, end + 2);
        return line;
      }
      std::array<char, 4096> buffer;
      boost::system::error_code error;
      size_t got = 0;
      bool done = false;
      socket_.async_read_some(boost::asio::buffer(buffer), [&](boost::system::error_code ec, size_t n) {
        error = ec;
        got = n;
        done = true;
      });
      io_.restart();
      io_.run_for(timeout);
      if (!done) {
        socket_.cancel();
        io_.restart();
        io_.run();
        return std::nullopt;
      }
      if (error) return std::nullopt;
      pending_.append(buffer.data(), got);
    }
  }

  // Sends `command` and returns the whole reply, its lines joined by "\n".
  std::string Command(const std::string& command) {
    Send(command + "\r\n");
    return Reply();
  }
  std::string Reply() {
    std::optional<std::string> first = Line();
    if (!first) return "(closed)";
    std::string reply = *first;
    std::string code = reply.starts_with("RES ") ? reply.substr(reply.find(' ', 4) + 1, 3)
                                                 : reply.substr(0, 3);
    if (code == "201" || code == "400") {
      reply += "\n" + Line().value_or("(closed)");
    } else if (code == "200") {
      for (std::optional<std::string> line = Line(); line && !line->empty(); line = Line()) {
        reply += "\n" + *line;
      }
    }
    return reply;
  }

  // Whether the server has closed the connection (reads end).
  bool Closed() { return !Line(std::chrono::milliseconds(10'000)).has_value(); }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_{io_};
  bool connected_ = false;
  std::string pending_;
};

}  // namespace pagereel::testing

#endif  // PAGEREEL_TESTING_AMCP_CLIENT_H_
