// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/dnstap_writer.hpp"

#include <fstrm.h>
#include <netinet/in.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "workers/dnstap_encoder.hpp"

namespace dnsarena::workers {

namespace {

constexpr std::string_view kContentType = "protobuf:dnstap.Dnstap";
constexpr unsigned kReopenSeconds = 1;  // fstrm's minimum
// A Policy's bytes at most: its type ("policy zone 255" / "serve-stale", 16), the rule (257)
// and the value (255), and the keys, lengths and enums around them (5 fields, 11 bytes each).
constexpr std::size_t kMaxPolicyBytes = 16 + 257 + 255 + 5 * 11;
// A Message's bytes at most: a DNS message (65535), a zone name (255), two IPv6 addresses,
// a Policy, and the keys, lengths, ports, times and enums around them (15 fields, 11 bytes each).
constexpr std::size_t kMaxMessageBytes = 65535 + 255 + 2 * 16 + kMaxPolicyBytes + 15 * 11;

// A socket address's IP bytes and port in the schema's terms.
struct TapAddress {
  int family = AF_UNSPEC;
  const std::uint8_t* ip = nullptr;
  std::size_t ip_len = 0;
  std::uint16_t port = 0;
};

TapAddress tap_address(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    return {AF_INET, reinterpret_cast<const std::uint8_t*>(&v4.sin_addr), 4, ntohs(v4.sin_port)};
  }
  if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    return {AF_INET6, reinterpret_cast<const std::uint8_t*>(&v6.sin6_addr), 16, ntohs(v6.sin6_port)};
  }
  return {};
}

TapAddress tap_address(const TapLocal& local) {
  if (local.socket) return tap_address(*local.socket);
  if (!local.listen) return {};
  TapAddress t = tap_address(local.listen->addr);
  if (local.pktinfo && local.pktinfo->family == AF_INET) {
    t.family = AF_INET;
    t.ip = reinterpret_cast<const std::uint8_t*>(&local.pktinfo->v4);
    t.ip_len = 4;
  } else if (local.pktinfo && local.pktinfo->family == AF_INET6) {
    t.family = AF_INET6;
    t.ip = reinterpret_cast<const std::uint8_t*>(&local.pktinfo->v6);
    t.ip_len = 16;
  } else if (local.listen->wildcard()) {
    return {};  // the address asked is not known: left out rather than 0.0.0.0
  }
  return t;
}

}  // namespace

using namespace dnstap_wire;

// The Message being encoded into the writer's body buffer (dnstap_encoder.hpp), fields
// set from TapAddress values: the schema names the client side "query_*", the server
// "response_*".
struct DnstapWriter::Frame {
  Writer w;
  bool has_family = false;

