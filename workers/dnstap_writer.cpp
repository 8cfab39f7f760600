// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/dnstap_writer.hpp"

#include <fstrm.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "dnstap.pb-c.h"

namespace dnsarena::workers {

namespace {

constexpr std::string_view kContentType = "protobuf:dnstap.Dnstap";
constexpr unsigned kReopenSeconds = 1;  // fstrm's minimum: a restarted reader is found within a second

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

ProtobufCBinaryData bytes(const void* p, std::size_t n) {
  return {n, static_cast<std::uint8_t*>(const_cast<void*>(p))};
}

}  // namespace

// The Message being filled: the generated struct and the address fields set from
// TapAddress values (the schema names the client side "query_*", the server "response_*").
struct DnstapWriter::Frame {
  Dnstap__Message m = DNSTAP__MESSAGE__INIT;

  Frame(Dnstap__Message__Type type, bool tcp) {
    m.type = type;
    m.has_socket_protocol = true;
    m.socket_protocol = tcp ? DNSTAP__SOCKET_PROTOCOL__TCP : DNSTAP__SOCKET_PROTOCOL__UDP;
  }
  void family(int f) {
    if (f == AF_UNSPEC || m.has_socket_family) return;
    m.has_socket_family = true;
    m.socket_family = f == AF_INET ? DNSTAP__SOCKET_FAMILY__INET : DNSTAP__SOCKET_FAMILY__INET6;
  }
  void query_side(const TapAddress& a) {
    if (!a.ip) return;
    family(a.family);
    m.has_query_address = m.has_query_port = true;
    m.query_address = bytes(a.ip, a.ip_len);
    m.query_port = a.port;
  }
  void response_side(const TapAddress& a) {
    if (!a.ip) return;
    family(a.family);
    m.has_response_address = m.has_response_port = true;
    m.response_address = bytes(a.ip, a.ip_len);
    m.response_port = a.port;
  }
  // An upstream message: the server side is the upstream, and its forward zone.
  Frame(Dnstap__Message__Type type, bool tcp, const TapAddress& upstream, std::span<const std::uint8_t> zone)
      : Frame(type, tcp) {
    response_side(upstream);
    if (zone.empty()) return;
    m.has_query_zone = true;
    m.query_zone = bytes(zone.data(), zone.size());
  }
  void query_time(const timespec& t) {
    m.has_query_time_sec = m.has_query_time_nsec = true;
    m.query_time_sec = static_cast<std::uint64_t>(t.tv_sec);
    m.query_time_nsec = static_cast<std::uint32_t>(t.tv_nsec);
  }
  void query(std::span<const std::uint8_t> wire, const timespec& t) {
    query_time(t);
    m.has_query_message = true;
    m.query_message = bytes(wire.data(), wire.size());
  }
  void response(std::span<const std::uint8_t> wire, const timespec& t) {
    m.has_response_time_sec = m.has_response_time_nsec = true;
    m.response_time_sec = static_cast<std::uint64_t>(t.tv_sec);
    m.response_time_nsec = static_cast<std::uint32_t>(t.tv_nsec);
    m.has_response_message = true;
    m.response_message = bytes(wire.data(), wire.size());
  }
};

DnstapWriter::DnstapWriter(const DnstapConfig& cfg, unsigned worker_index, cache::Cache& cache)
    : cache_(cache),
      identity_(cfg.identity),
      version_(cfg.version),
      client_query_(cfg.client_query),
      client_response_(cfg.client_response),
      forwarder_query_(cfg.forwarder_query),
      forwarder_response_(cfg.forwarder_response) {
  if (identity_.empty()) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) identity_ = host;
  }
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
  fstrm_iothr_options_set_input_queue_size(iopt, cfg.queue);
  fstrm_iothr_options_set_reopen_interval(iopt, kReopenSeconds);
  // The thread is woken when this many frames wait (else at its 1 s flush timeout): fstrm's
  // 32 would never be reached by a smaller queue, which would then fill and drop.
  fstrm_iothr_options_set_queue_notify_threshold(iopt, std::min(32u, cfg.queue / 2));
  iothr_ = fstrm_iothr_init(iopt, &writer);  // takes the writer
  fstrm_iothr_options_destroy(&iopt);
  if (!iothr_) {
    if (writer) fstrm_writer_destroy(&writer);
    throw std::runtime_error("dnstap: cannot start the fstrm I/O thread");
  }
  queue_ = fstrm_iothr_get_input_queue(iothr_);
}

DnstapWriter::~DnstapWriter() { fstrm_iothr_destroy(&iothr_); }

timespec DnstapWriter::wall_now() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return t;
}

void DnstapWriter::submit(Frame& f) {
  Dnstap__Dnstap d = DNSTAP__DNSTAP__INIT;
  d.type = DNSTAP__DNSTAP__TYPE__MESSAGE;
  d.message = &f.m;
  if (!identity_.empty()) {
    d.has_identity = true;
    d.identity = bytes(identity_.data(), identity_.size());
  }
  if (!version_.empty()) {
    d.has_version = true;
    d.version = bytes(version_.data(), version_.size());
  }
  const std::size_t len = dnstap__dnstap__get_packed_size(&d);
  void* buf = std::malloc(len);
  if (!buf) {
    cache_.count(cache::Counter::dnstap_dropped);
    return;
  }
  dnstap__dnstap__pack(&d, static_cast<std::uint8_t*>(buf));
  // The queue owns buf on success; on FSTRM_RES_AGAIN (full) or failure it stays ours.
  if (fstrm_iothr_submit(iothr_, queue_, buf, len, fstrm_free_wrapper, nullptr) == fstrm_res_success) {
    cache_.count(cache::Counter::dnstap_sent);
  } else {
    std::free(buf);
    cache_.count(cache::Counter::dnstap_dropped);
  }
}

void DnstapWriter::client_query(const sockaddr_storage& client, TapLocal local, bool tcp,
                                std::span<const std::uint8_t> wire, const timespec& received) {
  if (!client_query_) return;
  Frame f(DNSTAP__MESSAGE__TYPE__CLIENT_QUERY, tcp);
  f.query_side(tap_address(client));
  f.response_side(tap_address(local));
  f.query(wire, received);
  submit(f);
}

void DnstapWriter::client_response(const sockaddr_storage& client, TapLocal local, bool tcp,
                                   std::span<const std::uint8_t> wire, const timespec* received) {
  if (!client_response_) return;
  Frame f(DNSTAP__MESSAGE__TYPE__CLIENT_RESPONSE, tcp);
  f.query_side(tap_address(client));
  f.response_side(tap_address(local));
  if (received) f.query_time(*received);
  f.response(wire, wall_now());
  submit(f);
}

void DnstapWriter::forwarder_query(const sockaddr_storage& upstream, bool tcp, std::span<const std::uint8_t> zone,
                                   std::span<const std::uint8_t> wire) {
  if (!forwarder_query_) return;
  Frame f(DNSTAP__MESSAGE__TYPE__FORWARDER_QUERY, tcp, tap_address(upstream), zone);
  f.query(wire, wall_now());
  submit(f);
}

void DnstapWriter::forwarder_response(const sockaddr_storage& upstream, bool tcp, std::span<const std::uint8_t> zone,
                                      std::span<const std::uint8_t> wire) {
  if (!forwarder_response_) return;
  Frame f(DNSTAP__MESSAGE__TYPE__FORWARDER_RESPONSE, tcp, tap_address(upstream), zone);
  f.response(wire, wall_now());
  submit(f);
}

}  // namespace dnsarena::workers
