//! The first-stage API: `Dyn`, `Static`, operators, externs, annotations,
//! the DSL kit, and `DynValue` (a `Dyn` whose type is first-stage data).

pub mod bytes;
pub mod ctype;
pub mod dsl;
pub mod dyn_val;
pub mod dyn_value;
pub mod extern_fn;
pub mod fn_ptr;
pub mod func;
pub mod gpu;
pub mod libc;
pub mod math;
mod opaque;
mod ops;
pub mod parallel;
pub mod resume;
pub mod signature;
pub mod static_var;

pub use ops::CBits;
#[doc(hidden)]
pub mod staged;
