// SPDX-License-Identifier: GPL-3.0-or-later
// A DNS-over-HTTPS test client: an nghttp2 client session over TlsClient (ALPN "h2"),
// blocking, one thread. It can send what kdig and curl will not: many streams at once,
// a stream that never ends, huge headers, an oversized body, raw bytes.
#pragma once
#include <nghttp2/nghttp2.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/workers/tls_test_support.hpp"

namespace dnsarena::test {

struct DohResponse {
  int status = 0;  // 0: no response headers (yet)
  std::map<std::string, std::string> headers;
  std::vector<std::uint8_t> body;
  bool closed = false;          // the stream closed (after its response, or reset)
  std::uint32_t reset_code = 0;  // the RST_STREAM error code when it was reset, else 0
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// base64url without padding (RFC 8484 4.1).
std::string base64url(const std::vector<std::uint8_t>& bytes);

// How the client gives back its flow-control window (RFC 9113 6.9) as it reads DATA.
enum class DohWindow {
  automatic,  // nghttp2's WINDOW_UPDATE once half a window is read, sent with the next pump
  held,       // none until release_window(): what a client that stops writing does
};

class DohClient {
public:
  explicit DohClient(std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::milliseconds(3000),
                     DohWindow window = DohWindow::automatic);
  ~DohClient();
  DohClient(const DohClient&) = delete;
  DohClient& operator=(const DohClient&) = delete;
  bool connected() const { return ok_; }
  TlsClient& tls() { return *tls_; }

  // A request with :method, :path, :scheme https, :authority, then `extra`; `body` sent as
  // DATA unless `end_stream` is false (then only HEADERS, the stream left open). Returns
  // the stream id (< 0 on error). Nothing is sent until pump()/wait_*.
  std::int32_t request(const std::string& method, const std::string& path, const HeaderList& extra = {},
                       const std::vector<std::uint8_t>& body = {}, bool end_stream = true);
  std::int32_t get(const std::vector<std::uint8_t>& query, const std::string& path = "/dns-query");
  std::int32_t post(const std::vector<std::uint8_t>& query, const std::string& path = "/dns-query",
                    const std::string& content_type = "application/dns-message");

  // A PING (the server must answer each with a PING ACK). Sent with the next pump.
  void ping();
  // Sends what is pending and reads until `done()` or `wait` passes or the connection
  // ends. True when done() held.
  bool pump_until(const std::function<bool()>& done, std::chrono::milliseconds wait);
  // Until stream `id` is closed (its response complete, or reset).
  bool wait(std::int32_t id, std::chrono::milliseconds wait = std::chrono::milliseconds(3000));
  const DohResponse& response(std::int32_t id) { return responses_[id]; }
  bool eof() const { return eof_; }  // the server closed the connection
  bool goaway() const { return goaway_; }
  std::uint32_t server_max_streams() const;
  // DohWindow::held: the DATA bytes read since the last release, and a WINDOW_UPDATE for
  // all of them (connection and streams), sent with the next pump.
  std::size_t held_window_bytes() const;
  void release_window();
  // The most answers (DATA frames ending a stream) one TLS record from the server held.
  std::size_t max_answers_per_record() const { return max_record_answers_; }

  struct Body;

private:
  std::unique_ptr<TlsClient> tls_;
  nghttp2_session* h2_ = nullptr;
  bool ok_ = false, eof_ = false, goaway_ = false;
  std::map<std::int32_t, DohResponse> responses_;
  std::map<std::int32_t, std::unique_ptr<Body>> bodies_;
  bool hold_window_ = false;
  std::map<std::int32_t, std::size_t> unconsumed_;  // held: DATA bytes read per stream
  std::size_t record_answers_ = 0, max_record_answers_ = 0;
  friend struct DohClientCallbacks;
};

}  // namespace dnsarena::test
