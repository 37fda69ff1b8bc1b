//! Second-stage types.
//!
//! A [`Type`] is a small tree: scalars, pointers and arrays of them. It is
//! `Copy`: a pointer's or array's element type is interned (see
//! [`Type::interned`]), so the first stage builds, compares and drops the
//! types of its operations without allocating. Types still compare
//! structurally.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Mutex, OnceLock};

/// The scalar types of the second stage. Each maps to one C type.
///
/// The order is [`Scalar::ALL`]'s: the interner's tables are indexed by it.
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
    /// Every scalar, in declaration order (`ALL[s as usize] == s`).
    pub const ALL: [Scalar; 12] = [
        Scalar::Bool,
        Scalar::Char,
        Scalar::I8,
        Scalar::I16,
        Scalar::I32,
        Scalar::I64,
        Scalar::U8,
        Scalar::U16,
        Scalar::U32,
        Scalar::U64,
        Scalar::F32,
        Scalar::F64,
    ];

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
#[derive(Clone, Copy, Debug, Eq)]
pub enum Type {
    /// No value: the return type of procedures and of `void` externs.
    Void,
    /// A scalar.
    Scalar(Scalar),
    /// A raw pointer. `mutable: false` prints as `const T *`.
    Ptr {
        /// The pointee (interned: build with [`Type::ptr`] or [`Type::cptr`]).
        to: &'static Type,
        /// False for `*const`.
        mutable: bool,
    },
    /// An array of `len` elements; `None` is an array of unknown length
    /// (a variable-length local takes its length from its declaration).
    Array {
        /// The element type (interned: build with [`Type::array`]).
        of: &'static Type,
        /// The length, if fixed.
        len: Option<u64>,
    },
    /// A pointer to a function of this signature (C `R (*)(P...)`; the
    /// text form writes `fn(P...) -> R`). Build with [`Type::fn_ptr`].
    FnPtr(&'static FnSig),
    /// A type only the C side knows (`FILE`, a library's `struct`), used
    /// through pointers: it has no size, no values and no elements. Build
    /// with [`Type::opaque`].
    Opaque(&'static OpaqueType),
    /// A struct with C layout (`#[repr(C)]`): named fields in order, each
    /// at the next offset its alignment allows. Build with [`Type::structure`].
    Struct(&'static StructType),
}

/// A struct's name and fields.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructType {
    /// Its C name (the Rust type's).
    pub name: String,
    /// Its fields, in order: name and type.
    pub fields: Vec<(String, Type)>,
}

impl StructType {
    /// The byte offset of field `i` (C's layout: each field at the next
    /// multiple of its alignment).
    pub fn offset(&self, i: usize) -> u64 {
        let mut at = 0u64;
        for (k, (_, t)) in self.fields.iter().enumerate() {
            let a = t.align().unwrap_or(1);
            at = at.div_ceil(a) * a;
            if k == i {
                return at;
            }
            at += t.size().unwrap_or(0);
        }
        at
    }

    /// The index of the field called `name`.
    pub fn field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|(n, _)| n == name)
    }
}

/// A C type known by name only.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpaqueType {
    /// Its C spelling: `FILE`, `struct counter`.
    pub name: String,
    /// The header that declares it (`stdio.h`); `None` for a `struct`
    /// tag, which the C writer declares itself.
    pub header: Option<String>,
}

/// A function's parameter and return types: what a function pointer
/// points to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FnSig {
    /// Parameter types.
    pub params: Vec<Type>,
    /// Return type (`Void` for none).
    pub ret: Type,
}

impl Type {
    /// Shorthand for `Type::Scalar`.
    pub const fn scalar(s: Scalar) -> Type {
        Type::Scalar(s)
    }

    /// A mutable pointer to `to`.
    pub fn ptr(to: Type) -> Type {
        Type::Ptr {
            to: Type::interned(to),
            mutable: true,
        }
    }

    /// A `*const` pointer to `to`.
    pub fn cptr(to: Type) -> Type {
        Type::Ptr {
            to: Type::interned(to),
            mutable: false,
        }
    }

    /// An array of `len` elements of `of` (`None`: of unknown length).
    pub fn array(of: Type, len: Option<u64>) -> Type {
        Type::Array {
            of: Type::interned(of),
            len,
        }
    }

    /// A pointer to functions taking `params` and returning `ret`.
    ///
    /// ```
    /// use augur::ir::{Scalar, Type};
    /// let f = Type::fn_ptr(vec![Type::Scalar(Scalar::I64)], Type::Scalar(Scalar::I64));
    /// assert_eq!(f.to_string(), "fn(i64) -> i64");
    /// assert_eq!(f.size(), Some(8));
    /// ```
    pub fn fn_ptr(params: Vec<Type>, ret: Type) -> Type {
        Type::FnPtr(intern_sig(FnSig { params, ret }))
    }

