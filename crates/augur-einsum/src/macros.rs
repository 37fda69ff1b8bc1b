//! `einsum!`: statements written as in the paper.

/// An einsum statement in the paper's notation: `T[i, j]` is
/// [`T.at([i, j])`](crate::Tensor::at), and `=`, `+=`, `*=` are
/// [`set`](crate::Access::set), [`add_to`](crate::Access::add_to) and
/// [`mul_by`](crate::Access::mul_by). The right side is any term
/// expression; tensor accesses in it may sit inside parentheses.
///
/// ```
/// use augur::{Builder, Dyn};
/// use augur_einsum::{compile_cpu, einsum, Config, Einsum};
///
/// #[augur::staged]
/// fn statements() {
///     let ex = Builder::new()
///         .extract("mm", |a: Dyn<*mut i32>, b: Dyn<*mut i32>, c: Dyn<*mut i32>| {
///             let ein = Einsum::new(Config::cpu());
///             let (i, j, k) = (ein.index("i"), ein.index("j"), ein.index("k"));
///             let a = ein.tensor_on::<i32>("A", [2, 2], a);
///             let b = ein.tensor_on::<i32>("B", [2, 2], b);
///             let c = ein.tensor_on::<i32>("C", [2, 2], c);
///             einsum!(c[i, j] = a[i, k] * b[k, j]);
///             einsum!(c[i, j] += (a[i, j] + 1) * 10);
///             ein.finish();
///         })
///         .unwrap();
///     let p = compile_cpu(&ex, false).unwrap();
///     let (mut a, mut b, mut c) = ([1, 2, 3, 4], [1, 0, 0, 1], [0; 4]);
///     // SAFETY: each buffer holds 4 ints.
///     unsafe { (p.get())(a.as_mut_ptr(), b.as_mut_ptr(), c.as_mut_ptr()) };
///     assert_eq!(c, [21, 32, 43, 54]);
/// }
/// # statements();
/// ```
#[macro_export]
macro_rules! einsum {
    ($t:ident [ $($i:expr),* ] = $($rhs:tt)+) => {
        $t.at([$($i),*]).set($crate::__einsum_rhs!([] $($rhs)+))
    };
    ($t:ident [ $($i:expr),* ] += $($rhs:tt)+) => {
        $t.at([$($i),*]).add_to($crate::__einsum_rhs!([] $($rhs)+))
    };
    ($t:ident [ $($i:expr),* ] *= $($rhs:tt)+) => {
        $t.at([$($i),*]).mul_by($crate::__einsum_rhs!([] $($rhs)+))
    };
}

/// Rewrites `T[i, j]` into `T.at([i, j])` through a right-hand side.
#[doc(hidden)]
#[macro_export]
macro_rules! __einsum_rhs {
    ([$($out:tt)*]) => { $($out)* };
    ([$($out:tt)*] $t:ident [ $($i:expr),* ] $($rest:tt)*) => {
        $crate::__einsum_rhs!([$($out)* $t.at([$($i),*])] $($rest)*)
    };
    ([$($out:tt)*] ( $($inner:tt)* ) $($rest:tt)*) => {
        $crate::__einsum_rhs!([$($out)* ($crate::__einsum_rhs!([] $($inner)*))] $($rest)*)
    };
    ([$($out:tt)*] $tok:tt $($rest:tt)*) => {
        $crate::__einsum_rhs!([$($out)* $tok] $($rest)*)
    };
}
