// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/doh_server.hpp"

#include <time.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <spdlog/spdlog.h>
#include <string_view>

#include "common/monotonic_clock.hpp"
#include "dns/edns_padding.hpp"

namespace dnsarena::workers {

namespace {
constexpr std::size_t kOutGather = 64 * 1024;  // frames gathered before a transport write
constexpr std::size_t kFrameHeader = 9;         // RFC 9113 4.1: length (3), type, flags, stream id (4)

using common::monotonic_ms;

nghttp2_nv header(std::string_view name, std::string_view value) {
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}
}  // namespace

struct DohServer::Stream {
  std::string method, path, content_type;
  std::vector<std::uint8_t> body;  // the request's, then the answer's
  std::size_t sent = 0;            // of the answer, given to nghttp2
  std::size_t header_bytes = 0;
  bool too_large = false;
  bool handed = false;     // the handler has the request: its answer is awaited
  bool responded = false;  // response submitted
};

struct DohServer::Session {
  DohServer* owner = nullptr;
  std::uint64_t conn_id = 0;
  nghttp2_session* h2 = nullptr;
  bool reading = false;  // inside nghttp2_session_mem_recv: frames wait until it returns
  std::unordered_map<std::int32_t, Stream> streams;
  std::vector<std::int32_t> deferred;  // answers waiting for flow-control room for one frame
  ~Session() {
    if (h2) nghttp2_session_del(h2);
  }
};

// nghttp2's callbacks; user_data is the Session.
struct Callbacks {
  static DohServer::Stream* stream(void* user, std::int32_t id) {
    auto& streams = static_cast<DohServer::Session*>(user)->streams;
    auto it = streams.find(id);
    return it == streams.end() ? nullptr : &it->second;
  }

  static int begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST)
      static_cast<DohServer::Session*>(user)->streams.try_emplace(frame->hd.stream_id);
    return 0;
  }

  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name, std::size_t namelen,
                       const std::uint8_t* value, std::size_t valuelen, std::uint8_t, void* user) {
    DohServer::Stream* st = stream(user, frame->hd.stream_id);
    if (!st || st->handed || st->responded) return 0;  // trailers and the like: not kept
    st->header_bytes += namelen + valuelen + 32;
    if (st->header_bytes > kDohMaxHeaderBytes) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // RST_STREAM
    const std::string_view n(reinterpret_cast<const char*>(name), namelen);
    const std::string_view v(reinterpret_cast<const char*>(value), valuelen);
    if (n == ":method") st->method = v;
    else if (n == ":path") st->path = v;
    else if (n == "content-type") st->content_type = v;
    return 0;
  }

  static int on_data(nghttp2_session*, std::uint8_t, std::int32_t stream_id, const std::uint8_t* data, std::size_t len,
                     void* user) {
    auto* s = static_cast<DohServer::Session*>(user);
    DohServer::Stream* st = stream(user, stream_id);
    if (!st || st->responded) return 0;
    if (st->body.size() + len > kDohMaxMessage) {
      // Answered now; the rest of the body is read and dropped (responded above).
      st->too_large = true;
      s->owner->complete(*s, stream_id, *st);
      return 0;
    }
    st->body.insert(st->body.end(), data, data + len);
    return 0;
  }

  static int on_frame(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
        !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
      return 0;
    auto* s = static_cast<DohServer::Session*>(user);
    DohServer::Stream* st = stream(user, frame->hd.stream_id);
    if (st && !st->handed && !st->responded) s->owner->complete(*s, frame->hd.stream_id, *st);
    return 0;
  }

  static int on_stream_close(nghttp2_session*, std::int32_t stream_id, std::uint32_t, void* user) {
    static_cast<DohServer::Session*>(user)->streams.erase(stream_id);
    return 0;
  }

  // An answer that fits one DATA frame goes out in one: while the flow-control windows
  // leave less room than that, it waits (deferred, resumed after the next input, which
  // is where WINDOW_UPDATE comes from). Clients that keep one reassembly buffer per
  // connection (dnsperf -m doh) misread answers split across interleaved frames.
  static ssize_t read_answer(nghttp2_session* h2, std::int32_t stream_id, std::uint8_t* buf, std::size_t length,
                             std::uint32_t* data_flags, nghttp2_data_source*, void* user) {
    DohServer::Stream* st = stream(user, stream_id);
    if (!st) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    const std::size_t left = st->body.size() - st->sent;
    if (left > length && left <= nghttp2_session_get_remote_settings(h2, NGHTTP2_SETTINGS_MAX_FRAME_SIZE)) {
      static_cast<DohServer::Session*>(user)->deferred.push_back(stream_id);
      return NGHTTP2_ERR_DEFERRED;
    }
    const std::size_t n = std::min(length, left);
    std::memcpy(buf, st->body.data() + st->sent, n);
    st->sent += n;
    if (st->sent == st->body.size()) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
};

