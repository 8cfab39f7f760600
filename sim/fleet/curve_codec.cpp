#include "curve_codec.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace dnsarena::sim::fleet {

// A field added to either struct must be added to the codec below too (else a curve
// from another rank silently lacks it): the sizes make the compiler say so.
static_assert(sizeof(OccupancyCurve) == 5 * sizeof(std::vector<float>) + 14 * 8,
              "OccupancyCurve changed: encode/decode the new field in curve_codec.cpp, then update this size");
static_assert(sizeof(CurveJob) == 2 * sizeof(std::string) + 6 * 8,
              "CurveJob changed: encode/decode the new field in curve_codec.cpp, then update this size");

namespace {

class Writer {
public:
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& s) {
    pod(static_cast<std::uint64_t>(s.size()));
    out_ += s;
  }
  void floats(const std::vector<float>& v) {
    pod(static_cast<std::uint64_t>(v.size()));
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  }
  std::string take() { return std::move(out_); }

private:
  std::string out_;
};

class Reader {
public:
  Reader(const std::string& in, const char* what) : in_(in), what_(what) {}
  template <class T>
  T pod() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  std::string str() {
    const auto n = pod<std::uint64_t>();
    return std::string(take(n), n);
  }
  std::vector<float> floats() {
    const auto n = pod<std::uint64_t>();
    if (n > in_.size()) fail();
    std::vector<float> v(n);
    std::memcpy(v.data(), take(n * sizeof(float)), n * sizeof(float));
    return v;
  }
  void finish() const {
    if (at_ != in_.size()) throw std::runtime_error(std::string(what_) + " message: " + std::to_string(in_.size() - at_) + " bytes left over");
  }

private:
  const char* take(std::size_t n) {
    if (n > in_.size() - at_) fail();
    const char* p = in_.data() + at_;
    at_ += n;
    return p;
  }
  [[noreturn]] void fail() const {
    throw std::runtime_error(std::string(what_) + " message truncated (" + std::to_string(in_.size()) + " bytes)");
  }
  const std::string& in_;
  const char* what_;
  std::size_t at_ = 0;
};

}  // namespace

std::string encode_job(const CurveJob& j) {
  Writer w;
  w.str(j.fleet);
  w.str(j.datacenter);
  w.pod(j.capacity);
  w.pod(j.rate_qps);
  w.pod(j.seed);
  w.pod(j.sample_entries);
  w.pod(j.max_sample_rate);
  w.pod(j.max_days);
  return w.take();
}

CurveJob decode_job(const std::string& bytes) {
  Reader r(bytes, "curve job");
  CurveJob j;
  j.fleet = r.str();
  j.datacenter = r.str();
  j.capacity = r.pod<std::uint64_t>();
  j.rate_qps = r.pod<double>();
  j.seed = r.pod<std::uint64_t>();
  j.sample_entries = r.pod<std::uint32_t>();
  j.max_sample_rate = r.pod<double>();
  j.max_days = r.pod<std::uint32_t>();
  r.finish();
  return j;
}

std::string encode_curve(const OccupancyCurve& c) {
  Writer w;
  w.floats(c.entries);
  w.floats(c.hit_rate);
  w.floats(c.hit_rate_raw);
  w.floats(c.inserted);
  w.floats(c.unexpired);
  w.pod(c.plateau_entries);
  w.pod(c.plateau_unexpired);
  w.pod(c.plateau_hit_rate);
  w.pod(c.plateau_inserts_per_min);
  w.pod(static_cast<std::uint8_t>(c.reached_plateau));
  w.pod(c.sample_rate);
  w.pod(c.head_names);
  w.pod(c.head_expected_entries);
  w.pod(c.sampled_capacity);
  w.pod(c.sampled_requests);
  w.pod(c.run_seconds);
  w.pod(c.mean_entry_bytes);
  w.pod(c.memory_accesses);
  w.pod(c.segment_bytes);
  return w.take();
}

OccupancyCurve decode_curve(const std::string& bytes) {
  Reader r(bytes, "curve");
  OccupancyCurve c;
  c.entries = r.floats();
  c.hit_rate = r.floats();
  c.hit_rate_raw = r.floats();
  c.inserted = r.floats();
  c.unexpired = r.floats();
  c.plateau_entries = r.pod<double>();
  c.plateau_unexpired = r.pod<double>();
  c.plateau_hit_rate = r.pod<double>();
  c.plateau_inserts_per_min = r.pod<double>();
  c.reached_plateau = r.pod<std::uint8_t>() != 0;
  c.sample_rate = r.pod<double>();
  c.head_names = r.pod<std::uint64_t>();
  c.head_expected_entries = r.pod<double>();
  c.sampled_capacity = r.pod<std::uint64_t>();
  c.sampled_requests = r.pod<std::uint64_t>();
  c.run_seconds = r.pod<double>();
  c.mean_entry_bytes = r.pod<double>();
  c.memory_accesses = r.pod<double>();
  c.segment_bytes = r.pod<std::uint64_t>();
  r.finish();
  return c;
}

}  // namespace dnsarena::sim::fleet
