// Consumer of an installed tensorgl through find_package (C++ wrapper): adds two 2x2 matrices on
// the GLES plugin and checks the sum. Exits 0 only when the result is right.
#include <tensorgl/tensorgl.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main() {
    try {
        tgl::Plugin gles("gles");  // found next to libtensorgl: no TGL_PLUGIN_PATH needed
        tgl::Device dev(gles, 0);
        auto a = tgl::Buffer::from(dev, std::vector<float>{1, 2, 3, 4});
        auto b = tgl::Buffer::from(dev, std::vector<float>{10, 20, 30, 40});
        tgl::Buffer y(dev, 4 * sizeof(float));
        tgl::run_op(dev, TGL_OP_ADD, nullptr, {tgl::tensor<float>(a, {2, 2}), tgl::tensor<float>(b, {2, 2})},
                    {tgl::tensor<float>(y, {2, 2})});
        std::vector<float> sum = y.download<float>();
        std::printf("find_package consumer: %s on %s: [1 2 3 4] + [10 20 30 40] = [%g %g %g %g]\n",
                    gles.path().c_str(), gles.property(0, "renderer").value_or("?").c_str(), sum[0], sum[1],
                    sum[2], sum[3]);
        if (sum != std::vector<float>{11, 22, 33, 44}) {
            std::fprintf(stderr, "find_package consumer: wrong sum\n");
            return 1;
        }
        const std::string dir = gles.path().substr(0, gles.path().rfind('/'));
        char real_dir[4096];
        if (!realpath(TENSORGL_PLUGIN_DIR, real_dir) || dir != real_dir) {
            std::fprintf(stderr, "find_package consumer: plugin loaded from %s, not TENSORGL_PLUGIN_DIR %s\n",
                         dir.c_str(), TENSORGL_PLUGIN_DIR);
            return 1;
        }
        return 0;
    } catch (const tgl::Error& e) {
        std::fprintf(stderr, "find_package consumer: %s\n", e.what());
        return 1;
    }
}
