/* pdgemm beside augur-einsum's distributed product (issue: einsum over MPI).
 * Build: mpicc -O3 -march=native -o pdgemm scripts/pdgemm-bench.c -lscalapack-openmpi -lopenblas
 * Run:   OPENBLAS_NUM_THREADS=1 mpirun -n P ./pdgemm N PROW PCOL [REPS] [T|N] [M K]
 * C = A B, or with T C = A B^T (C of M x N, A of M x K, double; M = K = N unless given) with each matrix in the 2D block
 * layout augur's Layout::Block2D uses (rows in blocks of ceil(rows/PROW), columns of ceil(cols/PCOL)); prints the bytes each rank sent in the first call (MPI_Send and its kin
 * counted through PMPI; a broadcast counts (ranks - 1) copies at its root, a reduction what each
 * rank contributes) and the best time. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static long long sent_bytes;
static int tsize(MPI_Datatype t) { int s; PMPI_Type_size(t, &s); return s; }
int MPI_Send(const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m) { sent_bytes += (long long)c * tsize(t); return PMPI_Send(b, c, t, d, g, m); }
int MPI_Isend(const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Request *r) { sent_bytes += (long long)c * tsize(t); return PMPI_Isend(b, c, t, d, g, m, r); }
int MPI_Ssend(const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m) { sent_bytes += (long long)c * tsize(t); return PMPI_Ssend(b, c, t, d, g, m); }
int MPI_Rsend(const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m) { sent_bytes += (long long)c * tsize(t); return PMPI_Rsend(b, c, t, d, g, m); }
int MPI_Irsend(const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Request *r) { sent_bytes += (long long)c * tsize(t); return PMPI_Irsend(b, c, t, d, g, m, r); }
int MPI_Sendrecv(const void *sb, int sc, MPI_Datatype st, int d, int stg, void *rb, int rc, MPI_Datatype rt, int s, int rtg, MPI_Comm m, MPI_Status *x) { sent_bytes += (long long)sc * tsize(st); return PMPI_Sendrecv(sb, sc, st, d, stg, rb, rc, rt, s, rtg, m, x); }
/* Reductions count what a rank contributes: its buffer, once (a non-root rank of a reduce; every
 * rank of an all-reduce), a lower bound on what any algorithm for them sends. */
int MPI_Reduce(const void *s, void *r, int c, MPI_Datatype t, MPI_Op o, int root, MPI_Comm m) { int me; PMPI_Comm_rank(m, &me); if (me != root) sent_bytes += (long long)c * tsize(t); return PMPI_Reduce(s, r, c, t, o, root, m); }
int MPI_Allreduce(const void *s, void *r, int c, MPI_Datatype t, MPI_Op o, MPI_Comm m) { int n; PMPI_Comm_size(m, &n); if (n > 1) sent_bytes += (long long)c * tsize(t); return PMPI_Allreduce(s, r, c, t, o, m); }
int MPI_Bcast(void *b, int c, MPI_Datatype t, int root, MPI_Comm m) { int me, n; PMPI_Comm_rank(m, &me); PMPI_Comm_size(m, &n); if (me == root) sent_bytes += (long long)c * tsize(t) * (n - 1); return PMPI_Bcast(b, c, t, root, m); }
void Cblacs_pinfo(int *, int *); void Cblacs_get(int, int, int *); void Cblacs_gridinit(int *, const char *, int, int);
void Cblacs_gridinfo(int, int *, int *, int *, int *); void Cblacs_gridexit(int);
int numroc_(int *, int *, int *, int *, int *);
void descinit_(int *, int *, int *, int *, int *, int *, int *, int *, int *, int *);
void pdgemm_(char *, char *, int *, int *, int *, double *, double *, int *, int *, int *, double *, int *, int *, int *, double *, double *, int *, int *, int *);
/* A rows x cols matrix in 2D blocks on the grid (its descriptor in desc), filled with ((i * mul) % mod) - mod / 2. */
static double *matrix(int rows, int cols, int prow, int pcol, int myrow, int mycol, int ctxt, int *desc, int mul, int mod) {
  int zero = 0, info, mb = (rows + prow - 1) / prow, nb = (cols + pcol - 1) / pcol;
  int lr = numroc_(&rows, &mb, &myrow, &zero, &prow), lc = numroc_(&cols, &nb, &mycol, &zero, &pcol);
  int lld = lr > 1 ? lr : 1;
  descinit_(desc, &rows, &cols, &mb, &nb, &zero, &zero, &ctxt, &lld, &info);
  double *x = malloc(sizeof(double) * (size_t)lr * lc + 8);
  for (long i = 0; i < (long)lr * lc; i++) x[i] = (double)((i * mul) % mod - mod / 2);
  return x;
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n = atoi(argv[1]), prow = atoi(argv[2]), pcol = atoi(argv[3]), reps = argc > 4 ? atoi(argv[4]) : 3;
  char *transb = argc > 5 && argv[5][0] == 'T' ? "T" : "N";
  int m = argc > 7 ? atoi(argv[6]) : n, k = argc > 7 ? atoi(argv[7]) : n;
  int me, np, ctxt, myrow, mycol;
  Cblacs_pinfo(&me, &np); Cblacs_get(-1, 0, &ctxt); Cblacs_gridinit(&ctxt, "Row", prow, pcol);
  Cblacs_gridinfo(ctxt, &prow, &pcol, &myrow, &mycol);
  int da[9], db[9], dc[9], one = 1;
  double *a = matrix(m, k, prow, pcol, myrow, mycol, ctxt, da, 7, 17);
  double *b = transb[0] == 'T' ? matrix(n, k, prow, pcol, myrow, mycol, ctxt, db, 5, 13) : matrix(k, n, prow, pcol, myrow, mycol, ctxt, db, 5, 13);
  double *c = matrix(m, n, prow, pcol, myrow, mycol, ctxt, dc, 0, 1);
  double alpha = 1, beta = 0, best = 1e30;
  for (int r = 0; r < reps; r++) {
    long long before = sent_bytes;
    MPI_Barrier(MPI_COMM_WORLD); double t0 = MPI_Wtime();
    pdgemm_("N", transb, &m, &n, &k, &alpha, a, &one, &one, da, b, &one, &one, db, &beta, c, &one, &one, dc);
    MPI_Barrier(MPI_COMM_WORLD); double t = MPI_Wtime() - t0;
    if (t < best) best = t;
    if (r == 0) before = sent_bytes - before; 
    if (r == 0) { long long all[64]; MPI_Gather(&before, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
      if (me == 0) { printf("bytes sent per rank:"); for (int q = 0; q < np; q++) printf(" %lld", all[q]); printf("\n"); } }
  }
  if (me == 0) printf("time: %.6f s\n", best);
  Cblacs_gridexit(ctxt); MPI_Finalize(); return 0;
}
