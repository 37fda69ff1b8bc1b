//! Runtime values of the interpreter, and the [`Pod`] and [`Elem`] traits
//! for host data.

use super::Memory;
use crate::ir::{Scalar, Type};
use crate::stage::ctype::CChar;
use crate::{Error, Result};
use std::fmt;

/// A second-stage value: one variant per scalar type, plus pointers.
///
/// `==` compares floats numerically (`NaN != NaN`, `0.0 == -0.0`) and values
/// of different variants as unequal; use [`Value::same_bits`] to compare
/// floats bit for bit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// No value (the result of a `void` function).
    Void,
    /// C `bool`.
    Bool(bool),
    /// C `char` (signed, as on x86-64).
    Char(i8),
    /// `int8_t`.
    I8(i8),
    /// `int16_t`.
    I16(i16),
    /// `int32_t`.
    I32(i32),
    /// `int64_t`.
    I64(i64),
    /// `uint8_t`.
    U8(u8),
    /// `uint16_t`.
    U16(u16),
    /// `uint32_t`.
    U32(u32),
    /// `uint64_t`.
    U64(u64),
    /// `float`.
    F32(f32),
    /// `double`.
    F64(f64),
    /// A pointer in the interpreter's [`Memory`](super::Memory) encoding:
    /// `((allocation id + 1) << 32) | offset`, null is 0.
    Ptr(u64),
}

impl Value {
    /// The value's type. A pointer does not know what it points to and
    /// reports `*mut void`.
    pub fn ty(&self) -> Type {
        match self.scalar() {
            Some(s) => Type::Scalar(s),
            None if matches!(self, Value::Ptr(_)) => Type::ptr(Type::Void),
            None => Type::Void,
        }
    }

    /// The scalar type, `None` for `Void` and pointers.
    pub fn scalar(&self) -> Option<Scalar> {
        Some(match self {
            Value::Void | Value::Ptr(_) => return None,
            Value::Bool(_) => Scalar::Bool,
            Value::Char(_) => Scalar::Char,
            Value::I8(_) => Scalar::I8,
            Value::I16(_) => Scalar::I16,
            Value::I32(_) => Scalar::I32,
            Value::I64(_) => Scalar::I64,
            Value::U8(_) => Scalar::U8,
            Value::U16(_) => Scalar::U16,
            Value::U32(_) => Scalar::U32,
            Value::U64(_) => Scalar::U64,
            Value::F32(_) => Scalar::F32,
            Value::F64(_) => Scalar::F64,
        })
    }

