// Device-side errors: an op whose validity depends on data only the GPU sees (index values) checks
// it in a first pass and records the failure here; its later passes test tgl_op_failed() and write
// nothing. The host reads the words at the next call that waits (synchronize, buffer_download,
// device_close), raises the recorded error and clears them (GlesDevice::device_check). Words:
//   [0] seq of the last op whose check failed (its passes see their own u_check_seq here)
//   [1] seq of the first failing op since the host last read (0: none); [2] its first bad
//   position (atomicMin; starts at 0xffffffff); [3] the value found there (a second "report" pass);
//   [4] tgl_status; [5] op id; [6], [7] op-specific details; [8] the high word of the value (an
//   i64 index's; the sign extension of [3] for 32-bit values).
// Defines: STATUS_BINDING.
layout(std430, binding = STATUS_BINDING) buffer TglDeviceStatus { uint tgl_status_words[9]; };

uniform uint u_check_seq;  // this op's sequence number, never 0

bool tgl_op_failed() { return tgl_status_words[0] == u_check_seq; }

void tgl_raise(uint code, uint op, uint pos, uint detail0, uint detail1) {
    tgl_status_words[0] = u_check_seq;  // every writer stores the same value
    uint first = atomicCompSwap(tgl_status_words[1], 0u, u_check_seq);
    if (first == 0u || first == u_check_seq) {
        tgl_status_words[4] = code;
        tgl_status_words[5] = op;
        tgl_status_words[6] = detail0;
        tgl_status_words[7] = detail1;
        atomicMin(tgl_status_words[2], pos);
    }
}

// Report pass: whether `pos` is the recorded first bad position of this op (then store its value).
bool tgl_is_reported(uint pos) { return tgl_status_words[1] == u_check_seq && tgl_status_words[2] == pos; }
void tgl_report_value(uint value) {
    tgl_status_words[3] = value;
    tgl_status_words[8] = int(value) < 0 ? 0xffffffffu : 0u;
}
// An index as TGL_LOAD_INDEX gives it: (low word, high word).
void tgl_report_index(ivec2 value) {
    tgl_status_words[3] = uint(value.x);
    tgl_status_words[8] = uint(value.y);
}
