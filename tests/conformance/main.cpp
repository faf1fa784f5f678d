// tgl_conformance --plugin=<path>: any tensorgl plugin against the ABI contract and known answers.
#include "tgl_test/support.h"

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    tgl_test::init(&argc, argv, tgl_test::Mode::Conformance);
    return RUN_ALL_TESTS();
}
