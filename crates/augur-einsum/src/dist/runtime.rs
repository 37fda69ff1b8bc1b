//! What a distributed program calls: its rank, non-blocking point-to-point
//! messages, and counters of what it sent and received.
//!
//! Two implementations of one interface, as for the GPU runtime:
//! [`mpi_c`] calls MPI (build with `mpicc`, run with `mpirun`);
//! [`simulated_c`] runs every rank as a thread of one process, messages
//! copied through a shared mailbox, so a plan is checked with no MPI
//! installed ([`run_ranks`](super::run_ranks)).

use augur::ExternFn;

pub(crate) const RANK: ExternFn<fn() -> i32> = ExternFn::new("augur_dist_rank");
pub(crate) const CHECK_SIZE: ExternFn<fn(i32)> = ExternFn::new("augur_dist_check_size");
pub(crate) const BEGIN: ExternFn<fn()> = ExternFn::new("augur_dist_begin");
/// `(buffer, bytes, peer, tag) -> request`.
type Post = fn(*mut u8, i64, i32, i32) -> i32;

pub(crate) const ISEND: ExternFn<Post> = ExternFn::new("augur_dist_isend");
pub(crate) const IRECV: ExternFn<Post> = ExternFn::new("augur_dist_irecv");
pub(crate) const WAIT: ExternFn<fn(i32)> = ExternFn::new("augur_dist_wait");

/// Counters and the request table both runtimes share.
const COMMON: &str = r#"
static AUG_DIST_TLS int64_t augur_dist_st[4];
typedef struct { int recv; uint8_t *buf; int64_t bytes; int peer, tag; AUG_DIST_REQ req; } augur_dist_req;
static AUG_DIST_TLS augur_dist_req *augur_dist_reqs;
static AUG_DIST_TLS int augur_dist_nreq, augur_dist_cap;
void augur_dist_stats(int64_t *out) {
  for (int i = 0; i < 4; i++) out[i] = augur_dist_st[i];
}
void augur_dist_reset(void) {
  for (int i = 0; i < 4; i++) augur_dist_st[i] = 0;
}
void augur_dist_begin(void) { augur_dist_nreq = 0; }
static augur_dist_req *augur_dist_new(int32_t *id) {
  if (augur_dist_nreq == augur_dist_cap) {
    augur_dist_cap = augur_dist_cap ? 2 * augur_dist_cap : 64;
    augur_dist_reqs = (augur_dist_req *)realloc(augur_dist_reqs, sizeof(augur_dist_req) * (size_t)augur_dist_cap);
    if (!augur_dist_reqs) { fprintf(stderr, "augur-einsum: out of memory for requests\n"); abort(); }
  }
  *id = augur_dist_nreq;
  return &augur_dist_reqs[augur_dist_nreq++];
}
"#;

