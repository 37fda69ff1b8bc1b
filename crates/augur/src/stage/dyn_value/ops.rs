//! Operators on `DynValue`s: each dispatches on the operands' types at the
//! first stage, then applies the typed `Dyn<T>` operator, so the code is
//! typed code's.

use super::TypeError;
use super::{fail, lead, operand, this, DynOperand, DynScalar, DynValue, Rhs, ScalarType, Side};
use crate::stage::ctype::{CInt, CNum, CSigned};
use crate::stage::dyn_val::Dyn;
use crate::stage::CBits;
use std::ops::*;

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

impl Bin {
    fn symbol(self) -> &'static str {
        match self {
            Bin::Add => "+",
            Bin::Sub => "-",
            Bin::Mul => "*",
            Bin::Div => "/",
            Bin::Rem => "%",
            Bin::And => "&",
            Bin::Or => "|",
            Bin::Xor => "^",
            Bin::Shl => "<<",
            Bin::Shr => ">>",
        }
    }

    /// The symbol of the compound assignment.
    fn assign_symbol(self) -> &'static str {
        match self {
            Bin::Add => "+=",
            Bin::Sub => "-=",
            Bin::Mul => "*=",
            Bin::Div => "/=",
            Bin::Rem => "%=",
            Bin::And => "&=",
            Bin::Or => "|=",
            Bin::Xor => "^=",
            Bin::Shl => "<<=",
            Bin::Shr => ">>=",
        }
    }
}

/// Numeric types with every arithmetic operator, a literal on either side.
trait Num:
    CNum
    + DynScalar
    + Add<Dyn<Self>, Output = Dyn<Self>>
    + Sub<Dyn<Self>, Output = Dyn<Self>>
    + Mul<Dyn<Self>, Output = Dyn<Self>>
    + Div<Dyn<Self>, Output = Dyn<Self>>
    + Rem<Dyn<Self>, Output = Dyn<Self>>
{
}
impl<T> Num for T where
    T: CNum
        + DynScalar
        + Add<Dyn<T>, Output = Dyn<T>>
        + Sub<Dyn<T>, Output = Dyn<T>>
        + Mul<Dyn<T>, Output = Dyn<T>>
        + Div<Dyn<T>, Output = Dyn<T>>
        + Rem<Dyn<T>, Output = Dyn<T>>
{
}

/// Integer types with the bit operators, a literal on either side.
trait Int:
    Num
    + CInt
    + BitAnd<Dyn<Self>, Output = Dyn<Self>>
    + BitOr<Dyn<Self>, Output = Dyn<Self>>
    + BitXor<Dyn<Self>, Output = Dyn<Self>>
{
}
impl<T> Int for T where
    T: Num
        + CInt
        + BitAnd<Dyn<T>, Output = Dyn<T>>
        + BitOr<Dyn<T>, Output = Dyn<T>>
        + BitXor<Dyn<T>, Output = Dyn<T>>
{
}

/// `a op b` on typed operands, as typed code writes it. Two literals
/// (never both: one side is a `DynValue`) would be a constant value first.
macro_rules! apply {
    ($a:expr, $b:expr, $o:tt) => {
        match ($a, $b) {
            (Side::Dyn(a), Side::Dyn(b)) => a $o b,
            (Side::Dyn(a), Side::Lit(b)) => a $o b,
            (Side::Lit(a), Side::Dyn(b)) => a $o b,
            (Side::Lit(a), Side::Lit(b)) => Dyn::lit(a) $o b,
        }
    };
}

#[track_caller]
fn arith<T: Num>(op: Bin, a: Side<T>, b: Side<T>) -> Dyn<T> {
    match op {
        Bin::Add => apply!(a, b, +),
        Bin::Sub => apply!(a, b, -),
        Bin::Mul => apply!(a, b, *),
        Bin::Div => apply!(a, b, /),
        Bin::Rem => apply!(a, b, %),
        _ => unreachable!("not arithmetic: {op:?}"),
    }
}

#[track_caller]
fn bits<T: Int>(op: Bin, a: Side<T>, b: Side<T>) -> Dyn<T> {
    match op {
        Bin::And => apply!(a, b, &),
        Bin::Or => apply!(a, b, |),
        Bin::Xor => apply!(a, b, ^),
        _ => unreachable!("not a bit operator: {op:?}"),
    }
}

