//! augur-einsum's integration tests, in one test binary: each module was a test
//! binary of its own (a test keeps its name under `<module>::`).

mod common;

mod cuda_compile;
mod distributed;
mod distributed_mpi;
mod errors;
mod gpu_products;
mod gpu_rows;
mod kernels_and_host_code;
mod layouts;
mod loops_inside_kernels;
mod misuse_errors;
mod ops;
mod resident;
mod review_gpu_build;
mod schedules;
mod shapes_and_element_types;
