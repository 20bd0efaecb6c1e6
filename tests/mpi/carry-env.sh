# Sourced by the device scripts (tests/gpu/device-mpi.sh, device-scalapack.sh, bench/scalapack/device-run.sh) on the
# GPU machine: unpacks a carry of tests/mpi/make-mpi-carry.sh once (into /tmp, by its commit) and sets K (the unpacked
# folder: lib/, bin/, deb/), D (its usr), L (its libraries), the OpenMPI/PMIx variables that find the unpacked OpenMPI
# away from /usr, PATH, and REF_LIBS / OPENBLAS_LIBS (the LD_LIBRARY_PATH of the reference BLAS + LAPACK and of
# OpenBLAS + reference LAPACK). Usage: . tests/mpi/carry-env.sh CARRY
bo_carry=$(cd "$1" && pwd)
[ -e "$bo_carry/mpi-carry.tar.xz" ] || { echo "carry-env: no $bo_carry/mpi-carry.tar.xz" >&2; return 2; }
K=/tmp/blasoffload-mpi-$(tr -d '\n+' <"$bo_carry/COMMIT")
if [ ! -e "$K/.unpacked" ] || [ "$bo_carry/mpi-carry.tar.xz" -nt "$K/.unpacked" ]; then
  rm -rf "$K" && mkdir -p "$K"
  tar -C "$K" --strip-components=1 -xJf "$bo_carry/mpi-carry.tar.xz" && touch "$K/.unpacked"
fi
D=$K/deb/usr
L=$D/lib/x86_64-linux-gnu
export OPAL_PREFIX=$D PMIX_INSTALL_PREFIX=$L/pmix2
export OMPI_MCA_mca_base_component_path=$L/openmpi/lib/openmpi3 PMIX_MCA_mca_base_component_path=$L/pmix2/lib/pmix
# Root (the lent machine), one node, shared memory only.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
export OMPI_MCA_plm_rsh_agent=false
export PATH=$D/bin:$PATH LD_LIBRARY_PATH=$L/openmpi/lib:$L:${LD_LIBRARY_PATH:-}
REF_LIBS=$L/blas:$L/lapack:$L
OPENBLAS_LIBS=$L/lapack:$L/openblas-pthread:$L