const MPI: &str = r#"
int32_t augur_dist_rank(void) { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
void augur_dist_check_size(int32_t p) {
  int n; MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n != p) {
    fprintf(stderr, "augur-einsum: this program was staged for %d ranks and runs on %d: "
            "run it with mpirun -n %d, or stage it for %d\n", p, n, p, n);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}
int32_t augur_dist_isend(uint8_t *b, int64_t bytes, int32_t to, int32_t tag) {
  int32_t id; augur_dist_req *r = augur_dist_new(&id);
  r->recv = 0;
  MPI_Isend(b, (int)bytes, MPI_BYTE, to, tag, MPI_COMM_WORLD, &r->req);
  augur_dist_st[0] += bytes; augur_dist_st[1] += 1;
  return id;
}
int32_t augur_dist_irecv(uint8_t *b, int64_t bytes, int32_t from, int32_t tag) {
  int32_t id; augur_dist_req *r = augur_dist_new(&id);
  r->recv = 1; r->bytes = bytes; r->peer = from; r->tag = tag;
  MPI_Irecv(b, (int)bytes, MPI_BYTE, from, tag, MPI_COMM_WORLD, &r->req);
  augur_dist_st[2] += bytes; augur_dist_st[3] += 1;
  return id;
}
void augur_dist_wait(int32_t id) {
  augur_dist_req *r = &augur_dist_reqs[id];
  MPI_Status st;
  MPI_Wait(&r->req, &st);
  if (r->recv) {
    int got; MPI_Get_count(&st, MPI_BYTE, &got);
    if ((int64_t)got != r->bytes) {
      fprintf(stderr, "augur-einsum: a message of %d bytes from rank %d (tag %d) where the plan has %lld\n",
              got, r->peer, r->tag, (long long)r->bytes);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
}
"#;

const SIMULATED: &str = r#"
typedef struct augur_dist_msg {
  int from, to, tag; int64_t bytes; uint8_t *data; struct augur_dist_msg *next;
} augur_dist_msg;
static pthread_mutex_t augur_dist_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t augur_dist_cv = PTHREAD_COND_INITIALIZER;
static augur_dist_msg *augur_dist_head;
static AUG_DIST_TLS int augur_dist_me = -1, augur_dist_size = 0;
void augur_dist_sim_enter(int32_t rank, int32_t size) {
  augur_dist_me = rank; augur_dist_size = size; augur_dist_reset(); augur_dist_nreq = 0;
}
int32_t augur_dist_rank(void) {
  if (augur_dist_me < 0) { fprintf(stderr, "augur-einsum: a simulated rank was not entered\n"); abort(); }
  return augur_dist_me;
}
void augur_dist_check_size(int32_t p) {
  if (augur_dist_size != p) {
    fprintf(stderr, "augur-einsum: this program was staged for %d ranks and runs on %d\n", p, augur_dist_size);
    abort();
  }
}
int32_t augur_dist_isend(uint8_t *b, int64_t bytes, int32_t to, int32_t tag) {
  int32_t id; augur_dist_req *r = augur_dist_new(&id);
  r->recv = 0;
  augur_dist_msg *m = (augur_dist_msg *)malloc(sizeof(augur_dist_msg));
  m->data = (uint8_t *)malloc(bytes > 0 ? (size_t)bytes : 1);
  if (!m || !m->data) { fprintf(stderr, "augur-einsum: out of memory for a message\n"); abort(); }
  memcpy(m->data, b, (size_t)bytes);
  m->from = augur_dist_me; m->to = to; m->tag = tag; m->bytes = bytes; m->next = NULL;
  pthread_mutex_lock(&augur_dist_mu);
  augur_dist_msg **p = &augur_dist_head;
  while (*p) p = &(*p)->next;
  *p = m;
  pthread_cond_broadcast(&augur_dist_cv);
  pthread_mutex_unlock(&augur_dist_mu);
  augur_dist_st[0] += bytes; augur_dist_st[1] += 1;
  return id;
}
int32_t augur_dist_irecv(uint8_t *b, int64_t bytes, int32_t from, int32_t tag) {
  int32_t id; augur_dist_req *r = augur_dist_new(&id);
  r->recv = 1; r->buf = b; r->bytes = bytes; r->peer = from; r->tag = tag;
  augur_dist_st[2] += bytes; augur_dist_st[3] += 1;
  return id;
}
void augur_dist_wait(int32_t id) {
  augur_dist_req *r = &augur_dist_reqs[id];
  if (!r->recv) return;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 60;
  pthread_mutex_lock(&augur_dist_mu);
  for (;;) {
    augur_dist_msg **p = &augur_dist_head;
    while (*p && !((*p)->from == r->peer && (*p)->to == augur_dist_me && (*p)->tag == r->tag)) p = &(*p)->next;
    if (*p) {
      augur_dist_msg *m = *p;
      *p = m->next;
      pthread_mutex_unlock(&augur_dist_mu);
      if (m->bytes != r->bytes) {
        fprintf(stderr, "augur-einsum: a message of %lld bytes from rank %d (tag %d) to rank %d where the plan has %lld\n",
                (long long)m->bytes, m->from, m->tag, m->to, (long long)r->bytes);
        abort();
      }
      memcpy(r->buf, m->data, (size_t)m->bytes);
      free(m->data); free(m);
      return;
    }
    if (pthread_cond_timedwait(&augur_dist_cv, &augur_dist_mu, &until) != 0) {
      fprintf(stderr, "augur-einsum: rank %d waited 60 s for a message from rank %d (tag %d) that was never sent\n",
              augur_dist_me, r->peer, r->tag);
      abort();
    }
  }
}
"#;

/// The runtime over MPI, for a program built with `mpicc`.
pub fn mpi_c() -> String {
    format!(
        "#include <mpi.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n\
         #define AUG_DIST_TLS\n#define AUG_DIST_REQ MPI_Request\n{COMMON}{MPI}"
    )
}

/// The runtime with every rank a thread of one process.
pub fn simulated_c() -> String {
    format!(
        "#define _POSIX_C_SOURCE 200809L\n#include <pthread.h>\n#include <stdint.h>\n\
         #include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n\
         #define AUG_DIST_TLS __thread\n#define AUG_DIST_REQ int\n{COMMON}{SIMULATED}"
    )
}