    /// True when the values are equal bit for bit (floats by their bits,
    /// so `NaN` equals the same `NaN` and `0.0` differs from `-0.0`).
    pub fn same_bits(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::F32(a), Value::F32(b)) => a.to_bits() == b.to_bits(),
            (Value::F64(a), Value::F64(b)) => a.to_bits() == b.to_bits(),
            _ => self == other,
        }
    }

    /// An integer, `char` or `bool` value sign- or zero-extended (per its
    /// type) to 64 bits; a `u64` keeps its bits. `None` for other variants.
    pub fn as_i64(&self) -> Option<i64> {
        Some(match *self {
            Value::Bool(v) => v as i64,
            Value::Char(v) | Value::I8(v) => v as i64,
            Value::I16(v) => v as i64,
            Value::I32(v) => v as i64,
            Value::I64(v) => v,
            Value::U8(v) => v as i64,
            Value::U16(v) => v as i64,
            Value::U32(v) => v as i64,
            Value::U64(v) => v as i64,
            _ => return None,
        })
    }

    /// The bits of [`as_i64`](Value::as_i64) as `u64` (a negative value
    /// gives its two's complement). `None` for non-integers.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_i64().map(|v| v as u64)
    }

    /// A `f64` or `f32` (widened) value; `None` for other variants.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F64(v) => Some(v),
            Value::F32(v) => Some(v as f64),
            _ => None,
        }
    }

    /// A `f32` value; `None` for other variants.
    pub fn as_f32(&self) -> Option<f32> {
        match *self {
            Value::F32(v) => Some(v),
            _ => None,
        }
    }

    /// A `bool` value; `None` for other variants.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(v) => Some(v),
            _ => None,
        }
    }

    /// The encoded address of a pointer; `None` for other variants.
    pub fn as_ptr(&self) -> Option<u64> {
        match *self {
            Value::Ptr(v) => Some(v),
            _ => None,
        }
    }

    /// True for every integer variant, `Char` included (not `Bool`).
    pub fn is_int(&self) -> bool {
        self.scalar().is_some_and(Scalar::is_int)
    }

    /// The integer `bits` (two's complement, only the low bits of the type's
    /// width are used) as a value of the integer, `char` or `bool` type `s`.
    pub fn int_of(s: Scalar, bits: i64) -> Option<Value> {
        Some(match s {
            Scalar::Bool => Value::Bool(bits != 0),
            Scalar::Char => Value::Char(bits as i8),
            Scalar::I8 => Value::I8(bits as i8),
            Scalar::I16 => Value::I16(bits as i16),
            Scalar::I32 => Value::I32(bits as i32),
            Scalar::I64 => Value::I64(bits),
            Scalar::U8 => Value::U8(bits as u8),
            Scalar::U16 => Value::U16(bits as u16),
            Scalar::U32 => Value::U32(bits as u32),
            Scalar::U64 => Value::U64(bits as u64),
            Scalar::F32 | Scalar::F64 => return None,
        })
    }

    /// True when the value can be held by a variable or memory cell of type
    /// `ty`: the same scalar, or a pointer for a pointer or array parameter.
    pub fn fits(&self, ty: &Type) -> bool {
        match (self, ty) {
            (Value::Void, Type::Void) => true,
            (
                Value::Ptr(_),
                Type::Ptr { .. } | Type::Array { .. } | Type::FnPtr(_) | Type::Struct(_),
            ) => true,
            (v, Type::Scalar(s)) => v.scalar() == Some(*s),
            _ => false,
        }
    }

    /// The value of type `s` whose little-endian bytes are `b` (exactly
    /// `s.size()` of them). `None` for a `bool` byte other than 0 or 1.
    pub(crate) fn decode(s: Scalar, b: &[u8]) -> Option<Value> {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        let bits = u64::from_le_bytes(w);
        Some(match s {
            Scalar::Bool if bits > 1 => return None,
            Scalar::F32 => Value::F32(f32::from_bits(bits as u32)),
            Scalar::F64 => Value::F64(f64::from_bits(bits)),
            _ => Value::int_of(s, bits as i64)?,
        })
    }

    /// Little-endian bytes and their count; pointers take 8 bytes.
    pub(crate) fn encode(&self) -> ([u8; 8], usize) {
        let (bits, n) = match *self {
            Value::Void => (0, 0),
            Value::F32(v) => (v.to_bits() as u64, 4),
            Value::F64(v) => (v.to_bits(), 8),
            Value::Ptr(p) => (p, 8),
            v => {
                let s = v.scalar().expect("an integer or bool");
                (v.as_u64().expect("an integer"), s.size() as usize)
            }
        };
        (bits.to_le_bytes(), n)
    }
}

impl fmt::Display for Value {
    /// `void`, `true`, `-3`, `1.5`, or `0x<hex>` for a pointer.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Void => f.write_str("void"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::F32(v) => write!(f, "{v:?}"),
            Value::F64(v) => write!(f, "{v:?}"),
            Value::Ptr(0) => f.write_str("NULL"),
            Value::Ptr(p) => write!(f, "{p:#x}"),
            Value::U64(v) => write!(f, "{v}"),
            v => write!(f, "{}", v.as_i64().expect("an integer")),
        }
    }
}