/// `&`, `|`, `^` on `bool`: typed code takes no `bool` literal on the
/// left, and each is commutative, so a literal goes to the right.
#[track_caller]
fn logic(op: Bin, a: Side<bool>, b: Side<bool>) -> Dyn<bool> {
    let (a, b) = match (a, b) {
        (Side::Lit(a), Side::Dyn(b)) => (b, Side::Lit(a)),
        (Side::Dyn(a), b) => (a, b),
        (Side::Lit(a), b) => (Dyn::lit(a), b),
    };
    match (op, b) {
        (Bin::And, Side::Dyn(b)) => a & b,
        (Bin::And, Side::Lit(b)) => a & b,
        (Bin::Or, Side::Dyn(b)) => a | b,
        (Bin::Or, Side::Lit(b)) => a | b,
        (Bin::Xor, Side::Dyn(b)) => a ^ b,
        (Bin::Xor, Side::Lit(b)) => a ^ b,
        _ => unreachable!("not a logical operator: {op:?}"),
    }
}

#[track_caller]
fn shift<T, U>(op: Bin, x: Side<T>, c: Side<U>) -> Dyn<T>
where
    T: Int + Shl<Dyn<U>, Output = Dyn<T>> + Shr<Dyn<U>, Output = Dyn<T>>,
    U: CInt,
{
    match op {
        Bin::Shl => apply!(x, c, <<),
        Bin::Shr => apply!(x, c, >>),
        _ => unreachable!("not a shift: {op:?}"),
    }
}

/// `op` is not defined on `ty`.
#[track_caller]
fn unsupported(op: &'static str, ty: ScalarType, takes: &'static str) -> ! {
    fail(TypeError::Unsupported { op, ty, takes })
}

/// `a op b`: the type is the first value's, which a literal takes.
#[track_caller]
fn binary(op: Bin, a: Rhs, b: Rhs) -> DynValue {
    let s = op.symbol();
    let ty = lead(a, b);
    match op {
        Bin::Add | Bin::Sub | Bin::Mul | Bin::Div => num_type!(ty, T => DynValue::from(
            arith::<T>(op, operand::<T>(s, a, a, b), operand::<T>(s, b, a, b))
        ), t => unsupported(s, t, "numbers")),
        Bin::Rem => int_type!(ty, T => DynValue::from(
            arith::<T>(op, operand::<T>(s, a, a, b), operand::<T>(s, b, a, b))
        ), t => unsupported(s, t, "integers (for floats: `augur::math::fmod`)")),
        Bin::And | Bin::Or | Bin::Xor => match ty {
            ScalarType::Bool => DynValue::from(logic(
                op,
                operand::<bool>(s, a, a, b),
                operand::<bool>(s, b, a, b),
            )),
            _ => int_type!(ty, T => DynValue::from(
                bits::<T>(op, operand::<T>(s, a, a, b), operand::<T>(s, b, a, b))
            ), t => unsupported(s, t, "integers and bool")),
        },
        Bin::Shl | Bin::Shr => shifted(op, a, b),
    }
}

/// `x << c`, `x >> c`: `x` an integer, `c` an integer of any type. A
/// literal `x` keeps its own Rust type, as in typed code (`1u64 << k`).
#[track_caller]
fn shifted(op: Bin, x: Rhs, c: Rhs) -> DynValue {
    let s = op.symbol();
    let takes = "an integer shifted by an integer";
    // Each operand resolves to its own type, so neither can fail.
    int_type!(x.ty(), T => {
        let value = operand::<T>(s, x, x, c);
        int_type!(c.ty(), U => DynValue::from(shift::<T, U>(op, value, operand::<U>(s, c, x, c))),
            u => unsupported(s, u, takes))
    }, t => unsupported(s, t, takes))
}

