// Linear workgroup index of a split dispatch. A grid larger than the device's workgroup-count
// limits is issued as several dispatches of at most max_count_x * max_count_y workgroups; each
// sets u_group_base to the linear index of its first workgroup. Shaders guard against indices past
// the end (the last row of a dispatch may be partial).
uniform uint u_group_base;

uint tgl_group_index() {
    return u_group_base + gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}