  Frame(std::uint8_t* body, MessageType type, TapProtocol protocol) : w(body) {
    w.uint_field(message_field::type, static_cast<std::uint64_t>(type));
    w.uint_field(message_field::socket_protocol, static_cast<std::uint64_t>(protocol));  // the schema's values
  }
  // An upstream message: the server side is the upstream, and its forward zone.
  Frame(std::uint8_t* body, MessageType type, TapProtocol protocol, const TapAddress& upstream,
        std::span<const std::uint8_t> zone)
      : Frame(body, type, protocol) {
    response_side(upstream);
    if (!zone.empty()) w.bytes_field(message_field::query_zone, zone);
  }
  void family(int f) {
    if (has_family) return;
    has_family = true;
    w.uint_field(message_field::socket_family,
                 static_cast<std::uint64_t>(f == AF_INET ? SocketFamily::inet : SocketFamily::inet6));
  }
  void query_side(const TapAddress& a) {
    if (!a.ip) return;
    family(a.family);
    w.bytes_field(message_field::query_address, {a.ip, a.ip_len});
    w.uint_field(message_field::query_port, a.port);
  }
  void response_side(const TapAddress& a) {
    if (!a.ip) return;
    family(a.family);
    w.bytes_field(message_field::response_address, {a.ip, a.ip_len});
    w.uint_field(message_field::response_port, a.port);
  }
  void query_time(const timespec& t) {
    w.uint_field(message_field::query_time_sec, static_cast<std::uint64_t>(t.tv_sec));
    w.fixed32_field(message_field::query_time_nsec, static_cast<std::uint32_t>(t.tv_nsec));
  }
  void query(std::span<const std::uint8_t> wire, const timespec& t) {
    query_time(t);
    w.bytes_field(message_field::query_message, wire);
  }
  void response(std::span<const std::uint8_t> wire, const timespec& t) {
    w.uint_field(message_field::response_time_sec, static_cast<std::uint64_t>(t.tv_sec));
    w.fixed32_field(message_field::response_time_nsec, static_cast<std::uint32_t>(t.tv_nsec));
    w.bytes_field(message_field::response_message, wire);
  }
  // The Policy message of a marked answer (dnstap_writer.hpp).
  void policy(const Mark& m) {
    std::uint8_t buf[kMaxPolicyBytes];
    Writer p(buf);
    char type[24];
    const int n = m.stale ? std::snprintf(type, sizeof type, "serve-stale")
                          : std::snprintf(type, sizeof type, "policy zone %u", m.zone);
    p.bytes_field(policy_field::type, {reinterpret_cast<const std::uint8_t*>(type), static_cast<std::size_t>(n)});
    if (!m.stale) {
      p.bytes_field(policy_field::rule, {m.rule, m.rule_len});
      if (m.action) p.uint_field(policy_field::action, m.action);
      p.uint_field(policy_field::match, policy_field::match_qname);
      p.bytes_field(policy_field::value, {m.qname, m.qname_len});
    }
    w.bytes_field(message_field::policy, {buf, p.size()});
  }
};

DnstapWriter::DnstapWriter(const DnstapConfig& cfg, unsigned worker_index, cache::Cache& cache)
    : cache_(cache),
      identity_(cfg.identity),
      version_(cfg.version),
      client_query_(cfg.client_query),
      client_response_(cfg.client_response),
      forwarder_query_(cfg.forwarder_query),
      forwarder_response_(cfg.forwarder_response),
      marks_(cfg.client_response ? kMarks : 0) {
  if (identity_.empty()) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) identity_ = host;
  }
  body_.resize(kMaxMessageBytes);
  header_.resize(2 * kMaxVarint + 2 + identity_.size() + version_.size());
  Writer h(header_.data());
  if (!identity_.empty())
    h.bytes_field(dnstap_field::identity, {reinterpret_cast<const std::uint8_t*>(identity_.data()), identity_.size()});
  if (!version_.empty())
    h.bytes_field(dnstap_field::version, {reinterpret_cast<const std::uint8_t*>(version_.data()), version_.size()});
  header_.resize(h.size());
  fstrm_writer_options* wopt = fstrm_writer_options_init();
  fstrm_writer_options_add_content_type(wopt, kContentType.data(), kContentType.size());
  fstrm_writer* writer = nullptr;
  if (!cfg.socket.empty()) {
    fstrm_unix_writer_options* uopt = fstrm_unix_writer_options_init();
    fstrm_unix_writer_options_set_socket_path(uopt, cfg.socket.c_str());
    writer = fstrm_unix_writer_init(uopt, wopt);
    fstrm_unix_writer_options_destroy(&uopt);
  } else {
    const std::string path = cfg.file + "." + std::to_string(worker_index);
    // fstrm truncates the file it opens. A predecessor's file (the service's last run, a
    // worker restarted, or one still retiring after a reload and writing) is kept under
    // PATH.<index>.<seconds>.<this pid>; a retiring writer goes on writing into it.
    const std::string kept = path + "." + std::to_string(::time(nullptr)) + "." + std::to_string(::getpid());
    if (::rename(path.c_str(), kept.c_str()) != 0 && errno != ENOENT)
      spdlog::warn("dnstap: cannot keep {} as {}: {}; it is overwritten", path, kept, std::strerror(errno));
    fstrm_file_options* fopt = fstrm_file_options_init();
    fstrm_file_options_set_file_path(fopt, path.c_str());
    writer = fstrm_file_writer_init(fopt, wopt);
    fstrm_file_options_destroy(&fopt);
  }
  fstrm_writer_options_destroy(&wopt);
  if (!writer) throw std::runtime_error("dnstap: fstrm refused the writer options (a path too long?)");

  fstrm_iothr_options* iopt = fstrm_iothr_options_init();
  fstrm_iothr_options_set_num_input_queues(iopt, 1);
  fstrm_iothr_options_set_queue_model(iopt, FSTRM_IOTHR_QUEUE_MODEL_SPSC);
  // fstrm's queue: the largest power of two within dnstap.queue and fstrm's maximum; the
  // rest of dnstap.queue is the worker's backlog.
  const unsigned fstrm_queue = std::bit_floor(std::min(cfg.queue, kFstrmQueueMax));
  backlog_frames_max_ = cfg.queue - fstrm_queue;
  fstrm_iothr_options_set_input_queue_size(iopt, fstrm_queue);
  fstrm_iothr_options_set_reopen_interval(iopt, kReopenSeconds);
  // The thread is woken when this many frames wait (else at its 1 s flush timeout): fstrm's
  // 32 would never be reached by a smaller queue, which would then fill and drop.
  fstrm_iothr_options_set_queue_notify_threshold(iopt, std::min(32u, fstrm_queue / 2));
  iothr_ = fstrm_iothr_init(iopt, &writer);  // takes the writer
  fstrm_iothr_options_destroy(&iopt);
  if (!iothr_) {
    if (writer) fstrm_writer_destroy(&writer);
    throw std::runtime_error("dnstap: cannot start the fstrm I/O thread");
  }
  queue_ = fstrm_iothr_get_input_queue(iothr_);
}

