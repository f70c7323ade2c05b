#!/bin/bash
# The device image has no Open MPI, and `multires --features mpi` links
# this machine's (Debian's) libmpi. `pack DIR` here writes DIR/ompi.tgz
# with the files of the Open MPI runtime packages (mpirun, libmpi, PMIx,
# hwloc, the MCA plugins and their configuration); `install DIR` there
# unpacks it at / without replacing any file the image already has, and
# links mpirun. Transports are kept to shared memory (btl self,vader) so
# that the network plugins, whose libraries the image may lack, stay out.
set -euo pipefail
mode=${1:?usage: openmpi_runtime.sh pack|install DIR}
dir=${2:?usage: openmpi_runtime.sh pack|install DIR}
case $mode in
pack)
  pkgs="openmpi-bin openmpi-common libopenmpi3 libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7
        libevent-2.1-7 libfabric1 libhwloc15 libhwloc-plugins libibverbs1 libnl-3-200 libnl-route-3-200
        libpsm-infinipath1 libpsm2-2 libucx0 libmunge2 librdmacm1 libnuma1 libltdl7 libxnvctrl0 libudev1"
  for p in $pkgs; do dpkg -L "$p"; done | grep -v -E '/doc/|/man/|/lintian/|java|fortran|f08|mpifh|\.mod$' |
    sort -u | while read -r f; do if [ -f "$f" ] || [ -L "$f" ]; then echo "$f"; fi; done > "$dir/ompi.files"
  tar -czf "$dir/ompi.tgz" -T "$dir/ompi.files" 2>/dev/null
  rm "$dir/ompi.files"
  ls -la "$dir/ompi.tgz" ;;
install)
  tar -C / --skip-old-files -xzf "$dir/ompi.tgz"
  [ -e /usr/bin/mpirun ] || ln -s orterun /usr/bin/mpirun
  mkdir -p /etc/openmpi
  printf 'btl = self,vader\npml = ob1\nmca_base_component_show_load_errors = 0\n' >> /etc/openmpi/openmpi-mca-params.conf
  mpirun --version | head -1 ;;
*) echo "openmpi_runtime.sh: unknown mode '$mode' (pack or install)" >&2; exit 2 ;;
esac