/// Plain host data that converts to and from [`Value`]: the numbers and
/// `bool`. Used by [`Memory::alloc_slice`](super::Memory::alloc_slice) and
/// friends to move arrays between Rust and the interpreter's memory.
pub trait Pod: Copy + 'static {
    /// The second-stage type of `Self`.
    const SCALAR: Scalar;
    /// `self` as a value.
    fn into_value(self) -> Value;
    /// The host value of `v`, `None` if `v` has another type.
    fn from_value(v: Value) -> Option<Self>;
}

macro_rules! pod {
    ($($t:ty => $variant:ident, $s:ident);* $(;)?) => {$(
        impl Pod for $t {
            const SCALAR: Scalar = Scalar::$s;
            fn into_value(self) -> Value {
                Value::$variant(self)
            }
            fn from_value(v: Value) -> Option<Self> {
                match v {
                    Value::$variant(x) => Some(x),
                    _ => None,
                }
            }
        }
        impl From<$t> for Value {
            fn from(v: $t) -> Value {
                Value::$variant(v)
            }
        }
    )*};
}

pod! {
    bool => Bool, Bool;
    i16 => I16, I16;
    i32 => I32, I32;
    i64 => I64, I64;
    u8 => U8, U8;
    u16 => U16, U16;
    u32 => U32, U32;
    u64 => U64, U64;
    f32 => F32, F32;
    f64 => F64, F64;
}

/// `i8` reads both `int8_t` and `char` memory (they have the same bytes).
impl Pod for i8 {
    const SCALAR: Scalar = Scalar::I8;
    fn into_value(self) -> Value {
        Value::I8(self)
    }
    fn from_value(v: Value) -> Option<Self> {
        match v {
            Value::I8(x) | Value::Char(x) => Some(x),
            _ => None,
        }
    }
}

impl From<i8> for Value {
    fn from(v: i8) -> Value {
        Value::I8(v)
    }
}

/// Host data that the interpreter's [`Memory`] holds as C lays it out:
/// what [`Memory::alloc_slice`], [`read_slice`](Memory::read_slice) and
/// [`write_slice`](Memory::write_slice) move. Implemented for
///
/// * the numbers and `bool` (every [`Pod`]) and [`CChar`];
/// * pointers: [`Value`] (a [`Value::Ptr`]; another value is an error), so
///   an array of pointers is `alloc_slice(&[p, q])`, and raw pointers
///   `*mut T`, `*const T`, whose bits are the memory's encoding of a
///   pointer ([`Value::as_ptr`]), never a host address: a struct field
///   that points into the interpreter's memory;
/// * arrays `[T; N]` of them;
/// * structs with `#[derive(augur::Staged)]` (the derive implements it
///   field by field; padding is left uninitialised, as in C).
///
/// ```
/// use augur::exec::{Interpreter, Value};
/// #[derive(augur::Staged, Clone, Copy, Debug, PartialEq)]
/// #[repr(C)]
/// struct Item {
///     key: i32,
///     weight: f64,
/// }
/// let mut it = Interpreter::new();
/// let m = it.memory_mut();
/// let items = m.alloc_slice(&[Item { key: 1, weight: 0.5 }, Item { key: 2, weight: 1.5 }]);
/// assert_eq!(m.allocation_size(items), Some(32));
/// let ptrs = m.alloc_slice(&[items, Value::Ptr(0)]);
/// let back: Vec<Value> = m.read_slice(ptrs, 2)?;
/// let first: Vec<Item> = m.read_slice(back[0], 2)?;
/// assert_eq!(first[1], Item { key: 2, weight: 1.5 });
/// # Ok::<(), augur::Error>(())
/// ```
pub trait Elem: Sized {
    /// The C type (its size is an element's).
    fn ty() -> Type;
    /// Writes `self` at `ptr`.
    fn store(&self, mem: &mut Memory, ptr: Value) -> Result<()>;
    /// Reads a value of this type at `ptr`.
    fn load(mem: &Memory, ptr: Value) -> Result<Self>;
}

