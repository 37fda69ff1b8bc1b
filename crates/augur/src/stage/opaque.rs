//! Opaque types: C types known only by name (`FILE`, a library's `struct`),
//! used through pointers and the externs that take and return them.

/// Declares a Rust type that stands for a C type known only by name, with
/// the header that declares it (none for a `struct` tag: the generated C
/// declares `struct tag;` itself). Such a type has no values in either
/// stage: use `Dyn<*mut T>` and externs; a variable or load of `T` itself
/// is an [`Error::Misuse`](crate::Error::Misuse) at its line.
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{Builder, CChar, Dyn, ExternFn};
///
///     augur::opaque_type!(
///         /// C's `FILE`.
///         pub File = "FILE" in "stdio.h"
///     );
///     const FPUTS: ExternFn<fn(*const CChar, *mut File) -> i32> =
///         ExternFn::new("fputs").header("stdio.h");
///
///     let f = Builder::new()
///         .extract("greet", |out: Dyn<*mut File>| FPUTS.call(Dyn::str("hi\n"), out))
///         .unwrap();
///     let c = f.c_code();
///     assert!(c.contains("#include <stdio.h>"), "{c}");
///     assert!(c.contains("int32_t greet(FILE *arg0)"), "{c}");
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! opaque_type {
    ($(#[$m:meta])* $vis:vis $name:ident = $c:literal $(in $h:literal)?) => {
        $(#[$m])*
        $vis enum $name {}

        impl $crate::CType for $name {
            fn ty() -> $crate::ir::Type {
                let header: ::core::option::Option<&str> = ::core::option::Option::None;
                $(let header = ::core::option::Option::Some($h);)?
                $crate::ir::Type::opaque($c, header)
            }
        }
    };
}
