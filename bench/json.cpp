#include "json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace bench::json {

Value& Value::set(const std::string& key, Value v) {
    kind = Object;
    for (auto& kv : obj)
        if (kv.first == key) {
            kv.second = std::move(v);
            return kv.second;
        }
    obj.emplace_back(key, std::move(v));
    return obj.back().second;
}

const Value* Value::get(const std::string& key) const {
    if (kind != Object) return nullptr;
    for (const auto& kv : obj)
        if (kv.first == key) return &kv.second;
    return nullptr;
}

double Value::number_or(const std::string& key, double dflt) const {
    const Value* v = get(key);
    return v && v->kind == Number ? v->num : dflt;
}

std::string Value::string_or(const std::string& key, const std::string& dflt) const {
    const Value* v = get(key);
    return v && v->kind == String ? v->str : dflt;
}

// ---------------------------------------------------------------------------------------------
// Writer.

static void put_string(std::string& o, const std::string& s) {
    o += '"';
    for (unsigned char c : s) {
        switch (c) {
        case '"': o += "\\\""; break;
        case '\\': o += "\\\\"; break;
        case '\n': o += "\\n"; break;
        case '\r': o += "\\r"; break;
        case '\t': o += "\\t"; break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                o += buf;
            } else {
                o += static_cast<char>(c);
            }
        }
    }
    o += '"';
}

static void put(std::string& o, const Value& v, int indent, int level) {
    auto newline = [&](int lvl) {
        if (indent <= 0) return;
        o += '\n';
        o.append(static_cast<size_t>(indent * lvl), ' ');
    };
    switch (v.kind) {
    case Value::Null: o += "null"; break;
    case Value::Bool: o += v.b ? "true" : "false"; break;
    case Value::Number: {
        if (!std::isfinite(v.num)) {
            o += "null";
            break;
        }
        char buf[32];
        if (v.num == std::floor(v.num) && std::fabs(v.num) < 1e15)
            std::snprintf(buf, sizeof buf, "%.0f", v.num);
        else
            std::snprintf(buf, sizeof buf, "%.6g", v.num);
        o += buf;
        break;
    }
    case Value::String: put_string(o, v.str); break;
    case Value::Array: {
        // Arrays of scalars stay on one line (shapes); others get one element per line.
        bool flat = true;
        for (const auto& e : v.arr) flat = flat && e.kind != Value::Array && e.kind != Value::Object;
        o += '[';
        for (size_t i = 0; i < v.arr.size(); ++i) {
            if (i) o += flat ? ", " : ",";
            if (!flat) newline(level + 1);
            put(o, v.arr[i], indent, level + 1);
        }
        if (!flat && !v.arr.empty()) newline(level);
        o += ']';
        break;
    }
    case Value::Object: {
        o += '{';
        for (size_t i = 0; i < v.obj.size(); ++i) {
            if (i) o += ',';
            newline(level + 1);
            put_string(o, v.obj[i].first);
            o += indent > 0 ? ": " : ":";
            put(o, v.obj[i].second, indent, level + 1);
        }
        if (!v.obj.empty()) newline(level);
        o += '}';
        break;
    }
    }
}

std::string dump(const Value& v, int indent) {
    std::string o;
    put(o, v, indent, 0);
    o += '\n';
    return o;
}

// ---------------------------------------------------------------------------------------------
// Parser (recursive descent, strict JSON).

namespace {
struct Parser {
    const std::string& s;
    size_t i = 0;
    std::string err;

    bool fail(const std::string& what) {
        if (err.empty()) err = what + " at byte " + std::to_string(i);
        return false;
    }
    void ws() {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) ++i;
    }
    bool lit(const char* word) {
        size_t n = std::char_traits<char>::length(word);
        if (s.compare(i, n, word) != 0) return fail(std::string("expected ") + word);
        i += n;
        return true;
    }
    bool string(std::string& out) {
        if (i >= s.size() || s[i] != '"') return fail("expected a string");
        ++i;
        while (i < s.size() && s[i] != '"') {
            char c = s[i++];
            if (static_cast<unsigned char>(c) < 0x20) return fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i >= s.size()) break;
            char e = s[i++];
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                if (i + 4 > s.size()) return fail("short \\u escape");
                long code = std::strtol(s.substr(i, 4).c_str(), nullptr, 16);
                i += 4;
                out += code < 0x80 ? static_cast<char>(code) : '?';
                break;
            }
            default: return fail("bad escape");
            }
        }
        if (i >= s.size()) return fail("unterminated string");
        ++i;
        return true;
    }
    bool value(Value& v, int depth) {
        if (depth > 64) return fail("nesting too deep");
        ws();
        if (i >= s.size()) return fail("unexpected end");
        char c = s[i];
        if (c == 'n') { v = Value(); return lit("null"); }
        if (c == 't') { v = Value(true); return lit("true"); }
        if (c == 'f') { v = Value(false); return lit("false"); }
        if (c == '"') { v = Value(std::string()); return string(v.str); }
        if (c == '[') {
            v = Value::array();
            ++i;
            ws();
            if (i < s.size() && s[i] == ']') { ++i; return true; }
            for (;;) {
                Value e;
                if (!value(e, depth + 1)) return false;
                v.arr.push_back(std::move(e));
                ws();
                if (i < s.size() && s[i] == ',') { ++i; continue; }
                if (i < s.size() && s[i] == ']') { ++i; return true; }
                return fail("expected ',' or ']'");
            }
        }
        if (c == '{') {
            v = Value::object();
            ++i;
            ws();
            if (i < s.size() && s[i] == '}') { ++i; return true; }
            for (;;) {
                ws();
                std::string key;
                if (!string(key)) return false;
                ws();
                if (i >= s.size() || s[i] != ':') return fail("expected ':'");
                ++i;
                Value e;
                if (!value(e, depth + 1)) return false;
                v.obj.emplace_back(std::move(key), std::move(e));
                ws();
                if (i < s.size() && s[i] == ',') { ++i; continue; }
                if (i < s.size() && s[i] == '}') { ++i; return true; }
                return fail("expected ',' or '}'");
            }
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            const char* start = s.c_str() + i;
            char* end = nullptr;
            double d = std::strtod(start, &end);
            if (end == start) return fail("bad number");
            i += static_cast<size_t>(end - start);
            v = Value(d);
            return true;
        }
        return fail(std::string("unexpected character '") + c + "'");
    }
};
}  // namespace

bool parse(const std::string& text, Value& out, std::string& error) {
    Parser p{text, 0, {}};
    if (!p.value(out, 0)) {
        error = p.err;
        return false;
    }
    p.ws();
    if (p.i != text.size()) {
        error = "trailing characters at byte " + std::to_string(p.i);
        return false;
    }
    return true;
}

}  // namespace bench::json