    /// A type C knows by the name `name` (`FILE`, `struct counter`), which
    /// `header` declares (a `struct` tag needs none).
    ///
    /// ```
    /// use augur::ir::Type;
    /// let file = Type::opaque("FILE", Some("stdio.h"));
    /// assert_eq!(Type::ptr(file).to_string(), "*mut opaque(\"FILE\" in \"stdio.h\")");
    /// assert_eq!(file.size(), None);
    /// ```
    pub fn opaque(name: &str, header: Option<&str>) -> Type {
        static TABLE: Table<OpaqueType> = OnceLock::new();
        Type::Opaque(intern(
            &TABLE,
            OpaqueType {
                name: name.to_string(),
                header: header.map(str::to_string),
            },
        ))
    }

    /// The struct `name` with `fields` (name and type, in order).
    ///
    /// ```
    /// use augur::ir::{Scalar, Type};
    /// let (f32_, u8_) = (Type::Scalar(Scalar::F32), Type::Scalar(Scalar::U8));
    /// let s = Type::structure("Pixel", vec![("tag".into(), u8_), ("v".into(), f32_)]);
    /// assert_eq!((s.size(), s.align()), (Some(8), Some(4)));
    /// ```
    pub fn structure(name: &str, fields: Vec<(String, Type)>) -> Type {
        static TABLE: Table<StructType> = OnceLock::new();
        Type::Struct(intern(
            &TABLE,
            StructType {
                name: name.to_string(),
                fields,
            },
        ))
    }

    /// Alignment in bytes, as C lays it out (`None` for `Void`, opaque
    /// types and unsized arrays' elements of no alignment).
    pub fn align(&self) -> Option<u64> {
        match self {
            Type::Void | Type::Opaque(_) => None,
            Type::Scalar(s) => Some(s.size()),
            Type::Ptr { .. } | Type::FnPtr(_) => Some(8),
            Type::Array { of, .. } => of.align(),
            Type::Struct(s) => s
                .fields
                .iter()
                .map(|(_, t)| t.align())
                .try_fold(1, |m, a| Some(m.max(a?))),
        }
    }

    /// Calls `f` on this type and every type inside it (pointees, array
    /// elements, function pointers' parameters and results).
    pub fn for_each_part(&self, f: &mut impl FnMut(&Type)) {
        f(self);
        match self {
            Type::Ptr { to, .. } => to.for_each_part(f),
            Type::Array { of, .. } => of.for_each_part(f),
            Type::FnPtr(sig) => {
                for p in &sig.params {
                    p.for_each_part(f);
                }
                sig.ret.for_each_part(f);
            }
            Type::Struct(st) => st.fields.iter().for_each(|(_, t)| t.for_each_part(f)),
            Type::Void | Type::Scalar(_) | Type::Opaque(_) => {}
        }
    }

    /// The signature, if this is a function pointer.
    pub fn fn_sig(&self) -> Option<&'static FnSig> {
        match self {
            Type::FnPtr(sig) => Some(sig),
            _ => None,
        }
    }

    /// The one `'static` copy of `t`. Scalars and pointers to scalars come
    /// from fixed tables; other types are kept, once each, for the rest of
    /// the process (a program uses a handful).
    ///
    /// ```
    /// use augur::ir::{Scalar, Type};
    /// let p = Type::ptr(Type::Scalar(Scalar::F32));
    /// assert!(std::ptr::eq(Type::interned(p), Type::interned(p)));
    /// ```
    pub fn interned(t: Type) -> &'static Type {
        match t {
            Type::Void => &VOID,
            Type::Scalar(s) => &SCALARS[s as usize],
            Type::Ptr {
                to: Type::Scalar(s),
                mutable,
            } => &PTRS[usize::from(mutable)][*s as usize],
            _ => intern_slow(t),
        }
    }

    /// The scalar, if this is one.
    pub fn as_scalar(&self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    /// True for pointers to data (not function pointers).
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
            Type::Void | Type::Opaque(_) => None,
            Type::Scalar(s) => Some(s.size()),
            Type::Ptr { .. } | Type::FnPtr(_) => Some(8),
            Type::Array { of, len } => Some(of.size()? * (*len)?),
            Type::Struct(s) => {
                let last = s.fields.len().checked_sub(1);
                let end = match last {
                    Some(i) => s.offset(i) + s.fields[i].1.size()?,
                    None => 0,
                };
                let a = self.align()?;
                Some(end.div_ceil(a) * a)
            }
        }
    }
}

/// Structural, as derived, but inlined and short-cut on the interned
/// element: the first stage compares the type of every operation it replays.
impl PartialEq for Type {
    #[inline(always)]
    fn eq(&self, other: &Type) -> bool {
        let same = |a: &'static Type, b: &'static Type| std::ptr::eq(a, b) || a == b;
        match (self, other) {
            (Type::Void, Type::Void) => true,
            (Type::Scalar(a), Type::Scalar(b)) => a == b,
            (Type::Ptr { to: a, mutable: m }, Type::Ptr { to: b, mutable: n }) => {
                m == n && same(a, b)
            }
            (Type::Array { of: a, len: l }, Type::Array { of: b, len: k }) => l == k && same(a, b),
            (Type::FnPtr(a), Type::FnPtr(b)) => std::ptr::eq(*a, *b) || a == b,
            (Type::Opaque(a), Type::Opaque(b)) => std::ptr::eq(*a, *b) || a == b,
            (Type::Struct(a), Type::Struct(b)) => std::ptr::eq(*a, *b) || a == b,
            _ => false,
        }
    }
}

