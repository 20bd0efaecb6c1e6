/* Includes the file named by BO_TYPED_BODY (a path from bench/common/) once per precision, with T (float, double),
 * P(name) (s##name, d##name) and EPS (FLT_EPSILON, DBL_EPSILON) defined around it: a C benchmark's element-typed
 * half (the LAPACK and residency programs), written once. <float.h> first. No include guard: used once per program.
 * With BO_TYPED_COMPLEX defined (and <complex.h> included) first, twice more for the complex precisions: T float
 * _Complex, double _Complex; P(name) c##name, z##name. In every pass BO_CPLX is 0 or 1, so that a body written for a
 * real T can say where a complex T differs (only a program that asks gets the complex passes: the other bodies are
 * real-only). */
#define T float
#define BO_CPLX 0
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
#undef BO_CPLX
#ifdef BO_TYPED_COMPLEX
#define T float _Complex
#define BO_CPLX 1
#define P(name) c##name
#define EPS FLT_EPSILON
#include BO_TYPED_BODY
#undef T
#undef P
#undef EPS
#define T double _Complex
#define P(name) z##name
#define EPS DBL_EPSILON
#include BO_TYPED_BODY
#undef T
#undef P
#undef EPS
#undef BO_CPLX
#endif
