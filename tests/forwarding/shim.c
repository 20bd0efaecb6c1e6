/* A stand-in for the shim libraries that make blasoffload the system's BLAS alternative (libblas64.so.3 in
 * <libdir>/blasoffload/): no symbols of its own, only a DT_NEEDED entry on libblasoffload. */
typedef int bo_shim_has_no_symbols;
