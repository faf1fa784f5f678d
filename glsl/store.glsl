// The one store routine of the kernels (include it after dtype.glsl).
// TGL_STORE_BITS(ARR, I, BITS, DT): stores BITS, the encoding of one element of dtype DT, as element
// I (relative to the bound window) of ARR, an array of uint words holding elements of DT. Elements
// of 1 or 2 bytes change only their own bits of the shared word (atomicAnd/atomicOr): other
// invocations may be writing its other bytes at the same time. A macro because GLSL cannot pass a
// buffer's array to a function.
#define TGL_STORE_BITS(ARR, I, BITS, DT)                \
    {                                                   \
        int st_i = (I);                                 \
        uint st_bits = (BITS);                          \
        if (tgl_dt_log2size(DT) == 2) {                 \
            ARR[st_i] = st_bits;                        \
        } else {                                        \
            int st_w = tgl_word_of(st_i, DT);           \
            uint st_shift = tgl_shift_of(st_i, DT);     \
            uint st_mask = tgl_dt_mask(DT) << st_shift; \
            atomicAnd(ARR[st_w], ~st_mask);             \
            atomicOr(ARR[st_w], (st_bits << st_shift) & st_mask); \
        }                                               \
    }

// TGL_STORE_WIDE(ARR, I, BITS2, DT): the same for bits given as the uvec2 of dtype.glsl's *_wide
// functions: an i64 element writes its two whole words, any other dtype BITS2.x as above.
#define TGL_STORE_WIDE(ARR, I, BITS2, DT)               \
    {                                                   \
        uvec2 sw_bits = (BITS2);                        \
        if ((DT) == DT_I64) {                           \
            ARR[2 * (I)] = sw_bits.x;                   \
            ARR[2 * (I) + 1] = sw_bits.y;               \
        } else {                                        \
            TGL_STORE_BITS(ARR, I, sw_bits.x, DT)       \
        }                                               \
    }

#if defined(Y_DTYPE)
// y_store_bits(i, bits): TGL_STORE_BITS into the output y_data of Y_DTYPE (kernels that define
// Y_DTYPE include this file after declaring y_data).
void y_store_bits(int i, uint bits) TGL_STORE_BITS(y_data, i, bits, Y_DTYPE)
// y_store_wide(i, bits2): TGL_STORE_WIDE into y_data (an i64 y: both words).
void y_store_wide(int i, uvec2 bits2) TGL_STORE_WIDE(y_data, i, bits2, Y_DTYPE)
#endif
