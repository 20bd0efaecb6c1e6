/* A program with no BLAS at all (a shell, a tool) that merely inherits LD_PRELOAD: it must stay silent. */
int main(void) { return 0; }
