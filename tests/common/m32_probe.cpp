// Configure-time probe: can the C++ compiler build for i386 (-m32), headers included?
#include <cstdint>
#include <string>
static_assert(sizeof(void*) == 4, "-m32 gives 4-byte pointers");
