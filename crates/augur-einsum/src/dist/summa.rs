//! The distributed product as a standalone MPI program
//! (`augur emit summa --target mpi`).

use super::{mpi_program, Buffer, Grid, Layout, Role};
use crate::{einsum, Config, Einsum};
use augur::{Builder, Dyn};

/// A standalone MPI program computing `C[m×n] = A[m×k] B[k×n]` in `f64`
/// on `ranks` ranks of the squarest grid, all three in `layout`, with the
/// CPU schedule of each rank [`Config::schedule`]'s default. The program
/// checks its result against a plain triple loop on rank 0 and prints
/// `check: ok`, its time and the bytes each rank sent; its header gives the
/// lines to build and run it.
///
/// ```
/// let c = augur_einsum::dist::summa(64, 64, 64, 4, augur_einsum::dist::Layout::Block2D).unwrap();
/// assert!(c.contains("mpirun -n 4") && c.contains("MPI_Isend"));
/// ```
pub fn summa(m: usize, n: usize, k: usize, ranks: usize, layout: Layout) -> augur::Result<String> {
    program(m, n, k, ranks, layout, false)
}

/// As [`summa`] for `C[m×n] = A[m×k] Bᵀ` with `B` of `n×k`
/// (`C[i][j] = A[i][l] * B[j][l]`): the contraction ScaLAPACK's `pdgemm`
/// computes with `transb = 'T'`, whose plan sends `B`'s blocks along
/// process rows of `B`'s owners rather than columns.
///
/// ```
/// let c = augur_einsum::dist::summa_transposed(64, 64, 64, 4, augur_einsum::dist::Layout::Block2D).unwrap();
/// assert!(c.contains("mpirun -n 4") && c.contains("B[j * 64 + l]"));
/// ```
pub fn summa_transposed(
    m: usize,
    n: usize,
    k: usize,
    ranks: usize,
    layout: Layout,
) -> augur::Result<String> {
    program(m, n, k, ranks, layout, true)
}

fn program(
    m: usize,
    n: usize,
    k: usize,
    ranks: usize,
    layout: Layout,
    transposed: bool,
) -> augur::Result<String> {
    let grid = Grid::for_ranks(ranks);
    let ex = stage(m, n, k, grid, layout, transposed)?;
    let buffer = |name: &str, shape: Vec<usize>, role| Buffer {
        name: name.to_string(),
        c_type: "double".to_string(),
        shape,
        layout,
        role,
    };
    let b_shape = if transposed { vec![n, k] } else { vec![k, n] };
    let buffers = [
        buffer("A", vec![m, k], Role::Input),
        buffer("B", b_shape, Role::Input),
        buffer("C", vec![m, n], Role::Output),
    ];
    // Loops in the order that reads both operands along rows, so the
    // check costs seconds, not minutes, at 4096.
    let b_at = if transposed {
        format!("B[j * {k} + l]")
    } else {
        format!("B[l * {n} + j]")
    };
    let reference = if transposed {
        format!(
            "void reference(const double *A, const double *B, double *C) {{\n\
             \x20 for (long i = 0; i < {m}; i++)\n\
             \x20   for (long j = 0; j < {n}; j++) {{\n\
             \x20     double s = 0;\n\
             \x20     for (long l = 0; l < {k}; l++) s += A[i * {k} + l] * {b_at};\n\
             \x20     C[i * {n} + j] = s;\n\
             \x20   }}\n}}\n"
        )
    } else {
        format!(
            "void reference(const double *A, const double *B, double *C) {{\n\
             \x20 for (long i = 0; i < {m}; i++) {{\n\
             \x20   for (long j = 0; j < {n}; j++) C[i * {n} + j] = 0;\n\
             \x20   for (long l = 0; l < {k}; l++)\n\
             \x20     for (long j = 0; j < {n}; j++) C[i * {n} + j] += A[i * {k} + l] * {b_at};\n\
             \x20 }}\n}}\n"
        )
    };
    let name = if transposed { "summa_t" } else { "summa" };
    mpi_program(&ex, name, grid, &buffers, &reference)
}

type Sig = unsafe extern "C" fn(*mut f64, *mut f64, *mut f64);

#[augur::staged]
fn stage(
    m: usize,
    n: usize,
    k: usize,
    grid: Grid,
    layout: Layout,
    transposed: bool,
) -> augur::Result<augur::Extracted<Sig>> {
    Builder::new().extract(
        if transposed { "summa_t" } else { "summa" },
        move |a: Dyn<*mut f64>, b: Dyn<*mut f64>, c: Dyn<*mut f64>| {
            let ein = Einsum::new(Config::cpu());
            let world = ein.distribute_on(grid);
            let (i, j, l) = (ein.index("i"), ein.index("j"), ein.index("l"));
            let a = world.tensor_with::<f64>("A", [m, k], layout, a);
            let b_shape = if transposed { [n, k] } else { [k, n] };
            let b = world.tensor_with::<f64>("B", b_shape, layout, b);
            let c = world.tensor_with::<f64>("C", [m, n], layout, c);
            if transposed {
                einsum!(c[i, j] = a[i, l] * b[j, l]);
            } else {
                einsum!(c[i, j] = a[i, l] * b[l, j]);
            }
            ein.finish();
        },
    )
}
