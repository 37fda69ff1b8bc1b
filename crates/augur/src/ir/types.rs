//! Second-stage types.
//!
//! A [`Type`] is a small tree: scalars, pointers and arrays of them. Types are
//! compared structurally; there is no interning because the trees are tiny and
//! the engine copies them only when it creates a variable.

use std::fmt;

/// The scalar types of the second stage. Each maps to one C type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    /// C `bool` (`<stdbool.h>`), Rust `bool`.
    Bool,
    /// C `char`, for strings handed to C functions (`printf`).
    Char,
    /// Rust `i8`.
    I8,
    /// Rust `i16`.
    I16,
    /// Rust `i32`.
    I32,
    /// Rust `i64`.
    I64,
    /// Rust `u8`.
    U8,
    /// Rust `u16`.
    U16,
    /// Rust `u32`.
    U32,
    /// Rust `u64`.
    U64,
    /// Rust `f32`.
    F32,
    /// Rust `f64`.
    F64,
}

impl Scalar {
    /// Size in bytes.
    pub fn size(self) -> u64 {
        match self {
            Scalar::Bool | Scalar::Char | Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    }

    /// True for the integer types (not `bool`, which is its own kind).
    pub fn is_int(self) -> bool {
        !matches!(self, Scalar::Bool | Scalar::F32 | Scalar::F64)
    }

    /// True for signed integers (`Char` counts as signed, as on x86-64 and in Rust's `c_char` there).
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            Scalar::Char | Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64
        )
    }

    /// True for `f32` and `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    /// The C spelling of the type.
    pub fn c_name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Char => "char",
            Scalar::I8 => "int8_t",
            Scalar::I16 => "int16_t",
            Scalar::I32 => "int32_t",
            Scalar::I64 => "int64_t",
            Scalar::U8 => "uint8_t",
            Scalar::U16 => "uint16_t",
            Scalar::U32 => "uint32_t",
            Scalar::U64 => "uint64_t",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
        }
    }

    /// The Rust spelling, used by the IR's text form.
    pub fn rust_name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Char => "char",
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }
}

/// A second-stage type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// No value: the return type of procedures and of `void` externs.
    Void,
    /// A scalar.
    Scalar(Scalar),
    /// A raw pointer. `mutable: false` prints as `const T *`.
    Ptr {
        /// The pointee.
        to: Box<Type>,
        /// False for `*const`.
        mutable: bool,
    },
    /// An array of `len` elements; `None` is an array of unknown length
    /// (a variable-length local takes its length from its declaration).
    Array {
        /// The element type.
        of: Box<Type>,
        /// The length, if fixed.
        len: Option<u64>,
    },
}

impl Type {
    /// Shorthand for `Type::Scalar`.
    pub const fn scalar(s: Scalar) -> Type {
        Type::Scalar(s)
    }

    /// A mutable pointer to `to`.
    pub fn ptr(to: Type) -> Type {
        Type::Ptr {
            to: Box::new(to),
            mutable: true,
        }
    }

    /// The scalar, if this is one.
    pub fn as_scalar(&self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    /// True for pointers.
    pub fn is_ptr(&self) -> bool {
        matches!(self, Type::Ptr { .. })
    }

    /// The element type of a pointer or array (what indexing yields).
    pub fn element(&self) -> Option<&Type> {
        match self {
            Type::Ptr { to, .. } => Some(to),
            Type::Array { of, .. } => Some(of),
            _ => None,
        }
    }

    /// Size in bytes (`None` for `Void` and unsized arrays).
    pub fn size(&self) -> Option<u64> {
        match self {
            Type::Void => None,
            Type::Scalar(s) => Some(s.size()),
            Type::Ptr { .. } => Some(8),
            Type::Array { of, len } => Some(of.size()? * (*len)?),
        }
    }
}

impl fmt::Display for Type {
    /// Rust-like text: `i32`, `*mut f32`, `[i32; 4]`, `[f32]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Void => f.write_str("void"),
            Type::Scalar(s) => f.write_str(s.rust_name()),
            Type::Ptr { to, mutable } => {
                write!(f, "*{} {}", if *mutable { "mut" } else { "const" }, to)
            }
            Type::Array { of, len: Some(n) } => write!(f, "[{of}; {n}]"),
            Type::Array { of, len: None } => write!(f, "[{of}]"),
        }
    }
}
