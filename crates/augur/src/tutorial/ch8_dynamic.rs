//! # 8. Values whose type is first-stage data
//!
//! A `Dyn<T>` has its type when Rust compiles the DSL. Many DSLs learn
//! their types later, from their input: a query compiler reads a schema
//! (this table's `quantity` is an `int32_t`, that one's a `double`), a
//! compiler for a small typed language reads its declarations. Those
//! types are first-stage data, like the sizes of chapter 3, and the
//! generated code should be as specific as if each had been written by
//! hand.
//!
//! [`DynValue`](crate::DynValue) is that value: one of the typed
//! `Dyn<bool>`, `Dyn<i8>` ... `Dyn<f64>`, tagged with its
//! [`ScalarType`](crate::ScalarType). Its operators look at the types
//! while the first stage runs and then do what the typed operator does,
//! so the generated C is exactly typed code's: the dispatch costs nothing
//! in the second stage. [`DynPtr`](crate::DynPtr) is the same for memory:
//! a pointer whose element type is data.
//!
//! # A value of a type chosen at the first stage
//!
//! [`DynValue::new_var`](crate::DynValue::new_var) declares a variable of
//! a `ScalarType`; `DynValue::from` wraps a typed `Dyn`, and
//! [`expect`](crate::DynValue::expect) (or `try_into`) gives the typed one
//! back. The same staged function, extracted for two types, gives two C
//! functions:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, DynValue, ScalarType};
//!
//!     /// `x * x + 1` in the type `ty`, from an `f64` argument.
//!     #[augur::staged]
//!     fn poly(x: Dyn<f64>, ty: ScalarType) -> Dyn<f64> {
//!         let x = DynValue::from(x).cast(ty);
//!         let y = DynValue::named("y", ty, x * x + 1); // `1` takes `ty`
//!         y.cast(ScalarType::F64).expect::<f64>()
//!     }
//!
//!     let as_int = Builder::new().extract("poly_i32", |x: Dyn<f64>| poly(x, ScalarType::I32))?;
//!     let as_float = Builder::new().extract("poly_f32", |x: Dyn<f64>| poly(x, ScalarType::F32))?;
//!     assert!(as_int.c_code().contains("int32_t y ="), "{}", as_int.c_code());
//!     assert!(as_float.c_code().contains("float y ="), "{}", as_float.c_code());
//!     assert_eq!(as_int.interpret(&[2.5.into()])?, 5.0.into()); // 2 * 2 + 1
//!     assert_eq!(as_float.interpret(&[2.5.into()])?, 7.25.into());
//!     Ok(())
//! }
//! ```
//!
//! # Type rules
//!
//! The rules are Rust's, checked at the first stage (the whole list is in
//! [`DynValue`'s documentation](crate::DynValue#type-rules)):
//!
//! * both operands of an operator or comparison have one type: an `i32`
//!   plus an `f64` is an error, not a conversion. Convert explicitly with
//!   [`cast`](crate::DynValue::cast);
//! * each operator takes the types Rust gives it: `%` integers, `& | ^ !`
//!   integers and `bool`, unary `-` signed integers and floats;
//! * a Rust literal takes the other operand's type when that type holds
//!   it exactly, as an unsuffixed literal does in Rust code: `x * 2` is
//!   `x * 2.0` on a `double`, `n + 200` fits a `u8`, `n + 300` does not;
//! * comparisons (`eq ne lt le gt ge`) give a `bool` value, which
//!   [`is_true`](crate::DynValue::is_true) branches on.
//!
//! A language that promotes as C does (an `int` plus a `double` is a
//! `double`) says so where it combines two values:
//! [`DynValue::promote`](crate::DynValue::promote) converts both to the
//! type of C's usual arithmetic conversions.
//!
//! # Errors at the user's line
//!
//! A type error ends the extraction: `extract` returns
//! [`Error::Dsl`](crate::Error::Dsl) at the line of the operation, and
//! its [`dsl_error`](crate::Error::dsl_error) is a
//! [`TypeError`](crate::TypeError) naming the operation and the types, as
//! data a DSL can turn into its own message:
//!
//! ```
//! #[augur::staged]
//! fn main() {
//!     use augur::{Builder, Dyn, DynValue, ScalarType, TypeError};
//!     let err = Builder::new()
//!         .extract("bad", |qty: Dyn<i32>, price: Dyn<f64>| {
//!             let total = DynValue::from(qty) * DynValue::from(price); // i32 * f64
//!             total.expect::<f64>()
//!         })
//!         .unwrap_err();
//!     assert_eq!(
//!         err.dsl_error::<TypeError>(),
//!         Some(&TypeError::Mismatch { op: "*", left: ScalarType::I32, right: ScalarType::F64 })
//!     );
//!     let line = line!() - 8; // the line of the `*`
//!     assert!(err.to_string().contains(&format!("{}:{line}:", file!())), "{err}");
//! }
//! ```
//!
//! A DSL that wants to check first reads the types:
//! [`ty`](crate::DynValue::ty), and `ScalarType`'s `is_int`, `is_float`,
//! `is_signed`. Code that differs by type matches on the variant and works
//! on the typed `Dyn`, here a square root that only floats have:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, DynValue, ScalarType};
//!
//!     /// `sqrt(x)`: the C function of the float type, integers through `double`.
//!     #[augur::staged]
//!     fn sqrt(x: DynValue) -> DynValue {
//!         match x {
//!             DynValue::F32(f) => DynValue::from(f.sqrt()),
//!             DynValue::F64(f) => DynValue::from(f.sqrt()),
//!             other => sqrt(other.cast(ScalarType::F64)),
//!         }
//!     }
//!
//!     let f = Builder::new().extract("root", |x: Dyn<f32>, n: Dyn<u32>| {
//!         (sqrt(x.into()).cast(ScalarType::F64) + sqrt(n.into())).expect::<f64>()
//!     })?;
//!     assert!(f.c_code().contains("sqrtf(arg0)"), "{}", f.c_code());
//!     assert_eq!(f.interpret(&[4.0f32.into(), 9u32.into()])?, 5.0.into());
//!     Ok(())
//! }
//! ```
//!
//! # Memory whose element type is data
//!
//! A query compiler gets its table as columns: memory whose element type
//! the schema says. [`DynPtr::from_raw`](crate::DynPtr::from_raw) makes
//! one from an untyped pointer and a `ScalarType`;
//! [`load`](crate::DynPtr::load) gives a `DynValue` of the column's type
//! (which [`set`](crate::DynValue::set) stores back), and
//! [`store`](crate::DynPtr::store) takes one. Here is TPC-H's query 6
//! (`sum(price * discount)` over the rows with a small quantity and a
//! discount in a range) over a table whose three columns come as a table
//! of pointers, compiled for two schemas. The quantity is an `int32_t` in
//! one and a `double` in the other, the literal `24` takes either type,
//! and each schema gets its own code:
//!
//! ```
//! #[augur::staged]
//! fn main() -> augur::Result<()> {
//!     use augur::{Builder, Dyn, DynPtr, DynValue, ScalarType};
//!     use ScalarType::*;
//!
//!     /// The revenue of query 6 over `cols`, whose types are `schema`'s
//!     /// (quantity, price, discount).
//!     #[augur::staged]
//!     fn q6(schema: &[ScalarType; 3], cols: Dyn<*mut *mut u8>, n: Dyn<i64>) -> Dyn<f64> {
//!         let col = |k: usize| DynPtr::from_raw(cols.at(k), schema[k]);
//!         let (qty, price, disc) = (col(0), col(1), col(2));
//!         let revenue = DynValue::named("revenue", F64, 0);
//!         let i = Dyn::named("i", 0i64);
//!         while i.lt(n).is_true() {
//!             let d = disc.load(i).cast(F64);
//!             let keep = qty.load(i).lt(24) & d.ge(0.05) & d.le(0.07);
//!             if keep.is_true() {
//!                 revenue.set(revenue + price.load(i).cast(F64) * d);
//!             }
//!             i.set(i + 1);
//!         }
//!         revenue.expect::<f64>()
//!     }
//!
//!     let ints = [I32, F64, F32];
//!     let floats = [F64, F64, F64];
//!     let by_int = Builder::new().extract("q6", |c: Dyn<*mut *mut u8>, n: Dyn<i64>| q6(&ints, c, n))?;
//!     let by_float = Builder::new().extract("q6", |c: Dyn<*mut *mut u8>, n: Dyn<i64>| q6(&floats, c, n))?;
//!     assert!(by_int.c_code().contains("(int32_t *)"), "{}", by_int.c_code());
//!     assert!(by_int.c_code().contains("< 24"), "{}", by_int.c_code());
//!     assert!(by_float.c_code().contains("< 24.0"), "{}", by_float.c_code());
//!
//!     // Three rows, the first schema's types.
//!     let mut qty = [10i32, 30, 5];
//!     let mut price = [100.0f64, 200.0, 300.0];
//!     let mut disc = [0.06f32, 0.06, 0.5];
//!     let mut cols = [qty.as_mut_ptr().cast::<u8>(), price.as_mut_ptr().cast(), disc.as_mut_ptr().cast()];
//!     let f = by_int.compile()?;
//!     // SAFETY: three columns of three rows, of the types `ints` says.
//!     let revenue = unsafe { f.get()(cols.as_mut_ptr(), 3) };
//!     assert_eq!(revenue, 100.0 * (0.06f32 as f64)); // only the first row is kept
//!     Ok(())
//! }
//! ```
//!
//! `cols.at(k)` is the `k`-th column pointer, a `Dyn<*mut u8>`, and
//! `from_raw` casts it to the column's type: `(int32_t *)cols[0]`. A
//! `DynValue`, like a `Dyn`, is `Copy`, and under `#[augur::staged]` a
//! local one puts its type in the program point: two paths on which a
//! value has different types get different code, as they must.
//!
//! # The code is typed code's
//!
//! The dispatch happens while the first stage runs: each operation
//! becomes the typed operation of its types, and nothing of `DynValue`
//! reaches the C. The query above, written by hand over `Dyn<i32>`,
//! `Dyn<f64>` and `Dyn<f32>` columns, gives the same C byte for byte (the
//! test suite checks this, for the query of its own and for every
//! operator on every type).
//!
//! # Rules of thumb
//!
//! * Keep the values' types where the DSL keeps its types: the schema,
//!   the declarations. `DynValue` carries them with the value; `ty()`
//!   reads them.
//! * Convert where the language converts: a `cast` where the user wrote
//!   one, [`promote`](crate::DynValue::promote) where the language
//!   promotes. Nothing converts silently.
//! * Report the DSL's own errors before augur's: check `ty()` where the
//!   user's program is typed (the DSL can name the query's column), and
//!   let a `TypeError` catch what slips through.
//! * Put `#[augur::staged]` on the functions that walk the DSL's program
//!   (the schema, an expression tree), as in every chapter: their loops
//!   and `match`es are first-stage decisions.
//!
//! The complete program is `crates/augur/examples/tutorial_8_dynamic.rs`:
//! a filter and a sum over a table whose schema is a first-stage
//! `Vec<ScalarType>`, an expression language with C's promotions, the
//! generated C of each schema, and the results checked against plain
//! Rust on compiled code and in the interpreter.
