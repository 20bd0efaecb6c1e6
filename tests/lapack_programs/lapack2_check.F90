! A Fortran user program, the lighter twin of lapack2_check.c: each "LAPACK part 2" routine (?geqrf ?orgqr ?ormqr ?gels
! ?syevd ?syev ?syevr ?gesvd ?gesdd ?getri ?potri, and ?gelsd ?geqp3 ?geev) in s and d with its main options, one
! workspace query each (printed as QUERY lines), LAPACK's residual and orthogonality ratios; one line per check, exit
! status 1 on any failure. Usage: lapack2_check_f [N ...] (default 300 1000; N >= 16).
!
! The products of the checks go through dgemm in double precision (so through blasoffload when it is preloaded), the
! norms in extended precision. Matrices sit in larger arrays whose padding rows hold NaN and must still hold NaN after
! each call. Ratios are in eps (QR, least squares, inverses) or ulp = 2 eps (eigenvalues, SVD), as LAPACK's own tests.

module check2_report
  use, intrinsic :: ieee_arithmetic, only: ieee_is_finite, ieee_is_nan
  implicit none
  integer, parameter :: xp = selected_real_kind(18), dp = kind(1.0d0)
  real(xp), parameter :: thresh = 30
  integer :: passed = 0, failed = 0
  external :: dgemm
contains
  subroutine report(ok, what, resid, detail)
    logical, intent(in) :: ok
    character(*), intent(in) :: what, detail
    real(xp), intent(in) :: resid
    character(4) :: tag
    if (ok) then
      passed = passed + 1
      tag = 'PASS'
    else
      failed = failed + 1
      tag = 'FAIL'
    end if
    write (*, '(a4,1x,a,t64,"resid ",es12.3e4,1x,a)') tag, trim(what), resid, trim(detail)
    flush (6)
  end subroutine report

  ! A ratio's verdict: finite and below the threshold.
  logical function good(r)
    real(xp), intent(in) :: r
    good = ieee_is_finite(r) .and. .not. ieee_is_nan(r) .and. r < thresh
  end function good

  subroutine seed(s)
    integer, intent(in) :: s
    integer :: k, i
    integer, allocatable :: put(:)
    call random_seed(size=k)
    put = [(s * 7919 + i * 104729, i = 1, k)]
    call random_seed(put=put)
  end subroutine seed

  function itoa(i) result(s)
    integer, intent(in) :: i
    character(:), allocatable :: s
    character(16) :: buf
    write (buf, '(i0)') i
    s = trim(buf)
  end function itoa

  ! The largest column 1-norm (LAPACK's '1' norm).
  real(xp) function norm1(a)
    real(dp), intent(in) :: a(:, :)
    integer :: j
    norm1 = 0
    do j = 1, size(a, 2)
      norm1 = max(norm1, sum(abs(real(a(:, j), xp))))
    end do
  end function norm1

  ! c - op(x) y for double matrices (op: transpose x when tx = 'T'), through dgemm.
  function gemm_sub(tx, c, x, y) result(r)
    character, intent(in) :: tx
    real(dp), intent(in) :: c(:, :), x(:, :), y(:, :)
    real(dp), allocatable :: r(:, :)
    integer :: k
    r = c
    k = size(y, 1)
    if (size(r, 1) > 0 .and. size(r, 2) > 0 .and. k > 0) &
      call dgemm(tx, 'N', size(r, 1), size(r, 2), k, -1.0_dp, x, size(x, 1), y, k, 1.0_dp, r, size(r, 1))
  end function gemm_sub

  real(xp) function gemm_resid(tx, c, x, y)
    character, intent(in) :: tx
    real(dp), intent(in) :: c(:, :), x(:, :), y(:, :)
    gemm_resid = norm1(gemm_sub(tx, c, x, y))
  end function gemm_resid

  ! ||I - Q^T Q||_1 for a double matrix with orthonormal columns.
  real(xp) function orth_resid(q)
    real(dp), intent(in) :: q(:, :)
    real(dp), allocatable :: eye(:, :)
    integer :: i
    allocate (eye(size(q, 2), size(q, 2)))
    eye = 0
    do i = 1, size(q, 2)
      eye(i, i) = 1
    end do
    orth_resid = gemm_resid('T', eye, q, q)
  end function orth_resid
end module check2_report

module check2_s
#define WP_KIND kind(1.0)
#define PNAME 's'
#define XGEQRF sgeqrf
#define XORGQR sorgqr
#define XORMQR sormqr
#define XGELS sgels
#define XSYEVD ssyevd
#define XSYEV ssyev
#define XSYEVR ssyevr
#define XGESVD sgesvd
#define XGESDD sgesdd
#define XGETRF sgetrf
#define XGETRI sgetri
#define XPOTRF spotrf
#define XPOTRI spotri
#define XGELSD sgelsd
#define XGEQP3 sgeqp3
#define XGEEV sgeev
#include "lapack2_check_body.inc"
end module check2_s

module check2_d
#undef WP_KIND
#undef PNAME
#undef XGEQRF
#undef XORGQR
#undef XORMQR
#undef XGELS
#undef XSYEVD
#undef XSYEV
#undef XSYEVR
#undef XGESVD
#undef XGESDD
#undef XGETRF
#undef XGETRI
#undef XPOTRF
#undef XPOTRI
#undef XGELSD
#undef XGEQP3
#undef XGEEV
#define WP_KIND kind(1.0d0)
#define PNAME 'd'
#define XGEQRF dgeqrf
#define XORGQR dorgqr
#define XORMQR dormqr
#define XGELS dgels
#define XSYEVD dsyevd
#define XSYEV dsyev
#define XSYEVR dsyevr
#define XGESVD dgesvd
#define XGESDD dgesdd
#define XGETRF dgetrf
#define XGETRI dgetri
#define XPOTRF dpotrf
#define XPOTRI dpotri
#define XGELSD dgelsd
#define XGEQP3 dgeqp3
#define XGEEV dgeev
#include "lapack2_check_body.inc"
end module check2_d

program lapack2_check_f
  use check2_report, only: passed, failed
  use check2_s, only: run_all_s => run_all
  use check2_d, only: run_all_d => run_all
  implicit none
  integer :: i, n, nargs, stat
  character(32) :: arg
  integer, allocatable :: sizes(:)

  nargs = command_argument_count()
  if (nargs == 0) then
    sizes = [300, 1000]
  else
    allocate (sizes(nargs))
    do i = 1, nargs
      call get_command_argument(i, arg)
      read (arg, *, iostat=stat) n
      if (stat /= 0 .or. n < 16) then
        write (0, '(a)') 'lapack2_check_f: size "'//trim(arg)//'" must be an integer >= 16'
        stop 2
      end if
      sizes(i) = n
    end do
  end if
  do i = 1, size(sizes)
    call run_all_s(sizes(i))
    call run_all_d(sizes(i))
  end do
  write (*, '(i0," passed, ",i0," failed")') passed, failed
  if (failed /= 0 .or. passed == 0) stop 1
end program lapack2_check_f