DnstapWriter::~DnstapWriter() {
  // What waits in the backlog goes to fstrm as its queue empties, for at most a second
  // (the writer thread drains 16,384 frames in far less unless its reader is stuck).
  for (int waited_ms = 0; drain_backlog() && waited_ms < 1000; waited_ms += kBacklogRetryMs)
    std::this_thread::sleep_for(std::chrono::milliseconds(kBacklogRetryMs));
  for (const Pending& p : backlog_) {
    std::free(p.bytes);
    cache_.count(cache::Counter::dnstap_dropped);
  }
  fstrm_iothr_destroy(&iothr_);
}

timespec DnstapWriter::wall_now() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return t;
}

bool DnstapWriter::hand_to_fstrm(std::uint8_t* bytes, std::size_t len) {
  // The queue owns bytes on success; on FSTRM_RES_AGAIN (full) or failure they stay ours.
  if (fstrm_iothr_submit(iothr_, queue_, bytes, len, fstrm_free_wrapper, nullptr) != fstrm_res_success) return false;
  cache_.count(cache::Counter::dnstap_sent);
  return true;
}

bool DnstapWriter::drain_backlog() {
  while (!backlog_.empty()) {
    const Pending p = backlog_.front();
    if (!hand_to_fstrm(p.bytes, p.len)) return true;
    backlog_bytes_ -= p.len;
    backlog_.pop_front();
  }
  return false;
}

void DnstapWriter::submit(Frame& f) {
  // Dnstap { identity, version (header_), message = the Message in body_, type = MESSAGE }.
  const std::span<const std::uint8_t> body{body_.data(), f.w.size()};
  const std::size_t len = frame_size(header_, body);
  auto* buf = static_cast<std::uint8_t*>(std::malloc(len));
  if (!buf) {
    cache_.count(cache::Counter::dnstap_dropped);
    return;
  }
  write_frame(header_, body, buf);
  // Frames keep their order: while older ones wait in the backlog, a new one joins them.
  if (!drain_backlog() && hand_to_fstrm(buf, len)) return;
  if (backlog_.size() < backlog_frames_max_ && backlog_bytes_ + len <= kBacklogBytesMax) {
    backlog_.push_back({buf, len});
    backlog_bytes_ += len;
    return;
  }
  std::free(buf);
  cache_.count(cache::Counter::dnstap_dropped);
}

