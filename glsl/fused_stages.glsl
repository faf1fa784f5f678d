// The stages of a fused elementwise chain (backends/gles/graph_fusion.cpp), one mechanism for
// every kernel that runs one: fused_elementwise.comp (a chain on its own) and norm.comp's EPILOGUE
// (a chain that starts at a norm's output, applied as each element of it is stored). Include after
// dtype.glsl, store.glsl and elementwise_ops.glsl.
//
// Defines (graph_fusion.cpp's bind_fused_views):
//   N_VIEWS        operand views (1..8), bound at FUSED_BINDING + v (views[v]) as uint words
//   FUSED_BINDING  the binding of views[0]
//   V_DTYPES       the views' dtypes (f32, f16 or bf16), comma-separated
//   V_READ         per view, whether it is loaded (some stage reads it before any stage writes it)
//   STAGES         ops of the chain (1..8)
//   S<k>_FN        stage k's function of elementwise_ops.glsl (tgl_op_<name>)
//   S<k>_A, S<k>_B its operands: x[v] (view v's loaded value), r[j] (stage j's result, j < k) or
//                  h (the head: the value the kernel stored just before, e.g. the norm's output);
//                  S<k>_B is 0.0 for a unary op
//   S<k>_OUT       the view stage k stores into
// Uniforms: u_scalars[2k], u_scalars[2k + 1] (stage k's scalar parameters) and u_zero (always 0).
//
// Bit-identical to the unfused ops: each stage calls the same function as elementwise.comp on the
// same f32 values, and its result passes through its integer bits XOR u_zero (always 0, but the
// compiler cannot know it), so that no multiply-add of two stages is contracted into an fma or
// otherwise computed at another precision than the unfused kernels' stores and loads give.

layout(std430, binding = FUSED_BINDING) buffer FusedView { uint d[]; } views[N_VIEWS];

const int kDtype[N_VIEWS] = int[N_VIEWS](V_DTYPES);
const bool kRead[N_VIEWS] = bool[N_VIEWS](V_READ);

uniform float u_scalars[2 * STAGES];
uniform uint u_zero;

// View V's element (a literal V: an SSBO array is indexed by constant expressions only in ES 3.1).
#define FUSED_LOAD(V) \
    if (kRead[V]) x[V] = tgl_to_f32(tgl_extract(views[V].d[tgl_word_of(o[V], kDtype[V])], o[V], kDtype[V]), kDtype[V]);
// Stage K: FN(A, B) rounded to view OUT's dtype, XOR u_zero, stored there; r[K] is what was stored.
#define FUSED_STAGE(K, FN, A, B, OUT)                                                             \
    {                                                                                             \
        uint bits = tgl_from_f32(FN(A, B, u_scalars[2 * K], u_scalars[2 * K + 1]), kDtype[OUT]) ^ u_zero; \
        r[K] = tgl_to_f32(bits, kDtype[OUT]);                                                     \
        TGL_STORE_BITS(views[OUT].d, o[OUT], bits, kDtype[OUT])                                   \
    }

// Runs the chain on the element at offsets o[v] (elements, relative to view v's window). Every view
// that is read is loaded before the first store (an in-place stage reads its element first; a view
// that an earlier stage wrote is read from that stage's register instead).
void fused_stages(int o[N_VIEWS], float h) {
    float x[N_VIEWS];
    FUSED_LOAD(0)
#if N_VIEWS > 1
    FUSED_LOAD(1)
#endif
#if N_VIEWS > 2
    FUSED_LOAD(2)
#endif
#if N_VIEWS > 3
    FUSED_LOAD(3)
#endif
#if N_VIEWS > 4
    FUSED_LOAD(4)
#endif
#if N_VIEWS > 5
    FUSED_LOAD(5)
#endif
#if N_VIEWS > 6
    FUSED_LOAD(6)
#endif
#if N_VIEWS > 7
    FUSED_LOAD(7)
#endif
    float r[STAGES];
    FUSED_STAGE(0, S0_FN, S0_A, S0_B, S0_OUT)
#if STAGES > 1
    FUSED_STAGE(1, S1_FN, S1_A, S1_B, S1_OUT)
#endif
#if STAGES > 2
    FUSED_STAGE(2, S2_FN, S2_A, S2_B, S2_OUT)
#endif
#if STAGES > 3
    FUSED_STAGE(3, S3_FN, S3_A, S3_B, S3_OUT)
#endif
#if STAGES > 4
    FUSED_STAGE(4, S4_FN, S4_A, S4_B, S4_OUT)
#endif
#if STAGES > 5
    FUSED_STAGE(5, S5_FN, S5_A, S5_B, S5_OUT)
#endif
#if STAGES > 6
    FUSED_STAGE(6, S6_FN, S6_A, S6_B, S6_OUT)
#endif
#if STAGES > 7
    FUSED_STAGE(7, S7_FN, S7_A, S7_B, S7_OUT)
#endif
}
