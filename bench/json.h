// json.h: the little JSON the benchmark needs: a value type, a writer and a strict parser (for
// --compare, and for --quick's check that the file it wrote reads back). Not a general library:
// numbers are doubles, objects keep their key order, \u escapes outside ASCII become '?'.
#ifndef TGL_BENCH_JSON_H
#define TGL_BENCH_JSON_H

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace bench::json {

struct Value {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    bool b = false;
    double num = 0;
    std::string str;
    std::vector<Value> arr;
    std::vector<std::pair<std::string, Value>> obj;  // insertion order

    Value() = default;
    Value(std::nullptr_t) {}
    Value(bool v) : kind(Bool), b(v) {}
    Value(double v) : kind(Number), num(v) {}
    Value(int v) : kind(Number), num(v) {}
    Value(long v) : kind(Number), num(static_cast<double>(v)) {}
    Value(long long v) : kind(Number), num(static_cast<double>(v)) {}
    Value(unsigned v) : kind(Number), num(v) {}
    Value(unsigned long v) : kind(Number), num(static_cast<double>(v)) {}
    Value(unsigned long long v) : kind(Number), num(static_cast<double>(v)) {}
    Value(const char* v) : kind(String), str(v) {}
    Value(std::string v) : kind(String), str(std::move(v)) {}

    static Value array() { Value v; v.kind = Array; return v; }
    static Value object() { Value v; v.kind = Object; return v; }

    // Objects: set (replaces an existing key) and lookup (nullptr when absent or not an object).
    Value& set(const std::string& key, Value v);
    const Value* get(const std::string& key) const;
    // Convenience lookups with a default.
    double number_or(const std::string& key, double dflt) const;
    std::string string_or(const std::string& key, const std::string& dflt) const;
    void push(Value v) { arr.push_back(std::move(v)); }
};

// Pretty-printed with `indent` spaces per level; non-finite numbers are written as null.
std::string dump(const Value& v, int indent = 2);

// Parses the whole text; on failure returns false and says where in `error`.
bool parse(const std::string& text, Value& out, std::string& error);

}  // namespace bench::json

#endif
