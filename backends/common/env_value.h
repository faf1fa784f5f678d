// Strict readers of the TGL_* environment variables (read with secure_getenv), one policy for all:
// unset or empty means the default; a value that is set but malformed (not the documented form,
// trailing junk, a sign, out of range, too large for its type) is refused with
// TGL_ERROR_INVALID_ARGUMENT naming the variable, the value given and the form expected. Read
// when a device is opened, so that device_open reports it and no device runs with a guess.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

namespace tgl {

// The value of `name`, or nullptr when it is unset or empty.
const char* env_value(const char* name);

// A decimal number made of digits alone (no sign, space, suffix or base prefix) in [lo, hi];
// false for anything else, overflow included.
bool parse_decimal(const std::string& text, uint64_t lo, uint64_t hi, uint64_t* out);

// Throws TGL_ERROR_INVALID_ARGUMENT: "<name>=<value>: <problem>; expected <expected>".
[[noreturn]] void env_malformed(const char* name, const char* value, const std::string& problem, const char* expected);

// `name` as a decimal number in [lo, hi] (`expected` describes it); `fallback` when unset or empty.
uint64_t env_number(const char* name, uint64_t lo, uint64_t hi, uint64_t fallback, const char* expected);

// Parses `text` (all of `name`=`value`, or one part of it) as '_'-separated tokens, each either a
// key followed by a decimal number in the key's range ("wg256") or a flag word ("general"), in
// any order, each at most once; every key marked required must be there. Anything else is
// malformed (env_malformed with `expected`). Keys and flags not given keep their values.
struct TuneKey {
    const char* key;
    int* value;
    int lo, hi;
    bool required;
};
struct TuneFlag {
    const char* word;
    bool* value;  // set to true when present
};
void parse_tune_tokens(const char* name, const char* value, const std::string& text, std::initializer_list<TuneKey> keys,
                       std::initializer_list<TuneFlag> flags, const char* expected);

}  // namespace tgl
