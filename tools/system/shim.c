/* The source of the alternative shims (libblas.so.3, liblapack.so.3, libblas64.so.3, liblapack64.so.3): empty on
 * purpose. A shim defines no symbol; it only needs libblasoffload.so.0 (or libblasoffload64.so.0), so that a program
 * needing both libblas.so.3 and liblapack.so.3 loads one copy of the library (tools/system/CMakeLists.txt). */