DohServer::DohServer(int epoll_fd, std::vector<int> listen_fds, std::uint64_t listen_tag, std::uint64_t tag,
                     const TcpLimits& limits, const TlsServerSettings* tls, DohSettings settings, Handler handler)
    : settings_(std::move(settings)),
      handler_(std::move(handler)),
      transport_(epoll_fd, std::move(listen_fds), listen_tag, tag, limits, nullptr, tls) {
  transport_.set_protocol(this);
  nghttp2_session_callbacks_new(&callbacks_);
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks_, Callbacks::begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(callbacks_, Callbacks::on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks_, Callbacks::on_data);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks_, Callbacks::on_frame);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks_, Callbacks::on_stream_close);
  nghttp2_option_new(&options_);
  nghttp2_option_set_max_deflate_dynamic_table_size(options_, 4096);
  msg_.reserve(kDohMaxMessage);
}

DohServer::~DohServer() {
  sessions_.clear();
  nghttp2_option_del(options_);
  nghttp2_session_callbacks_del(callbacks_);
}

std::size_t DohServer::streams() const {
  std::size_t n = 0;
  for (const auto& [id, s] : sessions_) n += s->streams.size();
  return n;
}

DohServer::Session* DohServer::session(std::uint64_t conn_id) {
  auto it = sessions_.find(conn_id);
  return it == sessions_.end() ? nullptr : it->second.get();
}

bool DohServer::on_input(std::uint64_t conn_id, std::span<const std::uint8_t> bytes) {
  Session* s = session(conn_id);
  if (!s) {
    auto made = std::make_unique<Session>();
    made->owner = this;
    made->conn_id = conn_id;
    if (nghttp2_session_server_new2(&made->h2, callbacks_, made.get(), options_) != 0) return false;
    const nghttp2_settings_entry entries[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, settings_.max_streams},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, static_cast<std::uint32_t>(kDohMaxHeaderBytes)},
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
    };
    if (nghttp2_submit_settings(made->h2, NGHTTP2_FLAG_NONE, entries, std::size(entries)) != 0) return false;
    s = sessions_.emplace(conn_id, std::move(made)).first->second.get();
  }
  s->reading = true;
  const ssize_t r = nghttp2_session_mem_recv(s->h2, bytes.data(), bytes.size());
  s->reading = false;
  for (const std::int32_t id : s->deferred) nghttp2_session_resume_data(s->h2, id);  // a WINDOW_UPDATE may have come
  s->deferred.clear();
  if (r < 0) spdlog::debug("doh: connection closed: {}", nghttp2_strerror(static_cast<int>(r)));
  if (r == NGHTTP2_ERR_BAD_CLIENT_MAGIC) return false;  // not HTTP/2: nothing to tell it
  const bool more = r >= 0 && (nghttp2_session_want_read(s->h2) || nghttp2_session_want_write(s->h2));
  if (!flush(*s)) return true;  // closed by a failed write
  return more;
}

void DohServer::on_close(std::uint64_t conn_id) { sessions_.erase(conn_id); }

void DohServer::stop_accepting() {
  transport_.stop_accepting();
  std::vector<std::uint64_t> ids;
  for (const auto& [id, s] : sessions_) ids.push_back(id);
  for (const std::uint64_t id : ids)  // by id: a failed write closes (erases) its session
    if (Session* s = session(id); s && nghttp2_submit_shutdown_notice(s->h2) == 0) flush(*s);
}

