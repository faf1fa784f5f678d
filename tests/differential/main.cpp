// tgl_differential --reference=<plugin> --subject=<plugin>: the subject plugin against the
// reference plugin on seeded random inputs.
#include "tgl_test/support.h"

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

// TGL_GLES_TEST_PLAN_TRACE (the GLES plugin's dispatch trace, backends/gles/test_hooks.h): a line
// "# <suite>.<test>" before each test's dispatches, so that tools/plan-cases.py can compare the
// plans of two runs case by case.
class PlanTraceMarks : public ::testing::EmptyTestEventListener {
public:
    explicit PlanTraceMarks(const char* path) : fd_(::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) {}
    ~PlanTraceMarks() override {
        if (fd_ >= 0) ::close(fd_);
    }
    void OnTestStart(const ::testing::TestInfo& t) override {
        const std::string line = std::string("# ") + t.test_suite_name() + "." + t.name() + "\n";
        if (fd_ >= 0 && ::write(fd_, line.data(), line.size()) != ssize_t(line.size())) fd_ = -1;
    }

private:
    int fd_;
};

// TGL_TEST_SKIP_LIST=<file>: the tests it names (one full gtest name a line; '#' starts a comment)
// are added to the filter's negative patterns. CI's repeats of the suite skip the cases whose plan
// is the default run's (tools/plan-cases.py writes the lists); in-process, since thousands of names
// pass the 128 KiB limit of one command-line argument.
bool skip_listed(const char* path) {
    std::ifstream in(path);
    if (!in) {
        std::fprintf(stderr, "TGL_TEST_SKIP_LIST=%s: cannot read it\n", path);
        return false;
    }
    std::string filter = GTEST_FLAG_GET(filter), names, line;
    while (std::getline(in, line)) {
        const size_t hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
        if (!line.empty()) names += (names.empty() ? "" : ":") + line;
    }
    if (names.empty()) return true;
    filter += (filter.find('-') == std::string::npos ? "-" : ":") + names;
    GTEST_FLAG_SET(filter, filter);
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    tgl_test::init(&argc, argv, tgl_test::Mode::Differential);
    if (const char* skip = std::getenv("TGL_TEST_SKIP_LIST"); skip && *skip && !skip_listed(skip)) return 2;
    if (const char* trace = std::getenv("TGL_GLES_TEST_PLAN_TRACE"); trace && *trace)
        ::testing::UnitTest::GetInstance()->listeners().Append(new PlanTraceMarks(trace));
    return RUN_ALL_TESTS();
}
