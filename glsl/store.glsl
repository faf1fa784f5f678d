// y_store_bits(i, bits): stores element i (relative to the bound window) of the output y_data, an
// array of uint words holding elements of Y_DTYPE (dtype.glsl). Include it after declaring y_data.
// Elements of 1 or 2 bytes change only their own bits of the shared word (atomicAnd/atomicOr):
// other invocations may be writing its other bytes at the same time.
void y_store_bits(int i, uint bits) {
    if (tgl_dt_log2size(Y_DTYPE) == 2) {
        y_data[i] = bits;
    } else {
        int w = tgl_word_of(i, Y_DTYPE);
        uint shift = tgl_shift_of(i, Y_DTYPE);
        uint mask = tgl_dt_mask(Y_DTYPE) << shift;
        atomicAnd(y_data[w], ~mask);
        atomicOr(y_data[w], (bits << shift) & mask);
    }
}
