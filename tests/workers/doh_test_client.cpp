// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/workers/doh_test_client.hpp"

#include <algorithm>
#include <cstring>

#include "workers/doh_request.hpp"

namespace dnsarena::test {

struct DohClient::Body {
  std::vector<std::uint8_t> bytes;
  std::size_t sent = 0;
};

struct DohClientCallbacks {
  static DohClient& client(void* user) { return *static_cast<DohClient*>(user); }
  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name, std::size_t namelen,
                       const std::uint8_t* value, std::size_t valuelen, std::uint8_t, void* user) {
    DohResponse& r = client(user).responses_[frame->hd.stream_id];
    const std::string n(reinterpret_cast<const char*>(name), namelen), v(reinterpret_cast<const char*>(value), valuelen);
    if (n == ":status") r.status = std::stoi(v);
    else r.headers[n] = v;
    return 0;
  }
  static int on_data(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t* data, std::size_t len,
                     void* user) {
    DohClient& c = client(user);
    auto& body = c.responses_[id].body;
    body.insert(body.end(), data, data + len);
    if (c.hold_window_) c.unconsumed_[id] += len;
    return 0;
  }
  static int on_close(nghttp2_session*, std::int32_t id, std::uint32_t code, void* user) {
    DohResponse& r = client(user).responses_[id];
    r.closed = true;
    r.reset_code = code;
    return 0;
  }
  static int on_frame(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type == NGHTTP2_GOAWAY) client(user).goaway_ = true;
    if (frame->hd.type == NGHTTP2_DATA && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) ++client(user).record_answers_;
    return 0;
  }
  static ssize_t read_body(nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length, std::uint32_t* flags,
                           nghttp2_data_source* source, void*) {
    auto* b = static_cast<DohClient::Body*>(source->ptr);
    const std::size_t n = std::min(length, b->bytes.size() - b->sent);
    std::memcpy(buf, b->bytes.data() + b->sent, n);
    b->sent += n;
    if (b->sent == b->bytes.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
};

std::string base64url(const std::vector<std::uint8_t>& bytes) { return workers::encode_base64url(bytes); }

DohClient::DohClient(std::uint16_t port, std::chrono::milliseconds timeout, DohWindow window)
    : tls_(std::make_unique<TlsClient>(port, std::vector<std::uint8_t>{}, timeout, "h2")),
      hold_window_(window == DohWindow::held) {
  if (!tls_->connected() || tls_->alpn() != "h2") return;
  nghttp2_session_callbacks* cb = nullptr;
  nghttp2_session_callbacks_new(&cb);
  nghttp2_session_callbacks_set_on_header_callback(cb, DohClientCallbacks::on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, DohClientCallbacks::on_data);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, DohClientCallbacks::on_close);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, DohClientCallbacks::on_frame);
  // Up to 1000 streams sent before the server's SETTINGS arrive: a test may ask for more
  // than the server allows.
  nghttp2_option* opt = nullptr;
  nghttp2_option_new(&opt);
  nghttp2_option_set_peer_max_concurrent_streams(opt, 1000);
  if (hold_window_) nghttp2_option_set_no_auto_window_update(opt, 1);
  nghttp2_session_client_new2(&h2_, cb, this, opt);
  nghttp2_option_del(opt);
  nghttp2_session_callbacks_del(cb);
  nghttp2_submit_settings(h2_, NGHTTP2_FLAG_NONE, nullptr, 0);
  ok_ = true;
}

DohClient::~DohClient() {
  if (h2_) nghttp2_session_del(h2_);
}

std::int32_t DohClient::request(const std::string& method, const std::string& path, const HeaderList& extra,
                                const std::vector<std::uint8_t>& body, bool end_stream) {
  if (!ok_) return -1;
  HeaderList all{{":method", method}, {":path", path}, {":scheme", "https"}, {":authority", "doh.test"}};
  all.insert(all.end(), extra.begin(), extra.end());
  std::vector<nghttp2_nv> nva;
  for (auto& [n, v] : all)
    nva.push_back({reinterpret_cast<std::uint8_t*>(n.data()), reinterpret_cast<std::uint8_t*>(v.data()), n.size(),
                   v.size(), NGHTTP2_NV_FLAG_NONE});
  if (!end_stream)
    return nghttp2_submit_headers(h2_, NGHTTP2_FLAG_NONE, -1, nullptr, nva.data(), nva.size(), nullptr);
  if (body.empty()) return nghttp2_submit_request(h2_, nullptr, nva.data(), nva.size(), nullptr, nullptr);
  auto b = std::make_unique<Body>();
  b->bytes = body;
  nghttp2_data_provider prd{};
  prd.source.ptr = b.get();
  prd.read_callback = DohClientCallbacks::read_body;
  const std::int32_t id = nghttp2_submit_request(h2_, nullptr, nva.data(), nva.size(), &prd, nullptr);
  if (id > 0) bodies_[id] = std::move(b);
  return id;
}

std::int32_t DohClient::get(const std::vector<std::uint8_t>& query, const std::string& path) {
  return request("GET", path + "?dns=" + base64url(query), {{"accept", "application/dns-message"}});
}

std::int32_t DohClient::post(const std::vector<std::uint8_t>& query, const std::string& path,
                             const std::string& content_type) {
  return request("POST", path, {{"content-type", content_type}, {"accept", "application/dns-message"}}, query);
}

void DohClient::ping() {
  if (ok_) nghttp2_submit_ping(h2_, NGHTTP2_FLAG_NONE, nullptr);
}

bool DohClient::pump_until(const std::function<bool()>& done, std::chrono::milliseconds wait) {
  const auto end = std::chrono::steady_clock::now() + wait;
  std::uint8_t buf[16384];
  std::vector<std::uint8_t> out;
  while (ok_) {
    out.clear();  // what is pending goes in one write: requests made together share records
    for (;;) {
      const std::uint8_t* data = nullptr;
      const ssize_t n = nghttp2_session_mem_send(h2_, &data);
      if (n <= 0) break;
      out.insert(out.end(), data, data + n);
    }
    if (!out.empty() && !tls_->send_raw(out.data(), out.size())) {
      eof_ = true;
      return done();
    }
    if (done()) return true;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0 || eof_) return false;
    const long r = tls_->receive_raw(buf, sizeof buf, left);
    if (r < 0) {
      eof_ = true;
      return done();
    }
    record_answers_ = 0;  // receive_raw returns one TLS record's bytes
    if (r > 0 && nghttp2_session_mem_recv(h2_, buf, static_cast<std::size_t>(r)) < 0) {
      eof_ = true;
      return done();
    }
    max_record_answers_ = std::max(max_record_answers_, record_answers_);
  }
  return false;
}

bool DohClient::wait(std::int32_t id, std::chrono::milliseconds w) {
  return pump_until([&] { return responses_[id].closed; }, w);
}

std::size_t DohClient::held_window_bytes() const {
  std::size_t n = 0;
  for (const auto& [id, bytes] : unconsumed_) n += bytes;
  return n;
}

void DohClient::release_window() {
  for (const auto& [id, bytes] : unconsumed_) nghttp2_session_consume(h2_, id, bytes);
  unconsumed_.clear();
}

std::uint32_t DohClient::server_max_streams() const {
  return h2_ ? nghttp2_session_get_remote_settings(h2_, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS) : 0;
}

}  // namespace dnsarena::test
