//! Names that generated C must not use for variables.

/// C99 keywords, later keywords that compilers also reserve, and the names
/// the preamble (`<stdint.h>`, `<stdbool.h>`, `<stddef.h>`, `<math.h>`) and
/// common runtime headers (`<stdio.h>`, `<stdlib.h>`, `<string.h>`) bring in.
///
/// A variable with one of these names would either not compile or shadow a
/// macro or function the generated code uses; the naming pass renames such
/// variables. Names of the externs a function calls are not listed here: the
/// naming pass must avoid those per function.
pub const RESERVED: &[&str] = &[
    // C99 keywords.
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "_Bool",
    "_Complex",
    "_Imaginary",
    "_Pragma",
    // C11 and C23 keywords, and GNU ones that `-std=gnu99` enables.
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_Generic",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
    "alignas",
    "alignof",
    "constexpr",
    "nullptr",
    "static_assert",
    "thread_local",
    "typeof",
    "asm",
    // <stdbool.h>
    "bool",
    "true",
    "false",
    // <stddef.h>
    "NULL",
    "size_t",
    "ptrdiff_t",
    "wchar_t",
    "offsetof",
    "max_align_t",
    // <stdint.h>
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "intptr_t",
    "uintptr_t",
    "intmax_t",
    "uintmax_t",
    "INT8_MIN",
    "INT16_MIN",
    "INT32_MIN",
    "INT64_MIN",
    "INT8_MAX",
    "INT16_MAX",
    "INT32_MAX",
    "INT64_MAX",
    "UINT8_MAX",
    "UINT16_MAX",
    "UINT32_MAX",
    "UINT64_MAX",
    "SIZE_MAX",
    // <math.h>
    "INFINITY",
    "NAN",
    "HUGE_VAL",
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
    // <stdio.h>, <stdlib.h>, <string.h> and the program entry.
    "printf",
    "fprintf",
    "sprintf",
    "snprintf",
    "puts",
    "putchar",
    "stdin",
    "stdout",
    "stderr",
    "EOF",
    "FILE",
    "malloc",
    "calloc",
    "realloc",
    "free",
    "abort",
    "exit",
    "abs",
    "labs",
    "memcpy",
    "memmove",
    "memset",
    "memcmp",
    "strlen",
    "assert",
    "errno",
    "main",
];

/// The helpers the C and CUDA writers define for the IR's intrinsics
/// ([`Intrinsic::c_name`](crate::ir::Intrinsic::c_name)), and the CUDA
/// unit's shared-memory array: no variable, function or extern may take
/// these names.
pub const HELPERS: &[&str] = &[
    "augur_grid_sync",
    "augur_sync_threads",
    "augur_shared",
    "augur_smem",
    "augur_checked",
    "augur_find_pair",
    "augur_atomic_add_i32",
    "augur_atomic_add_u32",
    "augur_atomic_add_i64",
    "augur_atomic_add_u64",
    "augur_atomic_add_f32",
    "augur_atomic_add_f64",
];

/// True if `name` is one the generated C cannot give a variable or a
/// function: a [`RESERVED`] name, a [`HELPERS`] name or a `<math.h>`
/// function ([`crate::math`]'s table).
pub fn is_reserved(name: &str) -> bool {
    RESERVED.contains(&name) || HELPERS.contains(&name) || crate::libm::NAMES.contains(&name)
}

/// Names variables must also avoid because CUDA units are C++: C++
/// keywords, CUDA built-ins, and the locals of the CUDA backend's
/// launchers. (Function names need only be valid C: a function named like
/// a C++ keyword is an error of the CUDA writer alone.)
pub const RESERVED_CUDA: &[&str] = &[
    "and",
    "and_eq",
    "bitand",
    "bitor",
    "catch",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "concept",
    "consteval",
    "constinit",
    "const_cast",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "delete",
    "dynamic_cast",
    "explicit",
    "export",
    "friend",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "reinterpret_cast",
    "requires",
    "static_cast",
    "template",
    "this",
    "throw",
    "try",
    "typeid",
    "typename",
    "using",
    "virtual",
    "xor",
    "xor_eq",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "dim3",
    "cudaError_t",
    "cudaSuccess",
    "cooperative_groups",
    "__syncthreads",
    "augur_status",
    "augur_args",
];

#[cfg(test)]
mod tests {
    use super::{HELPERS, RESERVED};
    use crate::ir::{Intrinsic, Type, ATOMIC_SCALARS};
    use std::collections::HashSet;

    /// Every helper a writer prints for an intrinsic is reserved.
    #[test]
    fn helpers_cover_every_intrinsic() {
        for i in Intrinsic::ALL {
            let types: Vec<Type> = match i {
                Intrinsic::AtomicAdd => ATOMIC_SCALARS.iter().map(|&s| Type::Scalar(s)).collect(),
                _ => vec![Type::Void],
            };
            for ty in types {
                let name = i.c_name(&ty);
                assert!(HELPERS.contains(&name.as_str()), "{name}");
            }
        }
    }

    #[test]
    fn reserved_has_no_duplicates_and_covers_the_preamble() {
        let set: HashSet<&str> = RESERVED.iter().copied().collect();
        assert_eq!(set.len(), RESERVED.len());
        for name in [
            "int", "bool", "true", "NULL", "int32_t", "printf", "main", "NAN",
        ] {
            assert!(set.contains(name), "{name}");
        }
    }
}
