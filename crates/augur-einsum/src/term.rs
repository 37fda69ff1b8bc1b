//! Right-hand sides: sums and products of tensor accesses, constants,
//! second-stage values and index values, built with `+`, `-`, `*`.

use crate::elem::Elem;
use crate::index::{dedup, Index};
use crate::tensor::Access;
use augur::Dyn;
use std::ops::{Add, Mul, Neg, Sub};

/// A right-hand side. Made from an [`Access`], an element constant, a
/// `Dyn<E>` value, an [`Index`] (its value), and `+`, `-`, `*`, unary `-`.
#[derive(Clone)]
pub enum Term<E: Elem> {
    /// A tensor element.
    Access(Access<E>),
    /// A constant.
    Const(E),
    /// A second-stage scalar (a function parameter, say).
    Value(Dyn<E>),
    /// The current value of an index.
    Index(Index),
    /// `a + b`.
    Sum(Box<Term<E>>, Box<Term<E>>),
    /// `a - b`.
    Diff(Box<Term<E>>, Box<Term<E>>),
    /// `a * b`.
    Product(Box<Term<E>>, Box<Term<E>>),
    /// `-a`.
    Neg(Box<Term<E>>),
}

impl<E: Elem> Term<E> {
    /// Every access in the term, left to right.
    pub(crate) fn accesses(&self) -> Vec<&Access<E>> {
        let mut out = Vec::new();
        self.walk(&mut |t| {
            if let Term::Access(a) = t {
                out.push(a)
            }
        });
        out
    }

    /// The indices the term uses (accesses and index values), first use first.
    pub(crate) fn indices(&self) -> Vec<Index> {
        let mut all = Vec::new();
        self.walk(&mut |t| match t {
            Term::Access(a) => all.extend(a.indices.iter().copied()),
            Term::Index(i) => all.push(*i),
            _ => {}
        });
        dedup(all)
    }

    /// The indices the term reads as values (`Term::Index`).
    pub(crate) fn value_indices(&self) -> Vec<Index> {
        let mut all = Vec::new();
        self.walk(&mut |t| {
            if let Term::Index(i) = t {
                all.push(*i)
            }
        });
        all
    }

    fn walk<'a>(&'a self, f: &mut impl FnMut(&'a Term<E>)) {
        f(self);
        match self {
            Term::Sum(a, b) | Term::Diff(a, b) | Term::Product(a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Term::Neg(a) => a.walk(f),
            _ => {}
        }
    }
}

impl<E: Elem> From<Access<E>> for Term<E> {
    fn from(a: Access<E>) -> Self {
        Term::Access(a)
    }
}

impl<E: Elem> From<E> for Term<E> {
    fn from(v: E) -> Self {
        Term::Const(v)
    }
}

impl<E: Elem> From<Dyn<E>> for Term<E> {
    fn from(v: Dyn<E>) -> Self {
        Term::Value(v)
    }
}

impl<E: Elem> From<Index> for Term<E> {
    fn from(i: Index) -> Self {
        Term::Index(i)
    }
}

impl<E: Elem> From<&Access<E>> for Term<E> {
    fn from(a: &Access<E>) -> Self {
        Term::Access(a.clone())
    }
}

/// A two-operand term constructor.
type MakeBin<E> = fn(Box<Term<E>>, Box<Term<E>>) -> Term<E>;

/// `Sum`, `Diff`, `Product` of two terms.
fn bin<E: Elem>(make: MakeBin<E>, a: Term<E>, b: Term<E>) -> Term<E> {
    make(Box::new(a), Box::new(b))
}

/// `+`, `-`, `*` with a term or access on the left and anything that
/// converts to a term on the right.
macro_rules! term_ops {
    ($($lhs:ident),*) => {$(
        impl<E: Elem, R: Into<Term<E>>> Add<R> for $lhs<E> {
            type Output = Term<E>;
            fn add(self, r: R) -> Term<E> { bin(Term::Sum, self.into(), r.into()) }
        }
        impl<E: Elem, R: Into<Term<E>>> Sub<R> for $lhs<E> {
            type Output = Term<E>;
            fn sub(self, r: R) -> Term<E> { bin(Term::Diff, self.into(), r.into()) }
        }
        impl<E: Elem, R: Into<Term<E>>> Mul<R> for $lhs<E> {
            type Output = Term<E>;
            fn mul(self, r: R) -> Term<E> { bin(Term::Product, self.into(), r.into()) }
        }
        impl<E: Elem> Neg for $lhs<E> {
            type Output = Term<E>;
            fn neg(self) -> Term<E> { Term::Neg(Box::new(self.into())) }
        }
    )*};
}
term_ops!(Term, Access);

/// An index on the left: `i + 1.0`, `i * A[i]`.
macro_rules! index_ops {
    ($($trait:ident $method:ident $make:ident),*) => {$(
        impl<E: Elem> $trait<Term<E>> for Index {
            type Output = Term<E>;
            fn $method(self, r: Term<E>) -> Term<E> { bin(Term::$make, self.into(), r) }
        }
        impl<E: Elem> $trait<Access<E>> for Index {
            type Output = Term<E>;
            fn $method(self, r: Access<E>) -> Term<E> { bin(Term::$make, self.into(), r.into()) }
        }
        impl<E: Elem> $trait<E> for Index {
            type Output = Term<E>;
            fn $method(self, r: E) -> Term<E> { bin(Term::$make, self.into(), r.into()) }
        }
    )*};
}
index_ops!(Add add Sum, Sub sub Diff, Mul mul Product);

/// A constant on the left: `4.0 + i`, `2.0 * A[i]`.
macro_rules! scalar_ops {
    ($($t:ty),*) => {$(
        scalar_ops!(@one $t: Add add Sum, Sub sub Diff, Mul mul Product);
    )*};
    (@one $t:ty: $($trait:ident $method:ident $make:ident),*) => {$(
        impl $trait<Term<$t>> for $t {
            type Output = Term<$t>;
            fn $method(self, r: Term<$t>) -> Term<$t> { bin(Term::$make, self.into(), r) }
        }
        impl $trait<Access<$t>> for $t {
            type Output = Term<$t>;
            fn $method(self, r: Access<$t>) -> Term<$t> { bin(Term::$make, self.into(), r.into()) }
        }
        impl $trait<Index> for $t {
            type Output = Term<$t>;
            fn $method(self, r: Index) -> Term<$t> { bin(Term::$make, self.into(), r.into()) }
        }
    )*};
}
scalar_ops!(f32, f64, i32, i64);
