// SPDX-License-Identifier: GPL-3.0-or-later
// Reading dnstap Frame Streams files (sim/fit/dnstap_reader.hpp): messages and their times
// come through; a missing, foreign, wrong-content-type, truncated or garbled file is
// refused with a message that says what was read and where it stopped.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dns/query_builder.hpp"
#include "dnstap.pb-c.h"
#include "sim/fit/dnstap_reader.hpp"
#include "wire/dns_name.hpp"

using namespace dnsarena;
using Bytes = common::Bytes;

namespace {

void put32(std::string& s, std::uint32_t v) {
  for (int i = 3; i >= 0; --i) s.push_back(static_cast<char>(v >> (8 * i)));
}

// A Frame Streams file: START with `content_type`, the frames, STOP.
std::string frame_stream(const std::string& content_type, const std::vector<std::string>& frames, bool stop = true) {
  std::string s;
  std::string start;
  put32(start, 2);  // START
  put32(start, 1);  // CONTENT_TYPE
  put32(start, static_cast<std::uint32_t>(content_type.size()));
  start += content_type;
  put32(s, 0);
  put32(s, static_cast<std::uint32_t>(start.size()));
  s += start;
  for (const std::string& f : frames) {
    put32(s, static_cast<std::uint32_t>(f.size()));
    s += f;
  }
  if (stop) {
    put32(s, 0);
    put32(s, 4);
    put32(s, 3);  // STOP
  }
  return s;
}

// A dnstap frame: one Message of `type` carrying `wire` at `seconds`.
std::string tap_frame(Dnstap__Message__Type type, const Bytes& wire, std::uint64_t seconds) {
  Dnstap__Message m = DNSTAP__MESSAGE__INIT;
  m.type = type;
  const bool response = type == DNSTAP__MESSAGE__TYPE__CLIENT_RESPONSE || type == DNSTAP__MESSAGE__TYPE__FORWARDER_RESPONSE;
  ProtobufCBinaryData data{wire.size(), const_cast<std::uint8_t*>(wire.data())};
  if (response) {
    m.has_response_message = 1, m.response_message = data;
    m.has_response_time_sec = 1, m.response_time_sec = seconds;
  } else {
    m.has_query_message = 1, m.query_message = data;
    m.has_query_time_sec = 1, m.query_time_sec = seconds;
  }
  Dnstap__Dnstap d = DNSTAP__DNSTAP__INIT;
  d.type = DNSTAP__DNSTAP__TYPE__MESSAGE;
  d.message = &m;
  std::string out(dnstap__dnstap__get_packed_size(&d), '\0');
  dnstap__dnstap__pack(&d, reinterpret_cast<std::uint8_t*>(out.data()));
  return out;
}

Bytes query(const std::string& name) {
  const auto wire = wire::name_to_wire(name);
  dns::QuerySpec q;
  q.id = 7;
  q.qname = wire;
  q.qtype = 1;
  return dns::build_query(q);
}

std::string write_file(const std::string& tag, const std::string& bytes) {
  const std::string dir = "/tmp/dnsarena-fit-reader-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + tag;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

std::string error_of(const std::string& path, sim::fit::ReadOptions o = {}) {
  try {
    sim::fit::read_dnstap_file(path, [](const sim::fit::TapMessage&) {}, o);
  } catch (const sim::fit::DnstapReadError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> three_frames() {
  return {tap_frame(DNSTAP__MESSAGE__TYPE__CLIENT_QUERY, query("a.zone."), 100),
          tap_frame(DNSTAP__MESSAGE__TYPE__CLIENT_RESPONSE, query("a.zone."), 101),
          tap_frame(DNSTAP__MESSAGE__TYPE__FORWARDER_QUERY, query("b.zone."), 102)};
}

}  // namespace

TEST_CASE("dnstap reader: every message with its type, time and bytes", "[fit][dnstap]") {
  auto frames = three_frames();
  frames.push_back(tap_frame(DNSTAP__MESSAGE__TYPE__AUTH_QUERY, query("c.zone."), 103));  // not read: skipped
  const std::string path = write_file("good", frame_stream(sim::fit::kDnstapContentType, frames));
  std::vector<sim::fit::TapType> types;
  std::vector<std::uint64_t> times;
  std::vector<Bytes> wires;
  const auto s = sim::fit::read_dnstap_file(path, [&](const sim::fit::TapMessage& m) {
    types.push_back(m.type);
    times.push_back(m.time_ns);
    wires.emplace_back(m.wire.begin(), m.wire.end());
  });
  CHECK(s.data_frames == 4);
  CHECK(s.messages == 3);
  CHECK(s.skipped == 1);
  CHECK_FALSE(s.truncated);
  REQUIRE(types.size() == 3);
  CHECK(types[0] == sim::fit::TapType::client_query);
  CHECK(types[1] == sim::fit::TapType::client_response);
  CHECK(types[2] == sim::fit::TapType::forwarder_query);
  CHECK(times[1] == 101'000'000'000ull);
  CHECK(wires[2] == query("b.zone."));
}

TEST_CASE("dnstap reader: a missing file, a foreign file, another content type", "[fit][dnstap]") {
  CHECK_THAT(error_of("/tmp/dnsarena-fit-no-such-file"), Catch::Contains("cannot open") && Catch::Contains("No such file"));
  CHECK_THAT(error_of(write_file("text", "names: 10\nzipf: 0.9\n")), Catch::Contains("not a Frame Streams file"));
  CHECK_THAT(error_of(write_file("empty", "")), Catch::Contains("not a Frame Streams file"));
  const std::string other = write_file("other", frame_stream("protobuf:other.Thing", three_frames()));
  CHECK_THAT(error_of(other), Catch::Contains("content type 'protobuf:other.Thing', expected 'protobuf:dnstap.Dnstap'"));
}

TEST_CASE("dnstap reader: a truncated file says where it stopped, and can be read up to there", "[fit][dnstap]") {
  const std::string whole = frame_stream(sim::fit::kDnstapContentType, three_frames(), false);
  const std::string cut = whole.substr(0, whole.size() - 5);  // inside the third frame
  const std::string path = write_file("cut", cut);
  const std::string e = error_of(path);
  INFO(e);
  CHECK_THAT(e, Catch::Contains("ends inside a frame after 2 data frames"));
  const std::size_t third_at = whole.size() - 4 - three_frames()[2].size();
  CHECK_THAT(e, Catch::Contains("(byte " + std::to_string(third_at) + " of " + std::to_string(cut.size()) + ")"));
  CHECK_THAT(e, Catch::Contains("--keep-truncated"));
  std::uint64_t seen = 0;
  const auto s = sim::fit::read_dnstap_file(path, [&](const sim::fit::TapMessage&) { ++seen; }, {.keep_truncated = true});
  CHECK(s.truncated);
  CHECK(seen == 2);
  CHECK_THAT(s.note, Catch::Contains("after 2 data frames"));
}

TEST_CASE("dnstap reader: a frame that is not a dnstap message", "[fit][dnstap]") {
  auto frames = three_frames();
  frames.insert(frames.begin() + 1, std::string("\xff\xff\xff\xff garbage", 12));
  const std::string e = error_of(write_file("garbage", frame_stream(sim::fit::kDnstapContentType, frames)));
  CHECK_THAT(e, Catch::Contains("data frame 2 at byte") && Catch::Contains("is not a dnstap.Dnstap message"));
}
