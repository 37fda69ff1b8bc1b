//! Constant folding of integer operations whose operands are both
//! constants (`2147483647 + 5` appears when first-stage values meet):
//! C would evaluate them at compile time in `int` and `-Werror=overflow`
//! rejects the wrap that the second stage defines. Folded with the type's
//! wrapping arithmetic, as the interpreter computes them.

use crate::ir::{BinOp, Const, Expr, ExprId, Function, Scalar};

/// Folds every foldable node.
pub fn run(f: &mut Function) {
    for e in 0..f.exprs.len() {
        fold(f, ExprId(e as u32));
    }
}

fn fold(f: &mut Function, e: ExprId) {
    let Expr::Binary(op, a, b) = f.exprs[e].kind else {
        return;
    };
    let (Expr::Const(Const::Int(x)), Expr::Const(Const::Int(y))) =
        (&f.exprs[a].kind, &f.exprs[b].kind)
    else {
        return;
    };
    let Some(s) = f.exprs[e].ty.as_scalar().filter(|s| s.is_int()) else {
        return;
    };
    let v = match op {
        BinOp::Add => x.wrapping_add(*y),
        BinOp::Sub => x.wrapping_sub(*y),
        BinOp::Mul => x.wrapping_mul(*y),
        BinOp::BitAnd => x & y,
        BinOp::BitOr => x | y,
        BinOp::BitXor => x ^ y,
        _ => return,
    };
    f.exprs[e].kind = Expr::Const(Const::Int(wrap(v, s)));
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
