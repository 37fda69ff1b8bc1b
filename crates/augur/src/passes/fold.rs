//! Constant folding: integer operations whose operands are both constants
//! (`2147483647 + 5` appears when first-stage values meet: C would
//! evaluate them at compile time in `int`, and `-Werror=overflow` rejects
//! the wrap that the second stage defines), folded with the type's
//! wrapping arithmetic as the interpreter computes them; and the
//! identities of one constant operand that first-stage values leave
//! behind (`false || x`, `0 ^ x`, `x & -1`, `x * 1`, `x << 0`, `!!b`, `true ?
//! a : b`).
//!
//! An identity that drops an operand (`x * 0`, `x && false`) applies only
//! where the operand cannot fail or have an effect ([`harmless`]): C
//! evaluates it, and the interpreter would report a fault in it. Where C
//! would not evaluate it (`false && x`, `true || x`, the side of a select
//! not taken), it goes whatever it is.

use crate::ir::{BinOp, Const, Expr, ExprData, ExprId, Function, Scalar, Type, UnOp};

/// Folds every foldable node.
pub fn run(f: &mut Function) {
    // Operands come before the nodes that use them, so one pass folds a
    // tree from its leaves up.
    for e in 0..f.exprs.len() {
        let e = ExprId(e as u32);
        if let Some(folded) = fold(f, e) {
            f.exprs[e] = folded;
        }
    }
}

/// What node `e` folds to, if it does.
fn fold(f: &Function, e: ExprId) -> Option<ExprData> {
    match f.exprs[e].kind {
        Expr::Binary(op, a, b) => constants(f, e, op, a, b).or_else(|| identity(f, e, op, a, b)),
        Expr::Unary(UnOp::Not, a) => match f.exprs[a].kind {
            Expr::Unary(UnOp::Not, b) => Some(f.exprs[b].clone()),
            _ => None,
        },
        Expr::Select(c, a, b) => match f.exprs[c].kind {
            Expr::Const(Const::Bool(taken)) => {
                let side = if taken { a } else { b };
                (f.exprs[side].ty == f.exprs[e].ty).then(|| f.exprs[side].clone())
            }
            _ => None,
        },
        _ => None,
    }
}

/// `x op y` on integer constants.
fn constants(f: &Function, e: ExprId, op: BinOp, a: ExprId, b: ExprId) -> Option<ExprData> {
    let (Expr::Const(Const::Int(x)), Expr::Const(Const::Int(y))) =
        (&f.exprs[a].kind, &f.exprs[b].kind)
    else {
        return None;
    };
    let s = f.exprs[e].ty.as_scalar().filter(|s| s.is_int())?;
    let v = match op {
        BinOp::Add => x.wrapping_add(*y),
        BinOp::Sub => x.wrapping_sub(*y),
        BinOp::Mul => x.wrapping_mul(*y),
        BinOp::BitAnd => x & y,
        BinOp::BitOr => x | y,
        BinOp::BitXor => x ^ y,
        _ => return None,
    };
    Some(ExprData {
        kind: Expr::Const(Const::Int(wrap(v, s))),
        ty: f.exprs[e].ty,
    })
}

/// A constant operand of an identity: `false`/`true`, or an integer that is
/// zero, one, or has every bit set.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Known {
    False,
    True,
    Zero,
    One,
    AllOnes,
}

fn known(f: &Function, x: ExprId) -> Option<Known> {
    let d = &f.exprs[x];
    match d.kind {
        Expr::Const(Const::Bool(false)) => Some(Known::False),
        Expr::Const(Const::Bool(true)) => Some(Known::True),
        Expr::Const(Const::Int(v)) => {
            let s = d.ty.as_scalar().filter(|s| s.is_int())?;
            match v {
                0 => Some(Known::Zero),
                1 => Some(Known::One),
                v if v == wrap(-1, s) => Some(Known::AllOnes),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `a op b` where one side is a [`Known`] constant that makes the node the
/// other side, or a constant.
fn identity(f: &Function, e: ExprId, op: BinOp, a: ExprId, b: ExprId) -> Option<ExprData> {
    use BinOp::*;
    use Known::*;
    let ty = f.exprs[e].ty;
    let same = |x: ExprId| (f.exprs[x].ty == ty).then(|| f.exprs[x].clone());
    // The node is `k`, dropping `x`, which C evaluates: only if harmless.
    let constant = |k: Const, x: ExprId| {
        harmless(f, x).then_some(ExprData {
            kind: Expr::Const(k),
            ty,
        })
    };
    let all = |x: ExprId| match ty.as_scalar() {
        Some(s) if s.is_int() => constant(Const::Int(wrap(-1, s)), x),
        _ => None,
    };
    let lhs = known(f, a);
    let rhs = known(f, b);
    match (op, lhs, rhs) {
        // C does not evaluate the right side here.
        (Or, Some(True), _) => Some(f.exprs[a].clone()),
        (And, Some(False), _) => Some(f.exprs[a].clone()),
        (Or | BitOr | BitXor, Some(False), _) | (And | BitAnd, Some(True), _) => same(b),
        (Or | BitOr | BitXor, _, Some(False)) | (And | BitAnd, _, Some(True)) => same(a),
        (Or | BitOr, _, Some(True)) => constant(Const::Bool(true), a),
        (BitOr, Some(True), _) => constant(Const::Bool(true), b),
        (And | BitAnd, _, Some(False)) => constant(Const::Bool(false), a),
        (BitAnd, Some(False), _) => constant(Const::Bool(false), b),
        (BitOr | BitXor | Add, Some(Zero), _)
        | (BitAnd, Some(AllOnes), _)
        | (Mul, Some(One), _) => same(b),
        (BitOr | BitXor | Add | Sub | Shl | Shr, _, Some(Zero))
        | (BitAnd, _, Some(AllOnes))
        | (Mul | Div, _, Some(One)) => same(a),
        (BitAnd | Mul, Some(Zero), _) => constant(Const::Int(0), b),
        (BitAnd | Mul, _, Some(Zero)) => constant(Const::Int(0), a),
        (BitOr, Some(AllOnes), _) => all(b),
        (BitOr, _, Some(AllOnes)) => all(a),
        _ => None,
    }
}

/// True if evaluating `x` can neither fail nor have an effect: variables,
/// constants and the operators on them that cannot trap (no loads, calls,
/// divisions, shifts, casts or pointer arithmetic, which the interpreter
/// checks).
fn harmless(f: &Function, x: ExprId) -> bool {
    let d = &f.exprs[x];
    let scalar = !matches!(d.ty, Type::Ptr { .. });
    match d.kind {
        Expr::Var(_) | Expr::Const(_) | Expr::FuncAddr(_) => true,
        Expr::Unary(_, a) => scalar && harmless(f, a),
        Expr::Binary(op, a, b) => {
            let traps = matches!(op, BinOp::Div | BinOp::Rem | BinOp::Shl | BinOp::Shr);
            let operands = !matches!(f.exprs[a].ty, Type::Ptr { .. });
            scalar && operands && !traps && harmless(f, a) && harmless(f, b)
        }
        Expr::Select(c, a, b) => harmless(f, c) && harmless(f, a) && harmless(f, b),
        _ => false,
    }
}

/// `v` reduced to the width of `s`, sign- or zero-extended back to 64 bits.
fn wrap(v: i64, s: Scalar) -> i64 {
    let bits = s.size() * 8;
    if bits == 64 {
        return v;
    }
    let shift = 64 - bits;
    if s.is_signed() {
        (v << shift) >> shift
    } else {
        ((v as u64) << shift >> shift) as i64
    }
}
