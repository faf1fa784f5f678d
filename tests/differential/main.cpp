// tgl_differential --reference=<plugin> --subject=<plugin>: the subject plugin against the
// reference plugin on seeded random inputs.
#include "tgl_test/support.h"

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    tgl_test::init(&argc, argv, tgl_test::Mode::Differential);
    return RUN_ALL_TESTS();
}
