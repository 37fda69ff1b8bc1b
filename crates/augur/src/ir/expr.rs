//! Expressions: pure trees in an arena, each node typed.

use super::entity::entity;
use super::{FuncId, Intrinsic, Type, VarId};
use std::fmt::{self, Write};

entity!(
    /// Handle of an expression in [`Function::exprs`](super::Function::exprs).
    ExprId,
    "e"
);

/// A constant. Its type is the [`ExprData::ty`] of the node holding it.
#[derive(Clone, Debug)]
pub enum Const {
    /// Any integer type, stored as the two's-complement bits of the value
    /// sign- or zero-extended to 64 bits according to the type.
    Int(i64),
    /// An `f32` value.
    F32(f32),
    /// An `f64` value.
    F64(f64),
    /// A `bool`.
    Bool(bool),
    /// A string literal, of type `*const char`.
    Str(String),
    /// The null pointer.
    Null,
}

impl PartialEq for Const {
    /// Bitwise for floats, so that `NaN == NaN` and `0.0 != -0.0` (constants are
    /// compared as code, not as numbers).
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Const::Int(a), Const::Int(b)) => a == b,
            (Const::F32(a), Const::F32(b)) => a.to_bits() == b.to_bits(),
            (Const::F64(a), Const::F64(b)) => a.to_bits() == b.to_bits(),
            (Const::Bool(a), Const::Bool(b)) => a == b,
            (Const::Str(a), Const::Str(b)) => a == b,
            (Const::Null, Const::Null) => true,
            _ => false,
        }
    }
}
impl Eq for Const {}

impl std::hash::Hash for Const {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        std::mem::discriminant(self).hash(h);
        match self {
            Const::Int(v) => v.hash(h),
            Const::F32(v) => v.to_bits().hash(h),
            Const::F64(v) => v.to_bits().hash(h),
            Const::Bool(v) => v.hash(h),
            Const::Str(s) => s.hash(h),
            Const::Null => {}
        }
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Arithmetic negation `-x`.
    Neg,
    /// Bitwise complement `~x` on integers.
    BitNot,
    /// Logical not `!b` on `bool`.
    Not,
}

/// Binary operators. Comparisons yield `bool`; the rest yield the operand type
/// (pointer `Add`/`Sub` take an integer on the right).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `a + b` (pointer + integer: element offset).
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b` (truncating for integers).
    Div,
    /// `a % b`.
    Rem,
    /// `a & b`.
    BitAnd,
    /// `a | b`.
    BitOr,
    /// `a ^ b`.
    BitXor,
    /// `a << b`.
    Shl,
    /// `a >> b` (arithmetic for signed types).
    Shr,
    /// Logical and on `bool` (C `&&`; operands have no side effects).
    And,
    /// Logical or on `bool` (C `||`).
    Or,
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
}

impl BinOp {
    /// True for the six comparisons.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }

    /// The C (and IR text) symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
        }
    }

    /// The comparison with swapped truth (`<` ↔ `>=`), for negating integer conditions.
    pub fn negated_comparison(self) -> Option<BinOp> {
        Some(match self {
            BinOp::Eq => BinOp::Ne,
            BinOp::Ne => BinOp::Eq,
            BinOp::Lt => BinOp::Ge,
            BinOp::Le => BinOp::Gt,
            BinOp::Gt => BinOp::Le,
            BinOp::Ge => BinOp::Lt,
            _ => return None,
        })
    }
}

impl fmt::Display for BinOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// An expression node.
///
/// Expressions have no side effects except [`Expr::Call`] and
/// [`Expr::Intrinsic`], which only appear as the whole value of a statement (`Decl` init, `Assign` value,
/// `Eval`), where the copy-elimination pass proved that moving them keeps
/// the order of effects, or (a bounds check) as the index they check. Reads of memory ([`Expr::Index`], [`Expr::Deref`]) are pure but
/// depend on every earlier write to memory.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// The current value of a variable (a place).
    Var(VarId),
    /// A constant.
    Const(Const),
    /// `op x`.
    Unary(UnOp, ExprId),
    /// `a op b`.
    Binary(BinOp, ExprId, ExprId),
    /// `(ty) x`: numeric conversion (Rust `as` semantics for in-range values),
    /// pointer-to-pointer and pointer/integer casts.
    Cast(ExprId),
    /// `base[index]`: `base` is a pointer or an array (a place).
    Index(ExprId, ExprId),
    /// `*ptr` (a place).
    Deref(ExprId),
    /// `&place`.
    AddrOf(ExprId),
    /// A call of an extern function; of an [`indirect`](super::ExternDecl::indirect)
    /// one, a call through the function pointer that is the first argument.
    Call(FuncId, Vec<ExprId>),
    /// The address of extern function `f` (a [`Type::FnPtr`](super::Type::FnPtr)
    /// value; in C the function's name).
    FuncAddr(FuncId),
    /// An operation of the IR's own, applied to its operands (see
    /// [`Intrinsic`]: barriers, shared memory, atomics, bounds checks).
    Intrinsic(Intrinsic, Vec<ExprId>),
    /// `c ? a : b`.
    Select(ExprId, ExprId, ExprId),
    /// Field `i` of the struct `base` (a place when `base` is one; C
    /// `base.name`, or `p->name` when `base` is `*p`).
    Field(ExprId, u32),
}

/// An expression with its type.
#[derive(Clone, Debug, PartialEq)]
pub struct ExprData {
    /// The node.
    pub kind: Expr,
    /// Its type (for `Cast`, the target type).
    pub ty: Type,
}

/// C operator precedence levels (higher binds tighter).
pub(crate) fn binop_prec(op: BinOp) -> u8 {
    match op {
        BinOp::Mul | BinOp::Div | BinOp::Rem => 13,
        BinOp::Add | BinOp::Sub => 12,
        BinOp::Shl | BinOp::Shr => 11,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 10,
        BinOp::Eq | BinOp::Ne => 9,
        BinOp::BitAnd => 8,
        BinOp::BitXor => 7,
        BinOp::BitOr => 6,
        BinOp::And => 5,
        BinOp::Or => 4,
    }
}

/// Prints `s` as a C string literal (escapes, octal for other bytes, no
/// trigraphs): the IR's text form and the C writer alike.
pub(crate) fn write_c_string(out: &mut dyn Write, s: &str) -> fmt::Result {
    out.write_char('"')?;
    let mut prev = 0u8;
    for b in s.bytes() {
        match b {
            // `??` starts a trigraph in C99 (`"??!"` would read as `"|"`).
            b'?' if prev == b'?' => out.write_str("\\?")?,
            b'"' => out.write_str("\\\"")?,
            b'\\' => out.write_str("\\\\")?,
            b'\n' => out.write_str("\\n")?,
            b'\t' => out.write_str("\\t")?,
            b'\r' => out.write_str("\\r")?,
            0x20..=0x7e => out.write_char(b as char)?,
            _ => write!(out, "\\{b:03o}")?,
        }
        prev = b;
    }
    out.write_char('"')
}