/// Structural, agreeing with `eq`.
impl std::hash::Hash for Type {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        std::mem::discriminant(self).hash(h);
        match self {
            Type::Void => {}
            Type::Scalar(s) => s.hash(h),
            Type::Ptr { to, mutable } => {
                to.hash(h);
                mutable.hash(h);
            }
            Type::Array { of, len } => {
                of.hash(h);
                len.hash(h);
            }
            Type::FnPtr(sig) => sig.hash(h),
            Type::Opaque(o) => o.hash(h),
            Type::Struct(st) => st.hash(h),
        }
    }
}

static VOID: Type = Type::Void;

static SCALARS: [Type; 12] = {
    let mut out = [Type::Void; 12];
    let mut i = 0;
    while i < 12 {
        out[i] = Type::Scalar(Scalar::ALL[i]);
        i += 1;
    }
    out
};

/// `*const s` and `*mut s` for every scalar `s`, by `[mutable][s]`.
static PTRS: [[Type; 12]; 2] = {
    let mut out = [[Type::Void; 12]; 2];
    let mut i = 0;
    while i < 12 {
        out[0][i] = Type::Ptr {
            to: &SCALARS[i],
            mutable: false,
        };
        out[1][i] = Type::Ptr {
            to: &SCALARS[i],
            mutable: true,
        };
        i += 1;
    }
    out
};

/// Interns a type the tables do not hold.
fn intern_slow(t: Type) -> &'static Type {
    static TABLE: Table<Type> = OnceLock::new();
    intern(&TABLE, t)
}

/// A set of values kept for the rest of the process.
type Table<T> = OnceLock<Mutex<HashSet<&'static T>>>;

/// The one `'static` copy of `t` in `table`, leaked the first time.
fn intern<T: Eq + std::hash::Hash + Send + Sync>(table: &'static Table<T>, t: T) -> &'static T {
    let table = table.get_or_init(Default::default);
    // A panic elsewhere while the lock was held cannot leave the set
    // inconsistent (insertion is its only write): keep using it.
    let mut set = table.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&known) = set.get(&t) {
        return known;
    }
    let leaked: &'static T = Box::leak(Box::new(t));
    set.insert(leaked);
    leaked
}

/// The one `'static` copy of a signature (kept for the rest of the
/// process, as [`Type::interned`] keeps types).
fn intern_sig(sig: FnSig) -> &'static FnSig {
    static TABLE: Table<FnSig> = OnceLock::new();
    intern(&TABLE, sig)
}

impl fmt::Display for FnSig {
    /// `fn(i64, *mut f32) -> i64`; `fn(i32)` when it returns nothing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("fn(")?;
        for (i, p) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{p}")?;
        }
        f.write_str(")")?;
        if self.ret != Type::Void {
            write!(f, " -> {}", self.ret)?;
        }
        Ok(())
    }
}

impl fmt::Display for Type {
    /// Rust-like text: `i32`, `*mut f32`, `[i32; 4]`, `[f32]`,
    /// `fn(i64) -> i64`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Void => f.write_str("void"),
            Type::Scalar(s) => f.write_str(s.rust_name()),
            Type::Ptr { to, mutable } => {
                write!(f, "*{} {}", if *mutable { "mut" } else { "const" }, to)
            }
            Type::Array { of, len: Some(n) } => write!(f, "[{of}; {n}]"),
            Type::Array { of, len: None } => write!(f, "[{of}]"),
            Type::FnPtr(sig) => write!(f, "{sig}"),
            Type::Struct(st) => write!(f, "struct {}", st.name),
            Type::Opaque(o) => {
                write!(f, "opaque({:?}", o.name)?;
                if let Some(h) = &o.header {
                    write!(f, " in {h:?}")?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scalar_table_follows_declaration_order() {
        for (i, s) in Scalar::ALL.into_iter().enumerate() {
            assert_eq!(s as usize, i);
            assert_eq!(SCALARS[i], Type::Scalar(s));
            assert_eq!(*PTRS[0][i].element().unwrap(), Type::Scalar(s));
            assert_eq!(PTRS[1][i], Type::ptr(Type::Scalar(s)));
        }
    }

    #[test]
    fn interning_gives_one_copy_per_type() {
        let f32 = Type::Scalar(Scalar::F32);
        let nested = Type::ptr(Type::array(Type::cptr(f32), Some(3)));
        for t in [
            Type::Void,
            f32,
            Type::cptr(f32),
            Type::array(f32, None),
            nested,
        ] {
            assert!(std::ptr::eq(Type::interned(t), Type::interned(t)), "{t}");
            assert_eq!(*Type::interned(t), t);
        }
        assert_ne!(Type::array(f32, Some(3)), Type::array(f32, Some(4)));
        assert_ne!(Type::ptr(f32), Type::cptr(f32));
        assert_eq!(nested.to_string(), "*mut [*const f32; 3]");
    }
}
