// Which cases lapack2_check.c runs, included once per precision last: every option combination and both workspaces
// over small fixed shapes (the sweeps), then the main options at each size given on the command line.

#define SEED(a, b, c, d) seed_of((a), (b), (c), (d), sizeof(T))

// ---- sweeps: small shapes, every option, both workspaces ------------------------------------------------------------

static void P(sweep_qr)(void) {
  static const int shapes[][3] = {{0, 0, 0},   {0, 3, 0},   {3, 0, 0},   {1, 1, 0},   {2, 2, 0},
                                  {1, 2, 0},   {2, 1, 0},   {17, 17, 0}, {40, 17, 0}, {17, 40, 0},
                                  {20, 17, 0}, {17, 20, 0}, {40, 17, 1}, {17, 40, 1}};
  static const int nshapes = sizeof shapes / sizeof shapes[0];
  char what[128], shape[48];
  for (int ws = 0; ws < 2; ws++) {
    Sweep sw = {0};
    snprintf(what, sizeof what, PNAME "geqrf lda=m+2 lwork=%s", ws_names[ws]);
    for (int i = 0; i < nshapes; i++) {
      int m = shapes[i][0], n = shapes[i][1], ill = shapes[i][2];
      Result r = P(case_geqrf)(m, n, m + 2, ws, ill, SEED(1, m, n, ill));
      snprintf(shape, sizeof shape, "m=%d n=%d%s", m, n, ill ? " ill-conditioned" : "");
      sweep_add(&sw, &r, what, shape);
    }
    sweep_end(&sw, what);

    static const int orgqr_shapes[][3] = {{0, 0, 0},   {1, 1, 1},    {1, 1, 0},    {2, 2, 2},
                                          {2, 1, 1},   {17, 17, 17}, {40, 17, 17}, {40, 17, 9},
                                          {17, 17, 0}, {20, 17, 3},  {40, 40, 17}};
    Sweep so = {0};
    snprintf(what, sizeof what, PNAME "orgqr lda=m+1 lwork=%s", ws_names[ws]);
    for (size_t i = 0; i < sizeof orgqr_shapes / sizeof orgqr_shapes[0]; i++) {
      int m = orgqr_shapes[i][0], n = orgqr_shapes[i][1], k = orgqr_shapes[i][2];
      Result r = P(case_orgqr)(m, n, k, m + 1, ws, SEED(2, m, n, k));
      snprintf(shape, sizeof shape, "m=%d n=%d k=%d", m, n, k);
      sweep_add(&so, &r, what, shape);
    }
    sweep_end(&so, what);

    static const int ormqr_shapes[][3] = {{0, 0, 0},  {1, 1, 1},    {2, 3, 2},    {3, 2, 2},    {17, 5, 9},
                                          {5, 17, 9}, {17, 17, 17}, {40, 17, 17}, {17, 40, 17}, {20, 17, 0}};
    for (int side = 0; side < 2; side++) {
      for (int t = 0; t < 2; t++) {
        Sweep sm = {0};
        char sd = "LR"[side], tr = "NT"[t];
        snprintf(what, sizeof what, PNAME "ormqr side=%c trans=%c ldc=m+3 lwork=%s", sd, tr, ws_names[ws]);
        for (size_t i = 0; i < sizeof ormqr_shapes / sizeof ormqr_shapes[0]; i++) {
          int m = ormqr_shapes[i][0], n = ormqr_shapes[i][1], k = ormqr_shapes[i][2];
          if (k > (sd == 'L' ? m : n)) continue;
          Result r = P(case_ormqr)(sd, tr, m, n, k, m + 3, ws, SEED(3, m, n, k));
          snprintf(shape, sizeof shape, "m=%d n=%d k=%d", m, n, k);
          sweep_add(&sm, &r, what, shape);
        }
        sweep_end(&sm, what);
      }
    }

    static const int gels_shapes[][4] = {{0, 0, 1, 0},   {0, 3, 2, 0},   {3, 0, 2, 0},   {3, 2, 0, 0},   {1, 1, 1, 0},
                                         {2, 1, 1, 0},   {1, 2, 1, 0},   {17, 17, 3, 0}, {40, 17, 3, 0}, {17, 40, 3, 0},
                                         {20, 17, 1, 0}, {17, 20, 1, 0}, {40, 17, 2, 1}, {17, 40, 2, 1}};
    for (int t = 0; t < 2; t++) {
      Sweep sg = {0};
      char tr = "NT"[t];
      snprintf(what, sizeof what, PNAME "gels trans=%c lda=m+1 ldb=max(m,n)+2 lwork=%s", tr, ws_names[ws]);
      for (size_t i = 0; i < sizeof gels_shapes / sizeof gels_shapes[0]; i++) {
        int m = gels_shapes[i][0], n = gels_shapes[i][1], nrhs = gels_shapes[i][2], ill = gels_shapes[i][3];
        Result r = P(case_gels)(tr, m, n, nrhs, m + 1, imax(m, n) + 2, ws, ill, SEED(4, m, n, nrhs + 10 * ill));
        snprintf(shape, sizeof shape, "m=%d n=%d nrhs=%d%s", m, n, nrhs, ill ? " ill-conditioned" : "");
        sweep_add(&sg, &r, what, shape);
      }
      sweep_end(&sg, what);
    }

    static const int getri_shapes[][2] = {{0, 0}, {1, 0}, {2, 0}, {17, 0}, {40, 0}, {40, 1}, {1, 2}, {2, 2}, {17, 2}};
    Sweep sr = {0};
    snprintf(what, sizeof what, PNAME "getri lda=n+2 lwork=%s", ws_names[ws]);
    for (size_t i = 0; i < sizeof getri_shapes / sizeof getri_shapes[0]; i++) {
      int n = getri_shapes[i][0], kind = getri_shapes[i][1];
      Result r = P(case_getri)(n, n + 2, ws, kind, SEED(5, n, kind, 0));
      snprintf(shape, sizeof shape, "n=%d%s", n, kind == 1 ? " ill-conditioned" : kind == 2 ? " singular" : "");
      sweep_add(&sr, &r, what, shape);
    }
    sweep_end(&sr, what);

    static const int gelsd_shapes[][4] = {{0, 3, 1, 0},    {3, 0, 1, 0},   {1, 1, 1, 1},    {2, 2, 1, 1},
                                          {17, 9, 2, 5},   {9, 17, 2, 5},  {20, 17, 3, 10}, {17, 20, 3, 10},
                                          {40, 17, 2, 17}, {17, 40, 2, 17}};
    Sweep sd = {0};
    snprintf(what, sizeof what, PNAME "gelsd rank-deficient lda=m+1 ldb=max(m,n)+1 lwork=%s", ws_names[ws]);
    for (size_t i = 0; i < sizeof gelsd_shapes / sizeof gelsd_shapes[0]; i++) {
      int m = gelsd_shapes[i][0], n = gelsd_shapes[i][1], nrhs = gelsd_shapes[i][2], rank = gelsd_shapes[i][3];
      Result r = P(case_gelsd)(m, n, nrhs, rank, imax(m, n) + 1, ws, SEED(6, m, n, rank));
      snprintf(shape, sizeof shape, "m=%d n=%d nrhs=%d rank=%d", m, n, nrhs, rank);
      sweep_add(&sd, &r, what, shape);
    }
    sweep_end(&sd, what);

    static const int geqp3_shapes[][4] = {{0, 0, 0, 0},  {1, 1, 1, 0},    {2, 2, 1, 0},    {17, 9, 5, 0},
                                          {9, 17, 5, 1}, {17, 17, 17, 0}, {20, 17, 10, 1}, {40, 17, 8, 0}};
    Sweep sp = {0};
    snprintf(what, sizeof what, PNAME "geqp3 rank-deficient lda=m+2 lwork=%s", ws_names[ws]);
    for (size_t i = 0; i < sizeof geqp3_shapes / sizeof geqp3_shapes[0]; i++) {
      int m = geqp3_shapes[i][0], n = geqp3_shapes[i][1], rank = geqp3_shapes[i][2], fixed = geqp3_shapes[i][3];
      Result r = P(case_geqp3)(m, n, rank, m + 2, ws, fixed, SEED(7, m, n, rank));
      snprintf(shape, sizeof shape, "m=%d n=%d rank=%d%s", m, n, rank, fixed ? " column 3 fixed" : "");
      sweep_add(&sp, &r, what, shape);
    }
    sweep_end(&sp, what);
  }

  // ?potri has no workspace: uplo x the matrix kinds.
  static const int potri_shapes[][2] = {{0, 0}, {1, 0}, {2, 0}, {17, 0}, {40, 0}, {17, 1}, {1, 2}, {17, 2}};
  for (int u = 0; u < 2; u++) {
    Sweep sp = {0};
    snprintf(what, sizeof what, PNAME "potri uplo=%c lda=n+1", "UL"[u]);
    for (size_t i = 0; i < sizeof potri_shapes / sizeof potri_shapes[0]; i++) {
      int n = potri_shapes[i][0], kind = potri_shapes[i][1];
      Result r = P(case_potri)("UL"[u], n, n + 1, kind, SEED(8, n, kind, 0));
      snprintf(shape, sizeof shape, "n=%d%s", n, kind == 1 ? " ill-conditioned" : kind == 2 ? " singular" : "");
      sweep_add(&sp, &r, what, shape);
    }
    sweep_end(&sp, what);
  }
}