/// `v op= r` on the variable (or memory) `v` names.
#[track_caller]
fn assign(op: Bin, v: DynValue, r: Rhs) {
    let s = op.assign_symbol();
    let me = Rhs::Value(v);
    match op {
        Bin::Add | Bin::Sub | Bin::Mul | Bin::Div | Bin::Rem => {
            let takes = if op == Bin::Rem {
                "integers"
            } else {
                "numbers"
            };
            if op == Bin::Rem && v.ty().is_float() {
                unsupported(s, v.ty(), "integers (for floats: `augur::math::fmod`)");
            }
            num_type!(v.ty(), T => {
                let mut x = this::<T>(v);
                let y = operand::<T>(s, r, me, r);
                match op {
                    Bin::Add => x += y,
                    Bin::Sub => x -= y,
                    Bin::Mul => x *= y,
                    Bin::Div => x /= y,
                    _ => x %= y,
                }
            }, t => unsupported(s, t, takes))
        }
        Bin::And | Bin::Or | Bin::Xor => match v {
            DynValue::Bool(x) => bits_assign(op, x, operand::<bool>(s, r, me, r)),
            _ => int_type!(v.ty(), T => bits_assign(op, this::<T>(v), operand::<T>(s, r, me, r)),
                t => unsupported(s, t, "integers and bool")),
        },
        Bin::Shl | Bin::Shr => {
            let takes = "an integer shifted by an integer";
            int_type!(v.ty(), T => {
                let mut x = this::<T>(v);
                int_type!(r.ty(), U => match (op, operand::<U>(s, r, me, r)) {
                    (Bin::Shl, Side::Dyn(c)) => x <<= c,
                    (Bin::Shl, Side::Lit(c)) => x <<= c,
                    (_, Side::Dyn(c)) => x >>= c,
                    (_, Side::Lit(c)) => x >>= c,
                }, u => unsupported(s, u, takes))
            }, t => unsupported(s, t, takes))
        }
    }
}

#[track_caller]
fn bits_assign<T: CBits>(op: Bin, mut x: Dyn<T>, y: Side<T>) {
    match op {
        Bin::And => x &= y,
        Bin::Or => x |= y,
        _ => x ^= y,
    }
}

macro_rules! operators {
    ($($trait:ident $method:ident $assign_trait:ident $assign:ident => $op:ident),* $(,)?) => {$(
        impl<R: DynOperand> $trait<R> for DynValue {
            type Output = DynValue;
            /// Dispatches on both types (see [type rules](DynValue#type-rules)).
            #[track_caller]
            fn $method(self, rhs: R) -> DynValue {
                binary(Bin::$op, Rhs::Value(self), rhs.operand())
            }
        }
        impl<R: DynOperand> $assign_trait<R> for DynValue {
            /// Assigns `self op rhs` to the variable (or memory) `self` names.
            #[track_caller]
            fn $assign(&mut self, rhs: R) {
                assign(Bin::$op, *self, rhs.operand())
            }
        }
    )*};
}

operators! {
    Add add AddAssign add_assign => Add,
    Sub sub SubAssign sub_assign => Sub,
    Mul mul MulAssign mul_assign => Mul,
    Div div DivAssign div_assign => Div,
    Rem rem RemAssign rem_assign => Rem,
    BitAnd bitand BitAndAssign bitand_assign => And,
    BitOr bitor BitOrAssign bitor_assign => Or,
    BitXor bitxor BitXorAssign bitxor_assign => Xor,
    Shl shl ShlAssign shl_assign => Shl,
    Shr shr ShrAssign shr_assign => Shr,
}

/// A literal on the left: `2 * v`, `1.0 - v`, `1u64 << v`.
macro_rules! literal_left {
    ($($t:ty),*) => {$(
        literal_left!(@ops $t: Add add Add, Sub sub Sub, Mul mul Mul, Div div Div, Rem rem Rem,
            BitAnd bitand And, BitOr bitor Or, BitXor bitxor Xor, Shl shl Shl, Shr shr Shr);
    )*};
    (@ops $t:ty: $($trait:ident $method:ident $op:ident),*) => {$(
        impl $trait<DynValue> for $t {
            type Output = DynValue;
            /// The literal takes the value's type (see [literals](DynValue#literals)).
            #[track_caller]
            fn $method(self, rhs: DynValue) -> DynValue {
                binary(Bin::$op, Rhs::Lit(DynScalar::lit(self)), Rhs::Value(rhs))
            }
        }
    )*};
}
literal_left!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

#[track_caller]
fn negate<T: CSigned>(x: Dyn<T>) -> Dyn<T> {
    -x
}

impl Neg for DynValue {
    type Output = DynValue;
    /// `-x` on the signed integers and the floats.
    #[track_caller]
    fn neg(self) -> DynValue {
        on_type!(self.ty(); I8 i8, I16 i16, I32 i32, I64 i64, F32 f32, F64 f64;
            T => DynValue::from(negate(this::<T>(self)));
            t => unsupported("-", t, "signed integers and floats"))
    }
}

