//! `DynPtr`: a pointer whose element type is first-stage data.

use super::{fail, wanted, DynScalar, DynValue, ScalarType, TypeError};
use crate::stage::ctype::CType;
use crate::stage::dyn_val::{Dyn, IntoIndex};

/// A `Dyn<*mut T>` whose element type `T` is first-stage data: a column
/// of a table whose schema the DSL reads, a buffer of a typed program.
/// [`load`](DynPtr::load) gives a [`DynValue`] of the element type and
/// [`store`](DynPtr::store) takes one; both are what `p.at(i)` and
/// `p.at(i).set(v)` on the typed pointer generate.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{Builder, Dyn, DynPtr, ScalarType};
///
///     // The column's type comes from a schema, at the first stage.
///     let column = ScalarType::I16;
///     let f = Builder::new().extract("bump", |raw: Dyn<*mut u8>| {
///         let p = DynPtr::from_raw(raw, column); // (int16_t *)arg0
///         let v = p.load(1);
///         p.store(0, v * 3);
///         v.set(v + 1); // a loaded value stores back to p[1]
///     })?;
///     let mut data = [0i16, 7];
///     // SAFETY: `bump` reads and writes two `int16_t`s at its argument.
///     unsafe { f.compile()?.get()(data.as_mut_ptr().cast()) };
///     assert_eq!(data, [21, 8]);
///     Ok(())
/// }
/// ```
#[derive(Clone, Copy, Debug, Hash)]
pub enum DynPtr {
    /// `*mut bool`.
    Bool(Dyn<*mut bool>),
    /// `*mut i8`.
    I8(Dyn<*mut i8>),
    /// `*mut i16`.
    I16(Dyn<*mut i16>),
    /// `*mut i32`.
    I32(Dyn<*mut i32>),
    /// `*mut i64`.
    I64(Dyn<*mut i64>),
    /// `*mut u8`.
    U8(Dyn<*mut u8>),
    /// `*mut u16`.
    U16(Dyn<*mut u16>),
    /// `*mut u32`.
    U32(Dyn<*mut u32>),
    /// `*mut u64`.
    U64(Dyn<*mut u64>),
    /// `*mut f32`.
    F32(Dyn<*mut f32>),
    /// `*mut f64`.
    F64(Dyn<*mut f64>),
}

/// The typed pointer of `p`, whose element type the caller dispatched on.
fn typed<T: DynScalar>(p: DynPtr) -> Dyn<*mut T> {
    T::unwrap_ptr(p).expect("dispatched on the pointer's own element type")
}

impl DynPtr {
    /// The element type, at the first stage.
    pub fn elem(self) -> ScalarType {
        match self {
            DynPtr::Bool(_) => ScalarType::Bool,
            DynPtr::I8(_) => ScalarType::I8,
            DynPtr::I16(_) => ScalarType::I16,
            DynPtr::I32(_) => ScalarType::I32,
            DynPtr::I64(_) => ScalarType::I64,
            DynPtr::U8(_) => ScalarType::U8,
            DynPtr::U16(_) => ScalarType::U16,
            DynPtr::U32(_) => ScalarType::U32,
            DynPtr::U64(_) => ScalarType::U64,
            DynPtr::F32(_) => ScalarType::F32,
            DynPtr::F64(_) => ScalarType::F64,
        }
    }

    /// `raw` as a pointer to `elem`: `raw.cast_ptr::<*mut T>()`, a C
    /// pointer cast. For memory handed over untyped (`uint8_t *`, a table
    /// of column pointers) whose element type the first stage knows.
    #[track_caller]
    pub fn from_raw<U: CType + ?Sized>(raw: Dyn<*mut U>, elem: ScalarType) -> DynPtr {
        any_type!(elem, T => DynPtr::from(raw.cast_ptr::<*mut T>()))
    }

    /// `p[i]`: a [`DynValue`] of the element type that
    /// [`set`](DynValue::set) stores back to `p[i]`: [`Dyn::at`]. The
    /// index is an integer (a literal, a `Dyn`, an integer `DynValue`).
    #[track_caller]
    pub fn load(self, i: impl IntoIndex) -> DynValue {
        any_type!(self.elem(), T => DynValue::from(typed::<T>(self).at(i)))
    }

    /// `p[i] = v`, `v` of the element type (or a literal it holds): what
    /// `p.at(i).set(v)` generates.
    #[track_caller]
    pub fn store(self, i: impl IntoIndex, v: impl super::DynOperand) {
        let v = v.operand();
        any_type!(self.elem(), T => {
            let v = wanted::<T>("store", v);
            typed::<T>(self).at(i).set(v)
        })
    }

    /// `p + i`, in elements: [`Dyn::offset`].
    #[track_caller]
    pub fn offset(self, i: impl IntoIndex) -> DynPtr {
        any_type!(self.elem(), T => DynPtr::from(typed::<T>(self).offset(i)))
    }

    /// The typed pointer; another element type is a [`TypeError::Expected`]
    /// at the caller's line (`Dyn::<*mut T>::try_from` gives a `Result`).
    #[track_caller]
    pub fn expect<T: DynScalar>(self) -> Dyn<*mut T> {
        match T::unwrap_ptr(self) {
            Some(p) => p,
            None => fail(TypeError::Expected {
                op: "expect",
                wanted: T::TYPE,
                found: self.elem(),
            }),
        }
    }
}