static void P(sweep_eig)(void) {
  char what[128], shape[48];
  // ?syevd ?syev ?syevr: the run with vectors (RANGE = 'A') comes first on each matrix, the others compare their
  // eigenvalues with it; kind 1 has eigenvalues of multiplicity 3, kind 2 graded ones (both known exactly).
  static const int sy_shapes[][2] = {{0, 0}, {1, 0}, {2, 0}, {17, 0}, {40, 0}, {17, 1}, {40, 1}, {40, 2}};
  static const int nsy = sizeof sy_shapes / sizeof sy_shapes[0];
  for (int routine = SYEVD; routine <= SYEVR; routine++) {
    int nranges = routine == SYEVR ? 3 : 1;
    Sweep sw[3][2][2][2];  // range x jobz x uplo x ws
    memset(sw, 0, sizeof sw);
    for (int i = 0; i < nsy; i++) {
      int n = sy_shapes[i][0], kind = sy_shapes[i][1];
      T* wv = P(alloc_nan)(n + 2, 1);
      snprintf(shape, sizeof shape, "n=%d%s", n, kind == 1 ? " repeated" : kind == 2 ? " graded" : "");
      for (int ws = 0; ws < 2; ws++)
        for (int u = 0; u < 2; u++)
          for (int rg = 0; rg < nranges; rg++)
            for (int z = 0; z < 2; z++) {
              char jobz = "VN"[z], range = "AVI"[rg], uplo = "UL"[u];
              int first = ws == 0 && u == 0 && rg == 0 && z == 0;
              Result r = P(case_sy)(routine, jobz, range, uplo, n, ws, kind, SEED(9, n, kind, routine),
                                    first ? NULL : wv, first ? wv : NULL);
              snprintf(what, sizeof what, PNAME "%s jobz=%c%s%s uplo=%c lda=n+2 lwork=%s", sy_names[routine], jobz,
                       routine == SYEVR ? " range=" : "",
                       routine == SYEVR ? (rg == 0   ? "A"
                                           : rg == 1 ? "V"
                                                     : "I")
                                        : "",
                       uplo, ws_names[ws]);
              sweep_add(&sw[rg][z][u][ws], &r, what, shape);
            }
      free(wv);
    }
    for (int ws = 0; ws < 2; ws++)
      for (int u = 0; u < 2; u++)
        for (int rg = 0; rg < nranges; rg++)
          for (int z = 0; z < 2; z++) {
            snprintf(what, sizeof what, PNAME "%s jobz=%c%s%s uplo=%c lda=n+2 lwork=%s", sy_names[routine], "VN"[z],
                     routine == SYEVR ? " range=" : "",
                     routine == SYEVR ? (rg == 0   ? "A"
                                         : rg == 1 ? "V"
                                                   : "I")
                                      : "",
                     "UL"[u], ws_names[ws]);
            sweep_end(&sw[rg][z][u][ws], what);
          }
  }

  // ?gesvd: JOBU x JOBVT in A S O N except both O (15), ?gesdd: JOBZ in A S O N; (A, A) / A first on each matrix.
  static const int svd_shapes[][3] = {{0, 0, 0},   {0, 3, 0},   {3, 0, 0},   {1, 1, 0},   {2, 2, 0},
                                      {1, 2, 0},   {2, 1, 0},   {17, 17, 0}, {40, 17, 0}, {20, 17, 0},
                                      {17, 20, 0}, {17, 40, 0}, {40, 17, 1}, {17, 40, 1}};
  static const int nsvd = sizeof svd_shapes / sizeof svd_shapes[0];
  static const char jobs[] = "ASON";
  for (int routine = GESVD; routine <= GESDD; routine++) {
    Sweep sw[16][2];
    memset(sw, 0, sizeof sw);
    int ncombo = routine == GESVD ? 16 : 4;
    for (int i = 0; i < nsvd; i++) {
      int m = svd_shapes[i][0], n = svd_shapes[i][1], ill = svd_shapes[i][2];
      T* sref = P(alloc_nan)(imin(m, n) + 2, 1);
      snprintf(shape, sizeof shape, "m=%d n=%d%s", m, n, ill ? " ill-conditioned" : "");
      for (int ws = 0; ws < 2; ws++)
        for (int c = 0; c < ncombo; c++) {
          char ju = jobs[routine == GESVD ? c / 4 : c], jv = routine == GESVD ? jobs[c % 4] : ju;
          if (ju == 'O' && jv == 'O' && routine == GESVD) continue;
          int first = ws == 0 && c == 0;
          Result r = P(case_svd)(routine, ju, jv, m, n, ws, ill, SEED(10, m, n, ill), first ? NULL : sref,
                                 first ? sref : NULL);
          if (routine == GESVD) {
            snprintf(what, sizeof what, PNAME "gesvd jobu=%c jobvt=%c lda=m+2 lwork=%s", ju, jv, ws_names[ws]);
          } else {
            snprintf(what, sizeof what, PNAME "gesdd jobz=%c lda=m+2 lwork=%s", ju, ws_names[ws]);
          }
          sweep_add(&sw[c][ws], &r, what, shape);
        }
      free(sref);
    }
    for (int ws = 0; ws < 2; ws++)
      for (int c = 0; c < ncombo; c++) {
        char ju = jobs[routine == GESVD ? c / 4 : c], jv = routine == GESVD ? jobs[c % 4] : ju;
        if (ju == 'O' && jv == 'O' && routine == GESVD) continue;
        if (routine == GESVD) {
          snprintf(what, sizeof what, PNAME "gesvd jobu=%c jobvt=%c lda=m+2 lwork=%s", ju, jv, ws_names[ws]);
        } else {
          snprintf(what, sizeof what, PNAME "gesdd jobz=%c lda=m+2 lwork=%s", ju, ws_names[ws]);
        }
        sweep_end(&sw[c][ws], what);
      }
  }

  // ?geev: JOBVL x JOBVR, (V, V) first.
  static const int geev_n[] = {0, 1, 2, 17, 40};
  Sweep sg[4][2];
  memset(sg, 0, sizeof sg);
  for (size_t i = 0; i < sizeof geev_n / sizeof geev_n[0]; i++) {
    int n = geev_n[i];
    T* wref = P(alloc_nan)(2 * n + 4, 1);
    snprintf(shape, sizeof shape, "n=%d", n);
    for (int ws = 0; ws < 2; ws++)
      for (int c = 0; c < 4; c++) {
        int first = ws == 0 && c == 0;
        Result r =
            P(case_geev)("VN"[c / 2], "VN"[c % 2], n, ws, SEED(11, n, 0, 0), first ? NULL : wref, first ? wref : NULL);
        snprintf(what, sizeof what, PNAME "geev jobvl=%c jobvr=%c lda=n+2 lwork=%s", "VN"[c / 2], "VN"[c % 2],
                 ws_names[ws]);
        sweep_add(&sg[c][ws], &r, what, shape);
      }
    free(wref);
  }
  for (int ws = 0; ws < 2; ws++)
    for (int c = 0; c < 4; c++) {
      snprintf(what, sizeof what, PNAME "geev jobvl=%c jobvr=%c lda=n+2 lwork=%s", "VN"[c / 2], "VN"[c % 2],
               ws_names[ws]);
      sweep_end(&sg[c][ws], what);
    }
}