#[track_caller]
fn invert<T: CBits>(x: Dyn<T>) -> Dyn<T> {
    !x
}

impl Not for DynValue {
    type Output = DynValue;
    /// `!b` on `bool`, `~x` on the integers.
    #[track_caller]
    fn not(self) -> DynValue {
        on_type!(self.ty(); Bool bool, I8 i8, I16 i16, I32 i32, I64 i64, U8 u8, U16 u16,
            U32 u32, U64 u64;
            T => DynValue::from(invert(this::<T>(self)));
            t => unsupported("!", t, "integers and bool"))
    }
}

/// A comparison.
#[derive(Clone, Copy)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[track_caller]
fn compare<T: DynScalar>(op: Cmp, a: Dyn<T>, b: Side<T>) -> Dyn<bool> {
    match op {
        Cmp::Eq => a.eq(b),
        Cmp::Ne => a.ne(b),
        Cmp::Lt => a.lt(b),
        Cmp::Le => a.le(b),
        Cmp::Gt => a.gt(b),
        Cmp::Ge => a.ge(b),
    }
}

impl DynValue {
    #[track_caller]
    fn compare(self, name: &'static str, op: Cmp, rhs: Rhs) -> DynValue {
        let me = Rhs::Value(self);
        any_type!(self.ty(), T => DynValue::from(
            compare::<T>(op, this::<T>(self), operand::<T>(name, rhs, me, rhs))
        ))
    }
}

/// Comparisons are methods because Rust's comparison traits must return
/// `bool`. Each gives a `bool` value, of two operands of one type (a
/// literal takes the value's type).
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::{Builder, Dyn, DynValue};
///     let f = Builder::new().extract("between", |x: Dyn<u16>| {
///         let x = DynValue::from(x);
///         (x.ge(10) & x.lt(20)).expect::<bool>()
///     })?;
///     assert_eq!(f.interpret(&[12u16.into()])?, true.into());
///     assert_eq!(f.interpret(&[20u16.into()])?, false.into());
///     Ok(())
/// }
/// ```
#[allow(clippy::should_implement_trait)]
impl DynValue {
    /// `self == rhs`.
    #[track_caller]
    pub fn eq(self, rhs: impl DynOperand) -> DynValue {
        self.compare("eq", Cmp::Eq, rhs.operand())
    }
    /// `self != rhs`.
    #[track_caller]
    pub fn ne(self, rhs: impl DynOperand) -> DynValue {
        self.compare("ne", Cmp::Ne, rhs.operand())
    }
    /// `self < rhs`.
    #[track_caller]
    pub fn lt(self, rhs: impl DynOperand) -> DynValue {
        self.compare("lt", Cmp::Lt, rhs.operand())
    }
    /// `self <= rhs`.
    #[track_caller]
    pub fn le(self, rhs: impl DynOperand) -> DynValue {
        self.compare("le", Cmp::Le, rhs.operand())
    }
    /// `self > rhs`.
    #[track_caller]
    pub fn gt(self, rhs: impl DynOperand) -> DynValue {
        self.compare("gt", Cmp::Gt, rhs.operand())
    }
    /// `self >= rhs`.
    #[track_caller]
    pub fn ge(self, rhs: impl DynOperand) -> DynValue {
        self.compare("ge", Cmp::Ge, rhs.operand())
    }

    /// `self && rhs` on `bool` values: [`Dyn::and`].
    #[track_caller]
    pub fn and(self, rhs: impl DynOperand) -> DynValue {
        self.logical("and", rhs.operand(), true)
    }

    /// `self || rhs` on `bool` values: [`Dyn::or`].
    #[track_caller]
    pub fn or(self, rhs: impl DynOperand) -> DynValue {
        self.logical("or", rhs.operand(), false)
    }

    #[track_caller]
    fn logical(self, name: &'static str, rhs: Rhs, and: bool) -> DynValue {
        let me = Rhs::Value(self);
        match self {
            DynValue::Bool(a) => {
                let b = operand::<bool>(name, rhs, me, rhs);
                DynValue::Bool(if and { a.and(b) } else { a.or(b) })
            }
            other => unsupported(name, other.ty(), "bool"),
        }
    }
}
