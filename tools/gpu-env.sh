# Sourced by the tools/gpu-*.sh scripts on the GPU machine (../shared/device/README.md), from the
# project root, with $build set: unpacks the GL loader packages carried in .gl/, points glvnd at the
# NVIDIA EGL vendor library, and puts the build's lib/ first on LD_LIBRARY_PATH (a build tree's
# RPATH names the folder it was built in, not this copy).
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export LD_LIBRARY_PATH=$(realpath "$build")/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The runtime's Debian libraries (libonnx1, libprotobuf32; .gl/rt/, see gpu-models.sh --prepare) go
# beside, not into /: they must not replace the image's own.
if compgen -G ".gl/rt/*.deb" >/dev/null; then
  for f in .gl/rt/*.deb; do dpkg -x "$f" /opt/tgl-runtime-libs; done
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/opt/tgl-runtime-libs/usr/lib/x86_64-linux-gnu
fi