// ---- the given sizes: main options, blocked code paths -------------------------------------------------------------

static void P(run_qr)(int n) {
  int h = n / 2, q = n / 4, g = imin(n, 600);  // g: the CPU-only ?gelsd ?geqp3 stay moderate on the GPU machine
  char what[128];
  Result r;
#define RUN(call, ...)                              \
  do {                                              \
    r = call;                                       \
    snprintf(what, sizeof what, PNAME __VA_ARGS__); \
    report(&r, what);                               \
  } while (0)
  RUN(P(case_geqrf)(n, n, n + 3, WS_QUERY, 0, SEED(1, n, n, 0)), "geqrf m=%d n=%d lda=%d lwork=opt", n, n, n + 3);
  RUN(P(case_geqrf)(n, h, n + 1, WS_QUERY, 0, SEED(1, n, h, 0)), "geqrf m=%d n=%d lda=%d lwork=opt", n, h, n + 1);
  RUN(P(case_geqrf)(h, n, h + 2, WS_QUERY, 0, SEED(1, h, n, 0)), "geqrf m=%d n=%d lda=%d lwork=opt", h, n, h + 2);
  RUN(P(case_geqrf)(n, h, n + 1, WS_MIN, 0, SEED(1, n, h, 0)), "geqrf m=%d n=%d lda=%d lwork=min", n, h, n + 1);
  RUN(P(case_geqrf)(n, n, n, WS_QUERY, 1, SEED(1, n, n, 1)), "geqrf m=%d n=%d lda=%d ill-conditioned", n, n, n);

  RUN(P(case_orgqr)(n, h, h, n + 2, WS_QUERY, SEED(2, n, h, h)), "orgqr m=%d n=%d k=%d lwork=opt", n, h, h);
  RUN(P(case_orgqr)(n, h, q, n + 2, WS_MIN, SEED(2, n, h, q)), "orgqr m=%d n=%d k=%d lwork=min", n, h, q);
  RUN(P(case_orgqr)(n, n, n, n, WS_QUERY, SEED(2, n, n, n)), "orgqr m=%d n=%d k=%d lda=m lwork=opt", n, n, n);

  for (int side = 0; side < 2; side++)
    for (int t = 0; t < 2; t++) {
      char sd = "LR"[side], tr = "NT"[t];
      int m = sd == 'L' ? n : 40, nc = sd == 'L' ? 40 : n;
      RUN(P(case_ormqr)(sd, tr, m, nc, h, m + 3, WS_QUERY, SEED(3, m, nc, h)),
          "ormqr side=%c trans=%c m=%d n=%d k=%d lwork=opt", sd, tr, m, nc, h);
    }
  RUN(P(case_ormqr)('L', 'T', n, 40, h, n + 3, WS_MIN, SEED(3, n, 40, h)),
      "ormqr side=L trans=T m=%d n=40 k=%d lwork=min", n, h);
  RUN(P(case_ormqr)('R', 'N', 40, n, n, 41, WS_MIN, SEED(3, 40, n, n)), "ormqr side=R trans=N m=40 n=%d k=%d lwork=min",
      n, n);

  // op(A) tall: least squares; wide: minimum norm (the m < n cases take LAPACK's LQ path).
  RUN(P(case_gels)('N', n, h, 3, n + 1, n + 2, WS_QUERY, 0, SEED(4, n, h, 0)),
      "gels trans=N m=%d n=%d nrhs=3 lwork=opt", n, h);
  RUN(P(case_gels)('T', n, h, 2, n + 1, n + 2, WS_QUERY, 0, SEED(4, n, h, 1)),
      "gels trans=T m=%d n=%d nrhs=2 lwork=opt", n, h);
  RUN(P(case_gels)('N', h, n, 2, h + 1, n + 2, WS_QUERY, 0, SEED(4, h, n, 0)),
      "gels trans=N m=%d n=%d nrhs=2 lwork=opt", h, n);
  RUN(P(case_gels)('T', h, n, 3, h + 1, n + 2, WS_QUERY, 0, SEED(4, h, n, 1)),
      "gels trans=T m=%d n=%d nrhs=3 lwork=opt", h, n);
  RUN(P(case_gels)('N', n, h, 1, n, n, WS_MIN, 0, SEED(4, n, h, 2)),
      "gels trans=N m=%d n=%d nrhs=1 lda=m ldb=m lwork=min", n, h);
  RUN(P(case_gels)('N', n, h, 2, n + 1, n + 1, WS_QUERY, 1, SEED(4, n, h, 3)),
      "gels trans=N m=%d n=%d nrhs=2 ill-conditioned", n, h);

  RUN(P(case_getri)(n, n + 3, WS_QUERY, 0, SEED(5, n, 0, 0)), "getri n=%d lda=%d lwork=opt", n, n + 3);
  RUN(P(case_getri)(n, n, WS_MIN, 0, SEED(5, n, 0, 1)), "getri n=%d lda=%d lwork=min", n, n);
  RUN(P(case_getri)(n, n + 1, WS_QUERY, 1, SEED(5, n, 1, 0)), "getri n=%d ill-conditioned", n);
  RUN(P(case_getri)(h, h + 1, WS_QUERY, 2, SEED(5, h, 2, 0)), "getri n=%d singular", h);

  RUN(P(case_potri)('U', n, n + 2, 0, SEED(8, n, 0, 0)), "potri uplo=U n=%d lda=%d", n, n + 2);
  RUN(P(case_potri)('L', n, n, 0, SEED(8, n, 0, 1)), "potri uplo=L n=%d lda=%d", n, n);
  RUN(P(case_potri)('L', n, n + 1, 1, SEED(8, n, 1, 0)), "potri uplo=L n=%d ill-conditioned", n);
  RUN(P(case_potri)('U', h, h + 1, 2, SEED(8, h, 2, 0)), "potri uplo=U n=%d singular", h);

  RUN(P(case_gelsd)(g, g / 2, 3, g / 4, g + 1, WS_QUERY, SEED(6, g, g / 2, g / 4)),
      "gelsd m=%d n=%d nrhs=3 rank=%d lwork=opt", g, g / 2, g / 4);
  RUN(P(case_gelsd)(g / 2, g, 2, g / 3, g + 2, WS_MIN, SEED(6, g / 2, g, g / 3)),
      "gelsd m=%d n=%d nrhs=2 rank=%d lwork=min", g / 2, g, g / 3);
  RUN(P(case_geqp3)(g, g / 2, g / 4, g + 1, WS_QUERY, 1, SEED(7, g, g / 2, g / 4)),
      "geqp3 m=%d n=%d rank=%d column 3 fixed lwork=opt", g, g / 2, g / 4);
  RUN(P(case_geqp3)(g / 2, g, g / 3, g / 2 + 2, WS_MIN, 0, SEED(7, g / 2, g, g / 3)),
      "geqp3 m=%d n=%d rank=%d lwork=min", g / 2, g, g / 3);
}

