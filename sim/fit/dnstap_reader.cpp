// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim/fit/dnstap_reader.hpp"

#include <fstrm.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "dnstap.pb-c.h"

namespace dnsarena::sim::fit {

namespace {

struct ReaderDeleter {
  void operator()(fstrm_reader* r) const { fstrm_reader_destroy(&r); }
};
struct FileOptionsDeleter {
  void operator()(fstrm_file_options* o) const { fstrm_file_options_destroy(&o); }
};
struct DnstapDeleter {
  void operator()(Dnstap__Dnstap* d) const { dnstap__dnstap__free_unpacked(d, nullptr); }
};

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw DnstapReadError(path + ": " + what); }

// The first 4 bytes of a Frame Streams file are 0 (the escape of a control frame); the
// file reader's own error says nothing of why, so look before handing the file to it.
bool starts_like_frame_streams(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char head[8] = {};
  in.read(reinterpret_cast<char*>(head), sizeof head);
  return in.gcount() == sizeof head && head[0] == 0 && head[1] == 0 && head[2] == 0 && head[3] == 0;
}

std::string content_type_of(const fstrm_control* start) {
  size_t n = 0;
  if (fstrm_control_get_num_field_content_type(start, &n) != fstrm_res_success || n == 0) return "";
  const uint8_t* type = nullptr;
  size_t len = 0;
  if (fstrm_control_get_field_content_type(start, 0, &type, &len) != fstrm_res_success) return "";
  return std::string(reinterpret_cast<const char*>(type), len);
}

std::uint64_t time_of(const Dnstap__Message& m, bool response) {
  if (response && m.has_response_time_sec)
    return m.response_time_sec * 1'000'000'000ull + (m.has_response_time_nsec ? m.response_time_nsec : 0);
  if (m.has_query_time_sec) return m.query_time_sec * 1'000'000'000ull + (m.has_query_time_nsec ? m.query_time_nsec : 0);
  if (m.has_response_time_sec)
    return m.response_time_sec * 1'000'000'000ull + (m.has_response_time_nsec ? m.response_time_nsec : 0);
  return 0;
}

}  // namespace

FileSummary read_dnstap_file(const std::string& path, const TapCallback& each, const ReadOptions& options) {
  FileSummary s;
  s.path = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail(path, "not a regular file");
  s.bytes = static_cast<std::uint64_t>(st.st_size);
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) fail(path, std::string("cannot open: ") + std::strerror(errno));
  }
  if (!starts_like_frame_streams(path)) fail(path, "not a Frame Streams file (no START control frame at byte 0)");

  std::unique_ptr<fstrm_file_options, FileOptionsDeleter> fopt(fstrm_file_options_init());
  fstrm_file_options_set_file_path(fopt.get(), path.c_str());
  // No content type in the reader's options: fstrm would then refuse a foreign file
  // without saying what it found; it is checked below against the START frame.
  std::unique_ptr<fstrm_reader, ReaderDeleter> reader(fstrm_file_reader_init(fopt.get(), nullptr));
  if (!reader) fail(path, "cannot open");
  if (fstrm_reader_open(reader.get()) != fstrm_res_success)
    fail(path, "not a Frame Streams file (no valid START control frame at byte 0)");
  const fstrm_control* start = nullptr;
  if (fstrm_reader_get_control(reader.get(), FSTRM_CONTROL_START, &start) != fstrm_res_success || start == nullptr)
    fail(path, "not a Frame Streams file (no START control frame at byte 0)");
  const std::string type = content_type_of(start);
  if (type != kDnstapContentType)
    fail(path, "content type '" + type + "', expected '" + kDnstapContentType + "'");
  size_t start_bytes = 0;
  fstrm_control_encoded_size(start, &start_bytes, FSTRM_CONTROL_FLAG_WITH_HEADER);
  std::uint64_t offset = start_bytes;  // where the next frame begins

  for (;;) {
    const uint8_t* data = nullptr;
    size_t len = 0;
    const fstrm_res res = fstrm_reader_read(reader.get(), &data, &len);
    if (res == fstrm_res_stop) break;
    if (res != fstrm_res_success) break;  // a short read: the check below says where
    ++s.data_frames;
    std::unique_ptr<Dnstap__Dnstap, DnstapDeleter> tap(dnstap__dnstap__unpack(nullptr, len, data));
    if (!tap)
      fail(path, "data frame " + std::to_string(s.data_frames) + " at byte " + std::to_string(offset) +
                     " is not a dnstap.Dnstap message");
    offset += 4 + len;
    const Dnstap__Message* m = tap->message;
    if (tap->type != DNSTAP__DNSTAP__TYPE__MESSAGE || m == nullptr) {
      ++s.skipped;
      continue;
    }
    TapMessage out;
    bool response = false;
    switch (m->type) {
      case DNSTAP__MESSAGE__TYPE__CLIENT_QUERY: out.type = TapType::client_query; break;
      case DNSTAP__MESSAGE__TYPE__CLIENT_RESPONSE: out.type = TapType::client_response, response = true; break;
      case DNSTAP__MESSAGE__TYPE__FORWARDER_QUERY: out.type = TapType::forwarder_query; break;
      case DNSTAP__MESSAGE__TYPE__FORWARDER_RESPONSE: out.type = TapType::forwarder_response, response = true; break;
      default: ++s.skipped; continue;
    }
    const ProtobufCBinaryData& msg = response ? m->response_message : m->query_message;
    const bool has = response ? m->has_response_message : m->has_query_message;
    if (!has || msg.len == 0) {
      ++s.skipped;
      continue;
    }
    out.time_ns = time_of(*m, response);
    out.wire = std::span<const std::uint8_t>(msg.data, msg.len);
    if (m->has_socket_protocol) out.socket_protocol = static_cast<std::uint8_t>(m->socket_protocol);
    if (m->has_response_port) out.response_port = m->response_port;
    if (const Dnstap__Policy* pol = m->policy) {
      out.has_policy = true;
      if (pol->type) out.policy_type = pol->type;
      if (pol->has_action) out.policy_action = static_cast<std::uint8_t>(pol->action);
      if (pol->has_rule) out.policy_rule = {pol->rule.data, pol->rule.len};
      if (pol->has_value) out.policy_value = {pol->value.data, pol->value.len};
    }
    each(out);
    ++s.messages;
  }
  // libfstrm ends a file cut inside a frame as if it had ended cleanly: what it consumed
  // (the frames, and a STOP frame when there was one) must be the whole file.
  const fstrm_control* stop = nullptr;
  const bool stopped = fstrm_reader_get_control(reader.get(), FSTRM_CONTROL_STOP, &stop) == fstrm_res_success && stop;
  std::uint64_t consumed = offset;
  if (stopped) {
    size_t stop_bytes = 0;
    fstrm_control_encoded_size(stop, &stop_bytes, FSTRM_CONTROL_FLAG_WITH_HEADER);
    consumed += stop_bytes;
  }
  if (consumed != s.bytes) {
    const std::string where = "after " + std::to_string(s.data_frames) + " data frames (byte " + std::to_string(offset) +
                              " of " + std::to_string(s.bytes) + ")";
    if (!options.keep_truncated)
      fail(path, "the file ends inside a frame " + where + "; --keep-truncated reads up to there");
    s.truncated = true;
    s.note = "truncated: stopped inside a frame " + where;
  } else if (!stopped) {
    s.note = "no STOP frame: the writer did not close the file (killed?); every frame is whole";
  }
  return s;
}

}  // namespace dnsarena::sim::fit