bool DohServer::flush(Session& s) {
  const std::uint64_t conn_id = s.conn_id;
  out_.clear();
  std::size_t scanned = 0;  // out_'s bytes up to here are whole frames, none ending an answer
  // Writes out_'s first `n` bytes (one TLS record, or several past 16 KiB) and keeps the rest.
  // After a write `s` may be gone (a write error closes the connection).
  auto write = [&](std::size_t n) {
    if (n > 0 && !transport_.write(conn_id, {out_.data(), n})) return false;
    out_.erase(out_.begin(), out_.begin() + static_cast<long>(n));
    scanned = 0;
    return true;
  };
  for (;;) {
    const std::uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(s.h2, &data);
    if (n > 0) out_.insert(out_.end(), data, data + n);
    // Every answer ends its TLS record (see the header): after each DATA frame with
    // END_STREAM, what is gathered is written.
    while (scanned + kFrameHeader <= out_.size()) {
      const std::uint8_t* h = out_.data() + scanned;
      const std::size_t end = scanned + kFrameHeader + (std::size_t{h[0]} << 16 | std::size_t{h[1]} << 8 | h[2]);
      if (end > out_.size()) break;
      scanned = end;
      if (h[3] == NGHTTP2_DATA && (h[4] & NGHTTP2_FLAG_END_STREAM) && !write(end)) return false;
    }
    if (n <= 0 || out_.size() >= kOutGather) {
      if (!write(out_.size())) return false;
      if (n <= 0) return true;
    }
  }
}

void DohServer::respond(Session& s, std::int32_t stream_id, Stream& st, DohStatus status) {
  st.responded = true;
  char code[8], length[24], cache[32];
  const auto text = [](char* first, char* last, std::uint64_t v) {
    return std::string_view(first, static_cast<std::size_t>(std::to_chars(first, last, v).ptr - first));
  };
  const std::string_view code_text = text(code, code + sizeof code, static_cast<unsigned>(status));
  if (st.body.empty()) {
    const nghttp2_nv nva[] = {header(":status", code_text), header("content-length", "0")};
    nghttp2_submit_response(s.h2, stream_id, nva, std::size(nva), nullptr);
  } else {
    st.sent = 0;
    constexpr std::string_view kMaxAge = "max-age=";
    std::memcpy(cache, kMaxAge.data(), kMaxAge.size());
    const std::string_view age = text(cache + kMaxAge.size(), cache + sizeof cache, min_ttl(st.body));
    const nghttp2_nv nva[] = {header(":status", code_text), header("content-type", kDohMediaType),
                              header("content-length", text(length, length + sizeof length, st.body.size())),
                              header("cache-control", {cache, kMaxAge.size() + age.size()})};
    nghttp2_data_provider data{};
    data.read_callback = Callbacks::read_answer;
    nghttp2_submit_response(s.h2, stream_id, nva, std::size(nva), &data);
  }
  transport_.mark_progress(s.conn_id, monotonic_ms());
  if (!s.reading) flush(s);
}

void DohServer::complete(Session& s, std::int32_t stream_id, Stream& st) {
  const DohRequest req{st.method, st.path, st.content_type, st.body, st.too_large};
  const DohStatus status = check_request(req, settings_.path, msg_);
  if (status != DohStatus::ok) {
    st.body.clear();  // an error has no body
    respond(s, stream_id, st, status);
    return;
  }
  st.handed = true;
  st.body.clear();
  st.body.shrink_to_fit();
  transport_.mark_progress(s.conn_id, monotonic_ms());
  handler_(s.conn_id, static_cast<std::uint32_t>(stream_id), msg_.data(), msg_.size());
}

void DohServer::send(std::uint64_t conn_id, std::uint32_t stream, std::span<const std::uint8_t> msg) {
  Session* s = session(conn_id);
  if (!s) return;
  auto it = s->streams.find(static_cast<std::int32_t>(stream));
  if (it == s->streams.end() || it->second.responded) return;
  // Padded straight into the stream's buffer: the answer with a Padding option (4 bytes of
  // option header) grows by less than one block.
  std::vector<std::uint8_t>& body = it->second.body;
  body.resize(std::min(kDohMaxMessage, msg.size() + 4 + dns::kResponsePaddingBlock));
  std::size_t n = dns::pad_response(msg, dns::kResponsePaddingBlock, body.data(), body.size());
  if (n == 0) {  // no EDNS in the answer, or no room: as it is
    n = std::min(msg.size(), kDohMaxMessage);
    body.assign(msg.begin(), msg.begin() + static_cast<long>(n));
  }
  body.resize(n);
  respond(*s, it->first, it->second, DohStatus::ok);
}

void DohServer::fail(std::uint64_t conn_id, std::uint32_t stream, DohStatus status) {
  Session* s = session(conn_id);
  if (!s) return;
  auto it = s->streams.find(static_cast<std::int32_t>(stream));
  if (it == s->streams.end() || it->second.responded) return;
  it->second.body.clear();  // an error has no body
  respond(*s, it->first, it->second, status);
}

}  // namespace dnsarena::workers