static void P(run_eig)(int n) {
  int h = n / 2, g = imin(n, 300);  // g: the CPU-only ?geev
  char what[128];
  Result r;
  T *w = P(alloc_nan)(n + 2, 1), *s = P(alloc_nan)(n + 2, 1);
  // One random symmetric matrix (the same for either uplo): the first run with vectors gives the reference eigenvalues.
  uint64_t sy = SEED(12, n, 0, 0);
  RUN(P(case_sy)(SYEVD, 'V', 'A', 'U', n, WS_QUERY, 0, sy, NULL, w), "syevd jobz=V uplo=U n=%d lwork=opt", n);
  RUN(P(case_sy)(SYEVD, 'N', 'A', 'L', n, WS_QUERY, 0, sy, w, NULL), "syevd jobz=N uplo=L n=%d lwork=opt", n);
  RUN(P(case_sy)(SYEVD, 'V', 'A', 'L', n, WS_MIN, 0, sy, w, NULL), "syevd jobz=V uplo=L n=%d lwork=min", n);
  RUN(P(case_sy)(SYEVD, 'V', 'A', 'L', h, WS_QUERY, 1, SEED(12, h, 1, 0), NULL, NULL),
      "syevd jobz=V uplo=L n=%d repeated eigenvalues", h);
  RUN(P(case_sy)(SYEV, 'V', 'A', 'L', n, WS_QUERY, 0, sy, w, NULL), "syev jobz=V uplo=L n=%d lwork=opt", n);
  RUN(P(case_sy)(SYEV, 'N', 'A', 'U', n, WS_MIN, 0, sy, w, NULL), "syev jobz=N uplo=U n=%d lwork=min", n);
  RUN(P(case_sy)(SYEV, 'V', 'A', 'U', h, WS_QUERY, 2, SEED(12, h, 2, 0), NULL, NULL),
      "syev jobz=V uplo=U n=%d graded eigenvalues", h);
  RUN(P(case_sy)(SYEVR, 'V', 'A', 'L', n, WS_QUERY, 0, sy, w, NULL), "syevr jobz=V range=A uplo=L n=%d lwork=opt", n);
  RUN(P(case_sy)(SYEVR, 'V', 'V', 'U', n, WS_QUERY, 0, sy, w, NULL), "syevr jobz=V range=V uplo=U n=%d lwork=opt", n);
  RUN(P(case_sy)(SYEVR, 'N', 'I', 'L', n, WS_QUERY, 0, sy, w, NULL), "syevr jobz=N range=I uplo=L n=%d lwork=opt", n);
  RUN(P(case_sy)(SYEVR, 'N', 'A', 'U', n, WS_MIN, 0, sy, w, NULL), "syevr jobz=N range=A uplo=U n=%d lwork=min", n);
  RUN(P(case_sy)(SYEVR, 'V', 'I', 'U', h, WS_MIN, 1, SEED(12, h, 1, 1), NULL, NULL),
      "syevr jobz=V range=I uplo=U n=%d repeated eigenvalues lwork=min", h);

  // The SVD: square, tall (2:1, LAPACK's QR-first paths) and wide; (A, A) or (S, S) first on each matrix, the last
  // ?gesvd of each with the minimum workspace.
  static const int shapes[3][2] = {{2, 2}, {2, 1}, {1, 2}};
  static const char* const gesvd_jobs[3] = {"AANN", "SSOANO", "SSAOON"};
  static const char gesdd_jobs[3][3] = {"AN", "SO", "SO"};
  for (int i = 0; i < 3; i++) {
    int m = shapes[i][0] * h, nn = shapes[i][1] * h, njobs = (int)strlen(gesvd_jobs[i]) / 2;
    uint64_t seed = SEED(13, m, nn, 0);
    for (int c = 0; c < njobs; c++) {
      char ju = gesvd_jobs[i][2 * c], jv = gesvd_jobs[i][2 * c + 1];
      int ws = c == njobs - 1 ? WS_MIN : WS_QUERY;
      RUN(P(case_svd)(GESVD, ju, jv, m, nn, ws, 0, seed, c ? s : NULL, c ? NULL : s),
          "gesvd jobu=%c jobvt=%c m=%d n=%d lwork=%s", ju, jv, m, nn, ws_names[ws]);
    }
    for (int c = 0; c < 2; c++) {
      char jz = gesdd_jobs[i][c];
      int ws = i == 1 && c == 1 ? WS_MIN : WS_QUERY;
      RUN(P(case_svd)(GESDD, jz, jz, m, nn, ws, 0, seed, s, NULL), "gesdd jobz=%c m=%d n=%d lwork=%s", jz, m, nn,
          ws_names[ws]);
    }
  }
  RUN(P(case_svd)(GESDD, 'S', 'S', n, h, WS_QUERY, 1, SEED(13, n, h, 1), NULL, NULL),
      "gesdd jobz=S m=%d n=%d ill-conditioned", n, h);
  RUN(P(case_svd)(GESVD, 'S', 'N', h, n, WS_QUERY, 1, SEED(13, h, n, 1), NULL, NULL),
      "gesvd jobu=S jobvt=N m=%d n=%d ill-conditioned", h, n);

  T* wg = P(alloc_nan)(2 * g + 4, 1);
  uint64_t ge = SEED(14, g, 0, 0);
  RUN(P(case_geev)('V', 'V', g, WS_QUERY, ge, NULL, wg), "geev jobvl=V jobvr=V n=%d lwork=opt", g);
  RUN(P(case_geev)('N', 'N', g, WS_QUERY, ge, wg, NULL), "geev jobvl=N jobvr=N n=%d lwork=opt", g);
  RUN(P(case_geev)('N', 'V', g, WS_MIN, ge, wg, NULL), "geev jobvl=N jobvr=V n=%d lwork=min", g);
  free(w), free(s), free(wg);
#undef RUN
}

#undef SEED
