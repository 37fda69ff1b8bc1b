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
    let grid = Grid::for_ranks(ranks);
    let ex = stage(m, n, k, grid, layout)?;
    let buffer = |name: &str, shape: Vec<usize>, role| Buffer {
        name: name.to_string(),
        c_type: "double".to_string(),
        shape,
        layout,
        role,
    };
    let buffers = [
        buffer("A", vec![m, k], Role::Input),
        buffer("B", vec![k, n], Role::Input),
        buffer("C", vec![m, n], Role::Output),
    ];
    let reference = format!(
        "void reference(const double *A, const double *B, double *C) {{\n\
         \x20 for (long i = 0; i < {m}; i++)\n\
         \x20   for (long j = 0; j < {n}; j++) {{\n\
         \x20     double s = 0;\n\
         \x20     for (long l = 0; l < {k}; l++) s += A[i * {k} + l] * B[l * {n} + j];\n\
         \x20     C[i * {n} + j] = s;\n\
         \x20   }}\n}}\n"
    );
    mpi_program(&ex, "summa", grid, &buffers, &reference)
}

type Sig = unsafe extern "C" fn(*mut f64, *mut f64, *mut f64);

#[augur::staged]
fn stage(
    m: usize,
    n: usize,
    k: usize,
    grid: Grid,
    layout: Layout,
) -> augur::Result<augur::Extracted<Sig>> {
    Builder::new().extract(
        "summa",
        move |a: Dyn<*mut f64>, b: Dyn<*mut f64>, c: Dyn<*mut f64>| {
            let ein = Einsum::new(Config::cpu());
            let world = ein.distribute_on(grid);
            let (i, j, l) = (ein.index("i"), ein.index("j"), ein.index("l"));
            let a = world.tensor_with::<f64>("A", [m, k], layout, a);
            let b = world.tensor_with::<f64>("B", [k, n], layout, b);
            let c = world.tensor_with::<f64>("C", [m, n], layout, c);
            einsum!(c[i, j] = a[i, l] * b[l, j]);
            ein.finish();
        },
    )
}
