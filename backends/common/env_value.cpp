#include "env_value.h"

#include "status.h"

#include <cstdlib>
#include <cstring>
#include <vector>

namespace tgl {

const char* env_value(const char* name) {
    const char* v = ::secure_getenv(name);
    return v && *v ? v : nullptr;
}

bool parse_decimal(const std::string& text, uint64_t lo, uint64_t hi, uint64_t* out) {
    if (text.empty()) return false;
    uint64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
        const uint64_t digit = uint64_t(c - '0');
        if (v > (UINT64_MAX - digit) / 10) return false;  // would overflow
        v = v * 10 + digit;
    }
    if (v < lo || v > hi) return false;
    *out = v;
    return true;
}

void env_malformed(const char* name, const char* value, const std::string& problem, const char* expected) {
    fail(TGL_ERROR_INVALID_ARGUMENT, "%s=%s: %s; expected %s", name, value, problem.c_str(), expected);
}

uint64_t env_number(const char* name, uint64_t lo, uint64_t hi, uint64_t fallback, const char* expected) {
    const char* v = env_value(name);
    if (!v) return fallback;
    uint64_t n = 0;
    if (!parse_decimal(v, lo, hi, &n))
        env_malformed(name, v, format("not a decimal number in [%llu, %llu]", (unsigned long long)lo,
                                      (unsigned long long)hi), expected);
    return n;
}

void parse_tune_tokens(const char* name, const char* value, const std::string& text, std::initializer_list<TuneKey> keys,
                       std::initializer_list<TuneFlag> flags, const char* expected) {
    std::vector<std::string> seen;
    size_t pos = 0;
    for (;;) {
        size_t end = text.find('_', pos);
        if (end == std::string::npos) end = text.size();
        const std::string token = text.substr(pos, end - pos);
        bool known = false;
        for (const TuneFlag& f : flags)
            if (token == f.word) {
                *f.value = true;
                known = true;
            }
        const size_t digits = token.find_first_of("0123456789");
        const std::string key = token.substr(0, digits);
        for (const TuneKey& k : keys) {
            if (known || digits == std::string::npos || key != k.key) continue;
            uint64_t n = 0;
            if (!parse_decimal(token.substr(digits), uint64_t(k.lo), uint64_t(k.hi), &n))
                env_malformed(name, value, format("'%s' is not %s<n> with n a decimal number in [%d, %d]", token.c_str(),
                                                  k.key, k.lo, k.hi), expected);
            *k.value = int(n);
            known = true;
        }
        if (!known)
            env_malformed(name, value, token.empty() ? std::string("an empty token") : "unknown token '" + token + "'",
                          expected);
        const std::string id = digits == std::string::npos ? token : key;
        for (const std::string& s : seen)
            if (s == id) env_malformed(name, value, "'" + id + "' given twice", expected);
        seen.push_back(id);
        if (end == text.size()) break;
        pos = end + 1;
    }
    for (const TuneKey& k : keys) {
        bool given = false;
        for (const std::string& s : seen) given = given || s == k.key;
        if (k.required && !given) env_malformed(name, value, format("'%s<n>' is missing", k.key), expected);
    }
}

}  // namespace tgl