DnstapWriter::Mark& DnstapWriter::new_mark(const std::uint8_t* answer, std::uint16_t id) {
  Mark& m = marks_[next_mark_];
  next_mark_ = (next_mark_ + 1) % kMarks;
  if (!m.answer) ++marks_waiting_;  // else an older mark whose answer was never tapped
  m.answer = answer;
  m.id = id;
  return m;
}

DnstapWriter::Mark* DnstapWriter::take_mark(std::span<const std::uint8_t> answer) {
  if (marks_waiting_ == 0 || answer.size() < 2) return nullptr;
  const std::uint16_t id = static_cast<std::uint16_t>(answer[0] << 8 | answer[1]);
  for (Mark& m : marks_)
    if (m.answer == answer.data() && m.id == id) {
      m.answer = nullptr;
      --marks_waiting_;
      return &m;
    }
  return nullptr;
}

void DnstapWriter::mark_policy(const std::uint8_t* answer, std::uint16_t id, unsigned zone, std::uint8_t action,
                               std::span<const std::uint8_t> trigger, bool wildcard,
                               std::span<const std::uint8_t> qname) {
  if (!client_response_ || trigger.size() > 255 || qname.size() > 255) return;
  Mark& m = new_mark(answer, id);
  m.stale = false;
  m.zone = zone;
  m.action = action;
  std::size_t at = 0;
  if (wildcard) {
    m.rule[at++] = 1;
    m.rule[at++] = '*';
  }
  std::memcpy(m.rule + at, trigger.data(), trigger.size());
  m.rule_len = static_cast<std::uint8_t>(std::min<std::size_t>(at + trigger.size(), 255));
  std::memcpy(m.qname, qname.data(), qname.size());
  m.qname_len = static_cast<std::uint8_t>(qname.size());
}

void DnstapWriter::mark_stale(const std::uint8_t* answer, std::uint16_t id) {
  if (!client_response_) return;
  new_mark(answer, id).stale = true;
}

void DnstapWriter::client_query(const sockaddr_storage& client, TapLocal local, TapProtocol protocol,
                                std::span<const std::uint8_t> wire, const timespec& received) {
  if (!client_query_) return;
  Frame f(body_.data(), MessageType::client_query, protocol);
  f.query_side(tap_address(client));
  f.response_side(tap_address(local));
  f.query(wire, received);
  submit(f);
}

void DnstapWriter::client_response(const sockaddr_storage& client, TapLocal local, TapProtocol protocol,
                                   std::span<const std::uint8_t> wire, const timespec* received) {
  if (!client_response_) return;
  Frame f(body_.data(), MessageType::client_response, protocol);
  f.query_side(tap_address(client));
  f.response_side(tap_address(local));
  if (received) f.query_time(*received);
  f.response(wire, wall_now());
  if (const Mark* m = take_mark(wire)) f.policy(*m);
  submit(f);
}

void DnstapWriter::forwarder_query(const sockaddr_storage& upstream, TapProtocol protocol,
                                   std::span<const std::uint8_t> zone, std::span<const std::uint8_t> wire) {
  if (!forwarder_query_) return;
  Frame f(body_.data(), MessageType::forwarder_query, protocol, tap_address(upstream), zone);
  f.query(wire, wall_now());
  submit(f);
}

void DnstapWriter::forwarder_response(const sockaddr_storage& upstream, TapProtocol protocol,
                                      std::span<const std::uint8_t> zone, std::span<const std::uint8_t> wire,
                                      std::uint64_t sent_ago_us) {
  if (!forwarder_response_) return;
  Frame f(body_.data(), MessageType::forwarder_response, protocol, tap_address(upstream), zone);
  const timespec now = wall_now();
  const std::int64_t sent_ns = static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec -
                               static_cast<std::int64_t>(sent_ago_us) * 1000;
  f.query_time(timespec{static_cast<time_t>(sent_ns / 1'000'000'000), static_cast<long>(sent_ns % 1'000'000'000)});
  f.response(wire, now);
  submit(f);
}

}  // namespace dnsarena::workers
