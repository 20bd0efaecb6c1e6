/* The ScaLAPACK routines the library takes over whole (src/scalapack/): define BO_SCALAPACK_ENTRY(x, name, T) (x the
 * precision letter, name the LAPACK routine whose gathered call does the work (request.h), T the element type) and
 * include this file. Plain C preprocessor: the LP64 library's version script is made from it too (abi/exports.map.in).
 */
#define BO_SCALAPACK_PRECISIONS(name)    \
  BO_SCALAPACK_ENTRY(s, name, float)     \
  BO_SCALAPACK_ENTRY(d, name, double)    \
  BO_SCALAPACK_ENTRY(c, name, bo_cfloat) \
  BO_SCALAPACK_ENTRY(z, name, bo_cdouble)
BO_SCALAPACK_PRECISIONS(getrf)
BO_SCALAPACK_PRECISIONS(potrf)
BO_SCALAPACK_PRECISIONS(geqrf)
BO_SCALAPACK_PRECISIONS(gesv)
BO_SCALAPACK_PRECISIONS(posv)
BO_SCALAPACK_PRECISIONS(gels)
#undef BO_SCALAPACK_PRECISIONS
