! A Fortran user program calling every intercepted LAPACK routine, ?getrf ?getrs ?gesv ?potrf ?potrs ?posv ?trtrs in s
! and d, checked against LAPACK's residual bounds; one line per check, exit status 1 on any failure.
! Usage: lapack_check [N ...] (default 300 2000).
!
! Checks use no BLAS or LAPACK: residuals and factor reconstructions are computed here in extended precision
! (real kind 10). Matrices sit in larger arrays (lda > n, ldb > n) whose padding, and every part LAPACK does not
! reference (the other triangle, the diagonal with diag = 'U'), holds NaN: a routine that reads it poisons its result;
! padding rows must still be NaN afterwards.

module check_report
  use, intrinsic :: ieee_arithmetic, only: ieee_is_finite
  implicit none
  integer, parameter :: xp = selected_real_kind(18)
  real(xp), parameter :: thresh = 30
  ! Factor reconstructions above this many operations (m n min(m,n)) check a sample of columns; every factor is
  ! also checked whole by the solve that uses it.
  real(xp), parameter :: full_reconstruction_ops = 1100.0_xp**3
  integer, parameter :: sampled_columns = 96
  integer :: passed = 0, failed = 0
contains
  subroutine report(ok, what, resid, detail)
    logical, intent(in) :: ok
    character(*), intent(in) :: what, detail
    real(xp), intent(in) :: resid  ! < 0: no residual (an INFO check)
    character(4) :: tag
    if (ok) then
      passed = passed + 1
      tag = 'PASS'
    else
      failed = failed + 1
      tag = 'FAIL'
    end if
    if (resid >= 0 .or. .not. ieee_is_finite(resid)) then
      write (*, '(a4,1x,a,t52,"resid ",es12.3e4,1x,a)') tag, trim(what), resid, trim(detail)
    else
      write (*, '(a4,1x,a,t52,a)') tag, trim(what), trim(detail)
    end if
    flush (6)
  end subroutine report

  ! The columns a reconstruction checks: all, or the first, the last and sampled_columns - 2 random ones.
  subroutine pick_columns(m, n, cols, ncols)
    integer, intent(in) :: m, n
    integer, allocatable, intent(out) :: cols(:)
    integer, intent(out) :: ncols
    integer :: c
    real :: r
    if (real(m, xp) * n * min(m, n) <= full_reconstruction_ops .or. n <= sampled_columns) then
      ncols = n
      cols = [(c, c = 1, n)]
    else
      ncols = sampled_columns
      allocate (cols(ncols))
      cols(1) = 1
      cols(2) = n
      do c = 3, ncols
        call random_number(r)
        cols(c) = min(n, 1 + int(r * n))
      end do
    end if
  end subroutine pick_columns

  subroutine seed(s)
    integer, intent(in) :: s
    integer :: k, i
    integer, allocatable :: put(:)
    call random_seed(size=k)
    put = [(s * 7919 + i * 104729, i = 1, k)]
    call random_seed(put=put)
  end subroutine seed
end module check_report

module check_s
#define WP_KIND kind(1.0)
#define PNAME 's'
#define XGETRF sgetrf
#define XGETRS sgetrs
#define XGESV sgesv
#define XPOTRF spotrf
#define XPOTRS spotrs
#define XPOSV sposv
#define XTRTRS strtrs
#include "lapack_check_body.inc"
end module check_s

module check_d
#undef WP_KIND
#undef PNAME
#undef XGETRF
#undef XGETRS
#undef XGESV
#undef XPOTRF
#undef XPOTRS
#undef XPOSV
#undef XTRTRS
#define WP_KIND kind(1.0d0)
#define PNAME 'd'
#define XGETRF dgetrf
#define XGETRS dgetrs
#define XGESV dgesv
#define XPOTRF dpotrf
#define XPOTRS dpotrs
#define XPOSV dposv
#define XTRTRS dtrtrs
#include "lapack_check_body.inc"
end module check_d

program lapack_check
  use check_report, only: passed, failed
  use check_s, only: run_all_s => run_all
  use check_d, only: run_all_d => run_all
  implicit none
  integer :: i, n, nargs, stat
  character(32) :: arg
  integer, allocatable :: sizes(:)

  nargs = command_argument_count()
  if (nargs == 0) then
    sizes = [300, 2000]
  else
    allocate (sizes(nargs))
    do i = 1, nargs
      call get_command_argument(i, arg)
      read (arg, *, iostat=stat) n
      if (stat /= 0 .or. n < 8) then
        write (0, '(a)') 'lapack_check: size "'//trim(arg)//'" must be an integer >= 8'
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
end program lapack_check
