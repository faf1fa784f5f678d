#include "shaders.h"

#include "status.h"

#include <cstring>
#include <set>
#include <sstream>
#include <string_view>

namespace tgl {
namespace gles {

const char* find_embedded_shader(const std::string& name) {
    size_t n = 0;
    const EmbeddedShader* all = embedded_shaders(&n);
    for (size_t i = 0; i < n; ++i)
        if (name == all[i].name) return all[i].source;
    return nullptr;
}

namespace {

// If `line` is an #include directive, stores the file name and returns true. A line that starts
// with "#include" but is not of the form #include "name" throws.
bool parse_include(const std::string& line, const std::string& file, int line_no, std::string* name) {
    size_t p = line.find_first_not_of(" \t");
    if (p == std::string::npos || line[p] != '#') return false;
    p = line.find_first_not_of(" \t", p + 1);
    if (p == std::string::npos || line.compare(p, 7, "include") != 0) return false;
    p = line.find_first_not_of(" \t", p + 7);
    size_t q = p == std::string::npos ? p : line.find('"', p + 1);
    if (p == std::string::npos || line[p] != '"' || q == std::string::npos ||
        line.find_first_not_of(" \t\r", q + 1) != std::string::npos)
        fail(TGL_ERROR_INTERNAL, "shader %s line %d: malformed #include (expected #include \"file\"): %s",
             file.c_str(), line_no, line.c_str());
    *name = line.substr(p + 1, q - p - 1);
    return true;
}

struct Resolver {
    std::set<std::string> included;
    std::vector<std::string> files;  // index + 1 = #line source number
    std::string out;

