// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the RPZ reader and policy compiler on arbitrary zone text. Input: 1
// selector byte, then the text. Selector & 1: the zone's origin is given (rpz.fuzz.), or
// taken from the text's first SOA. Every outcome must be a compiled image or a
// PolicyError with a message (no crash, no hang, no other exception). For an image:
//   - the view accepts it; every rule's trigger is found by the lookup (its own name for
//     an exact trigger, a child of it for `*.`, its address for an address trigger), with
//     a zone no later than the rule's;
//   - the answer written for each match fits the buffer and the client's limit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "policy/policy_answer.hpp"
#include "policy/policy_compiler.hpp"
#include "policy/rpz_reader.hpp"

using namespace dnsarena;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void ask(const policy::PolicyView& view, const policy::WireName& name, std::uint8_t zone) {
  const policy::Match m = view.find({name.data(), name.size()});
  check(bool(m));
  check(m.zone <= zone);
  dns::ClientQuery q;
  q.id = 1;
  q.qname_len = static_cast<std::uint8_t>(name.size());
  std::copy(name.begin(), name.end(), q.qname_storage.begin());
  q.qtype = 1;
  q.edns = true;
  std::uint8_t out[4096];
  const policy::PolicyAnswer a = policy::write_policy_answer(view, m, q, 512, out, sizeof out);
  check(a.size <= 512);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  policy::RuleSet rules;
  try {
    policy::read_rpz_text(text, "fuzz.rpz", (data[0] & 1) ? "rpz.fuzz." : "", rules);
  } catch (const policy::PolicyError& e) {
    check(e.what()[0] != 0);
    return 0;
  }
  std::vector<std::uint8_t> image;
  try {
    image = policy::compile_policy(rules);
  } catch (const policy::PolicyError&) {
    return 0;  // local data over 64 KiB at one name
  }
  const policy::PolicyView view(image);
  for (const policy::Rule& r : rules.rules()) {
    if (r.kind != policy::TriggerKind::qname) {
      // An address trigger (rpz-ip, rpz-client-ip): its key is the prefix length and the
      // 16-byte address; the address itself finds a rule of that kind, in no later zone.
      check(r.name.size() == 17);
      const policy::Match m = view.find_address(r.kind, r.name.data() + 1);
      check(bool(m));
      check(m.zone <= r.zone);
    } else if (!r.wildcard) {
      ask(view, r.name, r.zone);
    } else if (r.name.size() + 2 <= 255) {
      policy::WireName child = r.name;
      child.insert(child.begin(), {1, 'x'});
      ask(view, child, r.zone);
    }
  }
  return 0;
}
