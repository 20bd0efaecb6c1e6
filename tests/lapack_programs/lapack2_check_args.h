// The invalid-argument cases of lapack2_check.c, included once per precision: each call must return INFO = -i, report
// (routine, i) once through xerbla_ (LAPACK's error-exit tests' check) and leave every array as it was.

static void P(check_args)(void) {
  static const struct {
    const char* routine;
    int arg;
  } cases[] = {
      {"GEQRF", 1},  {"GEQRF", 4},  {"GEQRF", 7}, {"ORGQR", 2}, {"ORGQR", 3},  {"ORMQR", 1},
      {"ORMQR", 2},  {"ORMQR", 10}, {"GELS", 1},  {"GELS", 8},  {"GELS", 10},  {"SYEVD", 1},
      {"SYEVD", 2},  {"SYEVD", 10}, {"SYEV", 3},  {"SYEV", 5},  {"SYEVR", 2},  {"SYEVR", 8},
      {"SYEVR", 9},  {"SYEVR", 15}, {"GESVD", 2}, {"GESVD", 9}, {"GESVD", 13}, {"GESDD", 1},
      {"GESDD", 10}, {"GETRI", 1},  {"GETRI", 3}, {"GETRI", 6}, {"POTRI", 1},  {"POTRI", 4},
      {"GELSD", 1},  {"GELSD", 7},  {"GEQP3", 2}, {"GEQP3", 8}, {"GEEV", 1},   {"GEEV", 11},
  };
  T arrays[6][ARG_ELEMS], before[6][ARG_ELEMS];
  int iwork[ARG_ELEMS], iwork0[ARG_ELEMS];
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    for (int a = 0; a < 6; a++)
      for (int i = 0; i < ARG_ELEMS; i++) arrays[a][i] = (T)NAN;
    for (int i = 0; i < ARG_ELEMS; i++) iwork[i] = INT_POISON;
    memcpy(before, arrays, sizeof arrays);
    memcpy(iwork0, iwork, sizeof iwork);
    T *a = arrays[0], *b = arrays[1], *s = arrays[2], *u = arrays[3], *vt = arrays[4], *work = arrays[5];
    int info = INT_POISON, rank = INT_POISON, mout = INT_POISON, big = ARG_ELEMS, one = 1, zero = 0, two = 2, three = 3,
        four = 4, minus1 = -1;
    T vl = 1, vu = 0, abstol = 0, rcond = 0;
    xerbla_reset();
    switch (c) {
      case 0:  // M < 0
        F(geqrf)(&minus1, &three, a, &four, s, work, &big, &info);
        break;
      case 1:  // LDA < M
        F(geqrf)(&four, &three, a, &two, s, work, &big, &info);
        break;
      case 2:  // LWORK < N
        F(geqrf)(&four, &three, a, &four, s, work, &zero, &info);
        break;
      case 3:  // N > M
        F(orgqr)(&two, &three, &one, a, &two, s, work, &big, &info);
        break;
      case 4:  // K > N
        F(orgqr)(&four, &two, &three, a, &four, s, work, &big, &info);
        break;
      case 5:
        F(ormqr)("X", "N", &four, &two, &two, a, &four, s, b, &four, work, &big, &info, 1, 1);
        break;
      case 6:  // a real routine takes TRANS = 'N' or 'T' only
        F(ormqr)("L", "C", &four, &two, &two, a, &four, s, b, &four, work, &big, &info, 1, 1);
        break;
      case 7:  // LDC < M
        F(ormqr)("L", "N", &four, &two, &two, a, &four, s, b, &three, work, &big, &info, 1, 1);
        break;
      case 8:
        F(gels)("X", &four, &three, &one, a, &four, b, &four, work, &big, &info, 1);
        break;
      case 9:  // LDB < max(M, N)
        F(gels)("N", &two, &four, &one, a, &two, b, &three, work, &big, &info, 1);
        break;
      case 10:  // LWORK < min(M,N) + max(min(M,N), NRHS)
        F(gels)("N", &four, &three, &one, a, &four, b, &four, work, &one, &info, 1);
        break;
      case 11:
        F(syevd)("X", "U", &four, a, &four, s, work, &big, iwork, &big, &info, 1, 1);
        break;
      case 12:
        F(syevd)("V", "X", &four, a, &four, s, work, &big, iwork, &big, &info, 1, 1);
        break;
      case 13:  // LIWORK < 3 + 5 N
        F(syevd)("V", "U", &four, a, &four, s, work, &big, iwork, &one, &info, 1, 1);
        break;
      case 14:
        F(syev)("V", "U", &minus1, a, &four, s, work, &big, &info, 1, 1);
        break;
      case 15:  // LDA < N
        F(syev)("V", "U", &four, a, &three, s, work, &big, &info, 1, 1);
        break;
      case 16:
        F(syevr)
        ("V", "X", "U", &four, a, &four, &vl, &vu, &one, &four, &abstol, &mout, s, u, &four, iwork, work, &big,
         iwork + 16, &big, &info, 1, 1, 1);
        break;
      case 17:  // RANGE = 'V' with VU <= VL
        F(syevr)
        ("V", "V", "U", &four, a, &four, &vl, &vu, &one, &four, &abstol, &mout, s, u, &four, iwork, work, &big,
         iwork + 16, &big, &info, 1, 1, 1);
        break;
      case 18:  // RANGE = 'I' with IL < 1
        F(syevr)
        ("V", "I", "U", &four, a, &four, &vl, &vu, &zero, &four, &abstol, &mout, s, u, &four, iwork, work, &big,
         iwork + 16, &big, &info, 1, 1, 1);
        break;
      case 19:  // LDZ < N with JOBZ = 'V'
        F(syevr)
        ("V", "A", "U", &four, a, &four, &vl, &vu, &one, &four, &abstol, &mout, s, u, &one, iwork, work, &big,
         iwork + 16, &big, &info, 1, 1, 1);
        break;
      case 20:  // JOBU = JOBVT = 'O'
        F(gesvd)("O", "O", &four, &three, a, &four, s, u, &four, vt, &four, work, &big, &info, 1, 1);
        break;
      case 21:  // LDU < M with JOBU = 'A'
        F(gesvd)("A", "A", &four, &three, a, &four, s, u, &three, vt, &four, work, &big, &info, 1, 1);
        break;
      case 22:  // LWORK below the minimum
        F(gesvd)("A", "A", &four, &three, a, &four, s, u, &four, vt, &four, work, &one, &info, 1, 1);
        break;
      case 23:
        F(gesdd)("X", &four, &three, a, &four, s, u, &four, vt, &four, work, &big, iwork, &info, 1);
        break;
      case 24:  // LDVT < N with JOBZ = 'A'
        F(gesdd)("A", &four, &three, a, &four, s, u, &four, vt, &two, work, &big, iwork, &info, 1);
        break;
      case 25:
        F(getri)(&minus1, a, &four, iwork, work, &big, &info);
        break;
      case 26:
        F(getri)(&four, a, &three, iwork, work, &big, &info);
        break;
      case 27:  // LWORK < N
        F(getri)(&four, a, &four, iwork, work, &one, &info);
        break;
      case 28:
        F(potri)("X", &four, a, &four, &info, 1);
        break;
      case 29:
        F(potri)("L", &four, a, &three, &info, 1);
        break;
      case 30:
        F(gelsd)(&minus1, &three, &one, a, &four, b, &four, s, &rcond, &rank, work, &big, iwork, &info);
        break;
      case 31:  // LDB < max(M, N)
        F(gelsd)(&two, &four, &one, a, &two, b, &three, s, &rcond, &rank, work, &big, iwork, &info);
        break;
      case 32:
        F(geqp3)(&four, &minus1, a, &four, iwork, s, work, &big, &info);
        break;
      case 33:  // LWORK < 3 N + 1
        F(geqp3)(&four, &three, a, &four, iwork, s, work, &one, &info);
        break;
      case 34:
        F(geev)("X", "N", &four, a, &four, s, b, u, &four, vt, &four, work, &big, &info, 1, 1);
        break;
      case 35:  // LDVR < N with JOBVR = 'V'
        F(geev)("N", "V", &four, a, &four, s, b, u, &four, vt, &three, work, &big, &info, 1, 1);
        break;
    }
    char want[16], what[64];
    snprintf(want, sizeof want, PUPPER "%s", cases[c].routine);
    Result r = result_new();
    check_info(&r, info, -cases[c].arg);
    if (xerbla_calls != 1 || strcmp(xerbla_name, want) != 0 || xerbla_info != cases[c].arg) {
      snprintf(what, sizeof what, "XERBLA calls=%d name='%s' info=%d", xerbla_calls, xerbla_name, xerbla_info);
      check_true(&r, 0, what);
    }
    // LAPACK may set WORK(1) and IWORK(1) (the workspace answers) before it checks the arguments.
    iwork[0] = iwork0[0], iwork[16] = iwork0[16];
    check_true(&r, memcmp(before, arrays, 5 * sizeof arrays[0]) == 0 && memcmp(iwork0, iwork, sizeof iwork) == 0,
               "ARRAYS WRITTEN");
    check_true(&r, rank == INT_POISON && mout == INT_POISON, "RANK/M WRITTEN");
    snprintf(what, sizeof what, "%s invalid argument %d", want, cases[c].arg);
    for (char* p = what; *p && *p != ' '; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    report(&r, what);
  }
}
