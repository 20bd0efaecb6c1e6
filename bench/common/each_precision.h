/* Includes the file named by BO_TYPED_BODY (a path from bench/common/) once per precision, with T (float, double),
 * P(name) (s##name, d##name) and EPS (FLT_EPSILON, DBL_EPSILON) defined around it: a C benchmark's element-typed
 * half (the LAPACK and residency programs), written once. <float.h> first. No include guard: used once per program. */
#define T float
#define P(name) s##name
#define EPS FLT_EPSILON
#include BO_TYPED_BODY
#undef T
#undef P
#undef EPS
#define T double
#define P(name) d##name
#define EPS DBL_EPSILON
#include BO_TYPED_BODY
#undef T
#undef P
#undef EPS