impl<T: Pod> Elem for T {
    fn ty() -> Type {
        Type::Scalar(T::SCALAR)
    }
    fn store(&self, mem: &mut Memory, ptr: Value) -> Result<()> {
        mem.store(ptr, self.into_value())
    }
    fn load(mem: &Memory, ptr: Value) -> Result<T> {
        let v = mem.load(ptr, &Type::Scalar(T::SCALAR))?;
        Ok(T::from_value(v).expect("a load gives the requested type"))
    }
}

impl Elem for CChar {
    fn ty() -> Type {
        Type::Scalar(Scalar::Char)
    }
    fn store(&self, mem: &mut Memory, ptr: Value) -> Result<()> {
        mem.store(ptr, Value::Char(self.0))
    }
    fn load(mem: &Memory, ptr: Value) -> Result<CChar> {
        i8::load(mem, ptr).map(CChar)
    }
}

/// A pointer: a [`Value::Ptr`].
impl Elem for Value {
    fn ty() -> Type {
        Type::ptr(Type::Void)
    }
    fn store(&self, mem: &mut Memory, ptr: Value) -> Result<()> {
        match self {
            Value::Ptr(_) => mem.store(ptr, *self),
            v => Err(Error::Interp {
                message: format!(
                    "a Value in memory is a pointer (numbers go in as their Rust types), got {v} \
                     of type {}",
                    v.ty()
                ),
            }),
        }
    }
    fn load(mem: &Memory, ptr: Value) -> Result<Value> {
        mem.load(ptr, &Type::ptr(Type::Void))
    }
}

macro_rules! raw_pointer {
    ($($p:ident),*) => {$(
        /// A pointer into the interpreter's memory: its bits are the
        /// memory's encoding ([`Value::as_ptr`]), not a host address.
        impl<T> Elem for *$p T {
            fn ty() -> Type {
                Type::ptr(Type::Void)
            }
            fn store(&self, mem: &mut Memory, ptr: Value) -> Result<()> {
                mem.store(ptr, Value::Ptr(self.addr() as u64))
            }
            fn load(mem: &Memory, ptr: Value) -> Result<*$p T> {
                let p = Value::load(mem, ptr)?.as_ptr().expect("a pointer load");
                Ok(std::ptr::without_provenance_mut::<T>(p as usize) as *$p T)
            }
        }
    )*};
}
raw_pointer!(mut, const);

impl<T: Elem, const N: usize> Elem for [T; N] {
    fn ty() -> Type {
        Type::array(T::ty(), Some(N as u64))
    }
    fn store(&self, mem: &mut Memory, ptr: Value) -> Result<()> {
        let size = elem_size::<T>();
        for (i, x) in self.iter().enumerate() {
            x.store(mem, offset(ptr, i as u64 * size)?)?;
        }
        Ok(())
    }
    fn load(mem: &Memory, ptr: Value) -> Result<[T; N]> {
        let size = elem_size::<T>();
        let v = (0..N)
            .map(|i| T::load(mem, offset(ptr, i as u64 * size)?))
            .collect::<Result<Vec<T>>>()?;
        Ok(v.try_into().ok().expect("N elements"))
    }
}

/// The size of an element of type `T`.
pub(super) fn elem_size<T: Elem>() -> u64 {
    T::ty().size().expect("an element type has a size")
}

/// `ptr` moved by `bytes`.
fn offset(ptr: Value, bytes: u64) -> Result<Value> {
    let p = ptr.as_ptr().ok_or_else(|| Error::Interp {
        message: format!("expected a pointer, got {ptr}"),
    })?;
    super::memory::ptr_add(p, bytes as i64).map(Value::Ptr)
}

/// Where field `i` of the struct of type `ty` at `ptr` lies: what
/// `#[derive(augur::Staged)]`'s [`Elem`] implementation calls. Not API.
#[doc(hidden)]
pub fn field_at(ty: &Type, ptr: Value, i: usize) -> Result<Value> {
    match ty {
        Type::Struct(s) => offset(ptr, s.offset(i)),
        t => Err(Error::Internal {
            message: format!("field {i} of the non-struct type {t}"),
        }),
    }
}