    void add(const std::string& file, const std::string& from, int from_line) {
        if (included.count(file)) return;  // include once
        const char* text = find_embedded_shader(file);
        if (!text) {
            if (from.empty()) fail(TGL_ERROR_INTERNAL, "shader %s is not embedded in the plugin", file.c_str());
            fail(TGL_ERROR_INTERNAL, "shader %s line %d includes \"%s\", which is not embedded in the plugin",
                 from.c_str(), from_line, file.c_str());
        }
        included.insert(file);
        files.push_back(file);
        int number = int(files.size());
        out += "#line 1 " + std::to_string(number) + "\n";
        std::istringstream in(text);
        std::string line;
        int line_no = 0;
        while (std::getline(in, line)) {
            ++line_no;
            std::string inc;
            if (parse_include(line, file, line_no, &inc)) {
                add(inc, file, line_no);
                out += "#line " + std::to_string(line_no + 1) + " " + std::to_string(number) + "\n";
            } else {
                out += line;
                out += '\n';
            }
        }
    }
};

// shader_defines.h: one spelling per meaning; the retired ones are plugin bugs.
void check_define_name(const std::string& file, const std::string& name) {
    const bool dt_suffix = name.size() > 3 && name.compare(name.size() - 3, 3, "_DT") == 0;
    if (name == "WG" || dt_suffix)
        fail(TGL_ERROR_INTERNAL, "shader %s: define %s is a retired spelling (use %s, shader_defines.h)", file.c_str(),
             name.c_str(), dt_suffix ? (name + "YPE").c_str() : def::kWorkgroupSize);
}

}  // namespace

ShaderSource build_shader_source(const std::string& file, const Defines& defines) {
    ShaderSource s;
    s.text = "#version 310 es\n";
    // Extension directives come before any other token of the shader: a variant's
    // REQUIRE_EXTENSION (its value), and the subgroup extensions where TGL_SUBGROUP_SIZE is set.
    for (const auto& d : defines) {
        if (d.first == def::kRequireExtension) s.text += "#extension " + d.second + " : require\n";
        if (d.first == def::kSubgroupSize)
            s.text += "#extension GL_KHR_shader_subgroup_basic : require\n#extension GL_KHR_shader_subgroup_shuffle : require\n";
    }
    s.text += "precision highp float;\nprecision highp int;\n";
    s.label = file + " [";
    for (size_t i = 0; i < defines.size(); ++i) {
        check_define_name(file, defines[i].first);
        if (defines[i].first != def::kRequireExtension) s.text += "#define " + defines[i].first + " " + defines[i].second + "\n";
        if (i) s.label += ' ';
        s.label += defines[i].first;
        if (!defines[i].second.empty()) s.label += "=" + defines[i].second;
    }
    s.label += "]";
    Resolver r;
    r.add(file, "", 0);
    s.text += r.out;
    s.legend = "source 0 = preamble";
    for (size_t i = 0; i < r.files.size(); ++i)
        s.legend += ", source " + std::to_string(i + 1) + " = " + r.files[i];
    return s;
}

namespace {

std::string shader_log(GLuint shader) {
    GLint len = 0;
    glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &len);
    std::string log(size_t(len > 0 ? len : 0), '\0');
    if (len > 0) glGetShaderInfoLog(shader, len, nullptr, &log[0]);
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return log.empty() ? "(the driver gave no log)" : log;
}

std::string program_log(GLuint program) {
    GLint len = 0;
    glGetProgramiv(program, GL_INFO_LOG_LENGTH, &len);
    std::string log(size_t(len > 0 ? len : 0), '\0');
    if (len > 0) glGetProgramInfoLog(program, len, nullptr, &log[0]);
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return log.empty() ? "(the driver gave no log)" : log;
}

}  // namespace

std::unordered_set<std::string> declared_uniforms(const std::string& text) {
    // Lines whose first three whitespace-separated words are "uniform", a type and a name that
    // ends at '[' or ';' (a block, "uniform Name {", has neither). Scanned in place: a large
    // variant's source is tens of KB, and it is read on the GL thread at every program load.
    std::unordered_set<std::string> names;
    const auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
    for (size_t pos = 0; pos < text.size();) {
        size_t eol = text.find('\n', pos);
        if (eol == std::string::npos) eol = text.size();
        const std::string_view line(text.data() + pos, eol - pos);
        pos = eol + 1;
        size_t at = 0;
        auto word = [&] {
            while (at < line.size() && space(line[at])) ++at;
            const size_t start = at;
            while (at < line.size() && !space(line[at])) ++at;
            return line.substr(start, at - start);
        };
        if (word() != "uniform" || word().empty()) continue;
        const std::string_view name = word();
        const size_t end = name.find_first_of("[;");
        if (end != std::string_view::npos && end > 0) names.emplace(name.substr(0, end));
    }
    return names;
}

Program compile_program(const ShaderSource& source) {
    GLuint shader = glCreateShader(GL_COMPUTE_SHADER);
    if (!shader) fail(TGL_ERROR_BACKEND_FAILURE, "glCreateShader(GL_COMPUTE_SHADER) failed for %s", source.label.c_str());
    const char* text = source.text.c_str();
    glShaderSource(shader, 1, &text, nullptr);
    glCompileShader(shader);
    GLint ok = GL_FALSE;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        std::string log = shader_log(shader);
        glDeleteShader(shader);
        fail(TGL_ERROR_BACKEND_FAILURE, "compiling compute shader %s failed (%s):\n%s", source.label.c_str(),
             source.legend.c_str(), log.c_str());
    }
    GLuint program = glCreateProgram();
    if (!program) {
        glDeleteShader(shader);
        fail(TGL_ERROR_BACKEND_FAILURE, "glCreateProgram failed for %s", source.label.c_str());
    }
    glAttachShader(program, shader);
    // The on-disk cache (program_cache.h) asks for the binary afterwards.
    glProgramParameteri(program, GL_PROGRAM_BINARY_RETRIEVABLE_HINT, GL_TRUE);
    glLinkProgram(program);
    glDetachShader(program, shader);
    glDeleteShader(shader);
    glGetProgramiv(program, GL_LINK_STATUS, &ok);
    if (!ok) {
        std::string log = program_log(program);
        glDeleteProgram(program);
        fail(TGL_ERROR_BACKEND_FAILURE, "linking compute program %s failed:\n%s", source.label.c_str(), log.c_str());
    }
    return introspect_program(program, source.label);
}

Program introspect_program(GLuint program, const std::string& label) {
    Program p;
    p.id = program;
    p.label = label;
    GLint count = 0, max_len = 0;
    glGetProgramiv(program, GL_ACTIVE_UNIFORMS, &count);
    glGetProgramiv(program, GL_ACTIVE_UNIFORM_MAX_LENGTH, &max_len);
    std::vector<char> name(size_t(max_len > 0 ? max_len : 1) + 1);
    for (GLint i = 0; i < count; ++i) {
        GLsizei len = 0;
        GLint size = 0;
        GLenum type = 0;
        glGetActiveUniform(program, GLuint(i), GLsizei(name.size()), &len, &size, &type, name.data());
        std::string n(name.data(), size_t(len));
        GLint loc = glGetUniformLocation(program, n.c_str());
        if (n.size() > 3 && n.compare(n.size() - 3, 3, "[0]") == 0) n.resize(n.size() - 3);
        if (loc >= 0) p.uniforms[n] = Program::Uniform{loc, type, size};
    }
    return p;
}

}  // namespace gles
}  // namespace tgl
